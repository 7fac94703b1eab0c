// CTA layer: moving words between global arrays, each thread with several loads in flight.
#pragma once
#include <stdint.h>

namespace mergepath {

// Moves `units` words of W into `output`, U a thread at a time: each thread asks
// `where(u, from, to)` for U units (NT apart), loads those it says to move (from the address
// `from`), then stores them at output[to], so U loads are in flight per thread rather than one
// load and its store at a time.
template <int NT, int U, class W, class Where>
__device__ __forceinline__ void cta_move_words_from(int units, W* output, Where where) {
  for (int first = (int)threadIdx.x; first < units; first += NT * U) {
    W value[U];
    uint64_t to[U];
    bool moves[U];
#pragma unroll
    for (int i = 0; i < U; ++i) {
      const int u = first + i * NT;
      const W* from = nullptr;
      moves[i] = u < units && where(u, from, to[i]);
      if (moves[i]) value[i] = *from;
    }
#pragma unroll
    for (int i = 0; i < U; ++i)
      if (moves[i]) output[to[i]] = value[i];
  }
}

// cta_move_words_from with one source: `where(u, from, to)` gives the index in `input`.
template <int NT, int U, class W, class Where>
__device__ __forceinline__ void cta_move_words(int units, const W* input, W* output, Where where) {
  cta_move_words_from<NT, U>(units, output, [&](int u, const W*& from, uint64_t& to) {
    uint64_t index = 0;
    const bool moves = where(u, index, to);
    from = input + (moves ? index : 0);
    return moves;
  });
}

}  // namespace mergepath

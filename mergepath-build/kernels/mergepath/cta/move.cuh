// CTA layer: moving words between global arrays, each thread with several loads in flight.
#pragma once
#include <stdint.h>

namespace mergepath {

// Moves `units` words of W from `input` to `output`, U a thread at a time: each thread asks
// `where(u, from, to)` for U units (NT apart), loads those it says to move, then stores them,
// so U loads are in flight per thread rather than one load and its store at a time.
template <int NT, int U, class W, class Where>
__device__ __forceinline__ void cta_move_words(int units, const W* input, W* output, Where where) {
  for (int first = (int)threadIdx.x; first < units; first += NT * U) {
    W value[U];
    uint64_t to[U];
    bool moves[U];
#pragma unroll
    for (int i = 0; i < U; ++i) {
      const int u = first + i * NT;
      uint64_t from = 0;
      moves[i] = u < units && where(u, from, to[i]);
      if (moves[i]) value[i] = input[from];
    }
#pragma unroll
    for (int i = 0; i < U; ++i)
      if (moves[i]) output[to[i]] = value[i];
  }
}

}  // namespace mergepath

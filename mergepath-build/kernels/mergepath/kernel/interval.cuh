// Kernel layer: interval move, gather and scatter (Modern GPU's), on the load-balancing
// search's tiles. The intervals' items, concatenated, are the search's `count` items: interval
// s holds items starts[s] .. starts[s + 1] (the last up to count), and its item of rank r moves
// from input[sources[s] + r] to output[destinations[s] + r]. Gather has no destinations (item
// j goes to output[j]), scatter no sources (item j comes from input[j]).
#pragma once
#include "load_balancing.cuh"

namespace mergepath {

// Where a tile's items move, values of `words` words of W: from `input` (input_len values)
// at sources[s] + r, or at the item's own index j for a kernel without sources; to `output`
// (output_len values) at destinations[s] + r, or at j for a kernel without destinations.
template <class I, class W>
struct interval_moves {
  const I* sources;
  const I* destinations;
  const W* input;
  int64_t input_len;
  W* output;
  int64_t output_len;
  int words;
};

// The items whose values a lane of an interval tile has in flight at once: half of its VT for
// words of up to 8 bytes, a quarter for wider ones. Each holds a 64-bit address until its load
// is issued: all VT took the tile past 32 registers (48 at 128 x 9, 10 CTAs an SM against 16),
// which cost more than the loads in flight gained (BENCHMARKS.md).
template <int VT, class W>
constexpr int INTERVAL_MOVES_IN_FLIGHT = sizeof(W) <= 8 ? (VT + 1) / 2 : (VT + 3) / 4;

// What an interval tile keeps at the first item p of a run of its items in one segment: the
// run's first `moves` items move (item k of the tile when k - p < moves), from delta[0] + k
// and to delta[N - 1] + k (I's arithmetic) on the sides that have arrays (N of them).
template <class I, int N>
struct interval_run {
  uint32_t moves;
  I delta[N];
};

// A segment's source and destination (those of them with arrays).
template <class I, int N>
struct interval_bases {
  I at[N];
};

// The run of a segment starting at item `start` whose items in the tile are p .. end - 1
// (tile items from `first`, the tile's first): for each side with an array, its positions
// base + rank (base the segment's source or destination) must be below that side's `limit`;
// items before `start` do not move.
template <class I, int N>
__device__ __forceinline__ interval_run<I, N> interval_run_of(int p, int end, int64_t first, I start, const I (&base)[N],
                                                              const I (&limit)[N]) {
  interval_run<I, N> run{0, {}};
  const uint64_t j = (uint64_t)(first + p);  // the run's first item
  if (j < (uint64_t)start) return run;
  const uint64_t rank = j - (uint64_t)start;
  uint64_t moves = (uint64_t)(end - p);
#pragma unroll
  for (int c = 0; c < N; ++c) {
    // Positions below the limit: ranks below room.
    const uint64_t room = base[c] < limit[c] ? (uint64_t)(limit[c] - base[c]) : 0;
    moves = min(moves, room > rank ? room - rank : 0);
    run.delta[c] = (I)(base[c] + (I)rank - (I)p);
  }
  run.moves = (uint32_t)moves;
  return run;
}

// Output tile blockIdx.x of the load-balancing merge: each of the tile's items moved. `Sources`
// and `Destinations` say which of m's index arrays the kernel reads (gather: sources, scatter:
// destinations, move: both); `OneWord` that values are of one word (m.words 1), else of
// several (compiled apart: their loop's registers). Each run of the tile's items in one segment
// is marked at its first item (load_balancing_tile_marked), which keeps the run's moves there
// (interval_run); each warp then takes its items 32 at a time, each lane finding its item's run
// from the marks (load_balancing_item_marks), and loads its items' values, several in flight,
// before it stores them: an item's source or destination is its run's delta plus the item
// (BENCHMARKS.md).
// Device sources, destinations and starts are not checked: a move whose source or destination
// falls outside its array, or at or past I's largest value, is skipped (as is an item before
// its segment's start, on bad starts), so bad arguments write some values in bounds and never
// read or write out of them.
template <int NT, int VT, bool Sources, bool Destinations, bool OneWord, class I, class W>
__device__ __forceinline__ void interval_move_tile(const I* starts, int64_t segments, int64_t count,
                                                   const int64_t* partitions, const interval_moves<I, W>& m) {
  constexpr int NV = NT * VT, N = (int)Sources + (int)Destinations, ONE_WORD_ITEMS = INTERVAL_MOVES_IN_FLIGHT<VT, W>;
  static_assert(Sources || Destinations, "a gather, a scatter or a move");
  __shared__ interval_run<I, N> runs[NV];
  __shared__ load_balancing_marks<NT, VT> marks;
  // Positions below these are in their arrays and below I's largest value.
  const auto limit = [](int64_t len) { return (uint64_t)len < (uint64_t)~(I)0 ? (I)len : ~(I)0; };
  I limits[N];
  if constexpr (Sources) limits[0] = limit(m.input_len);
  if constexpr (Destinations) limits[N - 1] = limit(m.output_len);
  const auto bases = [&](int64_t s) {  // segment s's source and destination, loaded with its start
    interval_bases<I, N> base;
    if constexpr (Sources) base.at[0] = m.sources[s];
    if constexpr (Destinations) base.at[N - 1] = m.destinations[s];
    return base;
  };
  const merge_range r = load_balancing_tile_marked<NT, VT>(starts, segments, count, partitions, marks, bases,
                                                           [&](int64_t first, int p, int end, I start, const interval_bases<I, N>& base) {
                                                             runs[p] = interval_run_of<I, N>(p, end, first, start, base.at, limits);
                                                           });
  load_balancing_item_marks<NT, VT> cursor(marks);
  // Values of one word with several of a lane's items in flight; values of several words an
  // item at a time, 2 words in flight (a run-time word count over all of a lane's items held
  // registers for its loop: 64 against 40 at 128 x 9, a third fewer CTAs an SM).
  constexpr int G = OneWord ? ONE_WORD_ITEMS : 1, C = OneWord ? 1 : 2;  // items, and words of each, in flight
  const int words = OneWord ? 1 : m.words;
  // The side without an array moves the item's own index: from the lane's item 0, 32 more a step.
  const uint64_t own = (uint64_t)(r.b_begin + cursor.item(0)) * words;
  const W* own_input = m.input + own;
  W* own_output = m.output + own;
  for (int first_item = 0; first_item < VT; first_item += G) {
    I from[G], to[G];  // on the sides with arrays
    unsigned moves = 0;
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int i = first_item + g;
      if (i >= VT) break;
      const int p = cursor.mark(i), k = cursor.item(i);  // every lane: the cursor shuffles
      const interval_run<I, N> run = runs[p];
      if constexpr (Sources) from[g] = run.delta[0] + (I)k;
      if constexpr (Destinations) to[g] = run.delta[N - 1] + (I)k;
      if ((unsigned)(k - p) < run.moves) moves |= 1u << g;
    }
    for (int first_word = 0; first_word < words; first_word += C) {
      W value[G][C];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const W* in = Sources ? m.input + (uint64_t)from[g] * words : own_input + WARP_THREADS * (first_item + g) * words;
#pragma unroll
        for (int c = 0; c < C; ++c)
          if ((moves >> g & 1) && first_word + c < words) value[g][c] = in[first_word + c];
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        W* out = Destinations ? m.output + (uint64_t)to[g] * words : own_output + WARP_THREADS * (first_item + g) * words;
#pragma unroll
        for (int c = 0; c < C; ++c)
          if ((moves >> g & 1) && first_word + c < words) out[first_word + c] = value[g][c];
      }
    }
  }
}

}  // namespace mergepath

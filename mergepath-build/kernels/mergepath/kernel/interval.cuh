// Kernel layer: interval move, gather and scatter (Modern GPU's), on the load-balancing
// search's tiles. The intervals' items, concatenated, are the search's `count` items: interval
// s holds items starts[s] .. starts[s + 1] (the last up to count), and its item of rank r moves
// from input[sources[s] + r] to output[destinations[s] + r]. Gather has no destinations (item
// j goes to output[j]), scatter no sources (item j comes from input[j]).
#pragma once
#include "load_balancing.cuh"

namespace mergepath {

// Where a tile's items move, values of `words` words of W: from `input` (input_len values)
// at sources[s] + r, or at the item's own index j where `sources` is null; to `output`
// (output_len values) at destinations[s] + r, or at j where `destinations` is null.
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

// Output tile blockIdx.x of the load-balancing merge (load_balancing_tile_items): each of the
// tile's items moved, a value's words by consecutive threads, several in flight a thread. The
// tile's sources and destinations are staged in shared memory with its starts, so a value's
// load waits on no other global load (BENCHMARKS.md: 25 % faster at 2^26).
// Device sources, destinations and starts are not checked: a move whose source or destination
// falls outside its array is skipped, so bad arguments write some values in bounds and never
// read or write out of them.
template <int NT, int VT, class I, class W>
__device__ __forceinline__ void interval_move_tile(const I* starts, int64_t segments, int64_t count,
                                                   const int64_t* partitions, const interval_moves<I, W>& m) {
  constexpr int NV = NT * VT;
  __shared__ I tile_sources[NV + 1];
  __shared__ I tile_destinations[NV + 1];
  const load_balancing_items<I> items = load_balancing_tile_items<NT, VT>(starts, segments, count, partitions, [&](int h, int64_t s) {
    if (m.sources) tile_sources[h] = m.sources[s];
    if (m.destinations) tile_destinations[h] = m.destinations[s];
  });
  const int words = m.words;
  cta_move_words<NT, LOAD_BALANCING_MOVES>(items.count() * words, m.input, m.output, [&](int u, uint64_t& from, uint64_t& to) {
    const int2 v = value_word(u, words);
    const uint64_t j = (uint64_t)items.item(v.x), rank = items.rank(v.x);
    const int h = items.boundaries(v.x);
    // Unsigned: a rank or an index past the arrays on bad starts wraps to a large value.
    const uint64_t source = m.sources ? (uint64_t)tile_sources[h] + rank : j;
    const uint64_t destination = m.destinations ? (uint64_t)tile_destinations[h] + rank : j;
    from = source * words + v.y;
    to = destination * words + v.y;
    return source < (uint64_t)m.input_len && destination < (uint64_t)m.output_len;
  });
}

}  // namespace mergepath

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

// Output tile blockIdx.x of the load-balancing merge: each of the tile's items moved, a value's
// words by consecutive threads, several in flight a thread. `Sources` and `Destinations` say
// which of m's index arrays the kernel reads (gather: sources, scatter: destinations, move:
// both), so each kind keeps only its own arrays in shared memory. The tile's sources and
// destinations are staged with its starts, and each thread's walk notes its items' source and
// destination indices, keeping the slot's start, source and destination in registers while its
// items stay in one interval; the moves then read one shared word a side an item, and no
// value's load waits on another global load (BENCHMARKS.md).
// Device sources, destinations and starts are not checked: a move whose source or destination
// falls outside its array, or at or past I's largest value, is skipped (as is an item whose
// rank would be negative, on bad starts), so bad arguments write some values in bounds and
// never read or write out of them.
template <int NT, int VT, bool Sources, bool Destinations, class I, class W>
__device__ __forceinline__ void interval_move_tile(const I* starts, int64_t segments, int64_t count,
                                                   const int64_t* partitions, const interval_moves<I, W>& m) {
  constexpr int NV = NT * VT;
  constexpr I SKIP = ~(I)0;  // a noted position no move takes
  static_assert(Sources || Destinations, "a gather, a scatter or a move");
  __shared__ I tile_sources[Sources ? NV + 1 : 1];
  __shared__ I tile_destinations[Destinations ? NV + 1 : 1];
  __shared__ I item_sources[Sources ? NV : 1];
  __shared__ I item_destinations[Destinations ? NV : 1];
  const load_balancing_range<I> t = load_balancing_tile_load<NT, VT>(starts, segments, count, partitions, [&](int h, int64_t s) {
    if constexpr (Sources) tile_sources[h] = m.sources[s];
    if constexpr (Destinations) tile_destinations[h] = m.destinations[s];
  });
  int slot = -1;
  I start = 0, source = 0, destination = 0;  // the slot's, while a thread's items are in it
  load_balancing_tile_notes<NT, VT>(t, [&](int k, int h) {
    if (h != slot) {
      slot = h;
      start = t.tile_starts[h];
      if constexpr (Sources) source = tile_sources[h];
      if constexpr (Destinations) destination = tile_destinations[h];
    }
    // I unsigned: a position past its largest value would wrap, noted SKIP instead.
    const I j = (I)t.item(k), rank = j - start;
    if constexpr (Sources) item_sources[k] = j < start || rank > (I)~source ? SKIP : source + rank;
    if constexpr (Destinations) item_destinations[k] = j < start || rank > (I)~destination ? SKIP : destination + rank;
  });
  // A side without its array moves the item's own index, within the arrays (the host checks
  // a gather's output and a scatter's input against the items).
  const int words = m.words;
  cta_move_words<NT, LOAD_BALANCING_MOVES>(t.count() * words, m.input, m.output, [&](int u, uint64_t& from, uint64_t& to) {
    const int2 v = value_word(u, words);
    const uint64_t j = (uint64_t)t.item(v.x);
    const I s = Sources ? item_sources[v.x] : SKIP, d = Destinations ? item_destinations[v.x] : SKIP;
    from = (Sources ? (uint64_t)s : j) * words + v.y;
    to = (Destinations ? (uint64_t)d : j) * words + v.y;
    return (!Sources || (s != SKIP && s < (uint64_t)m.input_len)) && (!Destinations || (d != SKIP && d < (uint64_t)m.output_len));
  });
}

}  // namespace mergepath

// Kernel layer: interval move, gather and scatter (Modern GPU's), on the load-balancing
// search's tiles. The intervals' items, concatenated, are the search's `count` items: interval
// s holds items starts[s] .. starts[s + 1] (the last up to count), and its item of rank r moves
// from input[sources[s] + r] to output[destinations[s] + r]. Gather has no destinations (item
// j goes to output[j]), scatter no sources (item j comes from input[j]).
#pragma once
#include <type_traits>
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

// The items whose values a lane of an interval tile has in flight at once: all of its VT for
// words of up to 4 bytes, fewer for wider ones (their registers).
template <int VT, class W>
constexpr int INTERVAL_MOVES_IN_FLIGHT = sizeof(W) <= 4 ? VT : sizeof(W) == 8 ? (VT + 1) / 2 : (VT + 3) / 4;

// Output tile blockIdx.x of the load-balancing merge: each of the tile's items moved. `Sources`
// and `Destinations` say which of m's index arrays the kernel reads (gather: sources, scatter:
// destinations, move: both), so each kind keeps only its own arrays in shared memory. The
// tile's sources and destinations are staged with its starts, and each segment marks its first
// item in the tile (load_balancing_tile_marked); each warp then takes its items 32 at a time,
// each lane finding its item's segment from the marks (load_balancing_item_slots), and loads
// its items' values, several in flight, before it stores them: no walk, no per-item notes in
// shared memory (BENCHMARKS.md).
// Device sources, destinations and starts are not checked: a move whose source or destination
// falls outside its array, or at or past I's largest value, is skipped (as is an item whose
// rank would be negative, on bad starts), so bad arguments write some values in bounds and
// never read or write out of them.
template <int NT, int VT, bool Sources, bool Destinations, class I, class W>
__device__ __forceinline__ void interval_move_tile(const I* starts, int64_t segments, int64_t count,
                                                   const int64_t* partitions, const interval_moves<I, W>& m) {
  constexpr int NV = NT * VT, ONE_WORD_ITEMS = INTERVAL_MOVES_IN_FLIGHT<VT, W>;
  constexpr I SKIP = ~(I)0;  // a position no move takes
  static_assert(Sources || Destinations, "a gather, a scatter or a move");
  __shared__ I tile_sources[Sources ? NV + 1 : 1];
  __shared__ I tile_destinations[Destinations ? NV + 1 : 1];
  __shared__ load_balancing_marks<NT, VT> marks;
  const load_balancing_range<I> t = load_balancing_tile_marked<NT, VT>(starts, segments, count, partitions, marks, [&](int h, int64_t s) {
    if constexpr (Sources) tile_sources[h] = m.sources[s];
    if constexpr (Destinations) tile_destinations[h] = m.destinations[s];
  });
  load_balancing_item_slots<NT, VT> slots(marks);
  // Item j of a segment starting at `start` moves base + its rank; I unsigned, so a position
  // past its largest value would wrap: SKIP instead.
  const auto position = [](I j, I start, I base) {
    const I rank = j - start;
    return j < start || rank > (I)~base ? SKIP : base + rank;
  };
  // Positions below these are in their arrays (and not SKIP).
  const auto limit = [](int64_t len) { return (uint64_t)len < (uint64_t)SKIP ? (I)len : SKIP; };
  const I from_limit = limit(m.input_len), to_limit = limit(m.output_len);
  // Values of one word (the common case) compiled apart, a lane's items all in flight; values
  // of several words an item at a time, 2 words in flight: a run-time word count over all of a
  // lane's items held registers for its loop (64 against 40 at 128 x 9, a third fewer CTAs an SM).
  const auto move_items = [&](auto one_word) {
    constexpr bool ONE = decltype(one_word)::value;
    constexpr int G = ONE ? ONE_WORD_ITEMS : 1, C = ONE ? 1 : 2;  // items, and words of each, in flight
    const int words = ONE ? 1 : m.words;
    for (int first = 0; first < VT; first += G) {
      I from[G], to[G];  // a side without its array moves the item's own index
      unsigned moves = 0;
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const int i = first + g;
        if (i >= VT) break;
        const int h = slots.slot(i), k = slots.item(i);  // every lane: the cursor shuffles
        const I j = (I)t.item(k), start = t.tile_starts[h];
        from[g] = Sources ? position(j, start, tile_sources[h]) : j;
        to[g] = Destinations ? position(j, start, tile_destinations[h]) : j;
        // (The host checks a gather's output and a scatter's input against the items.)
        if (k < t.count() && (!Sources || from[g] < from_limit) && (!Destinations || to[g] < to_limit)) moves |= 1u << g;
      }
      for (int first_word = 0; first_word < words; first_word += C) {
        W value[G][C];
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int c = 0; c < C; ++c)
            if ((moves >> g & 1) && first_word + c < words) value[g][c] = m.input[(uint64_t)from[g] * words + first_word + c];
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int c = 0; c < C; ++c)
            if ((moves >> g & 1) && first_word + c < words) m.output[(uint64_t)to[g] * words + first_word + c] = value[g][c];
      }
    }
  };
  if (m.words == 1) move_items(std::true_type{});
  else move_items(std::false_type{});
}

}  // namespace mergepath

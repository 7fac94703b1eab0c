// Kernel layer: bulk insert and bulk remove (Modern GPU's) on the load-balancing search's
// tiles. Positions (A, sorted) are merged with the array's positions 0, 1, ..., n - 1 (B, a
// counting sequence, never stored), a position before the array item it equals (A first on
// ties). Insert: value j lands just before array[positions[j]], equal positions keep their
// values' order, and merge output o is output item o. Remove (distinct positions): an item is
// removed where the position before it in the merge equals it, and a kept item goes as many
// places forward as there are positions before it. Each tile notes where its outputs come
// from, then copies them in coalesced order: the array and the values are read once and the
// output written once.
#pragma once
#include "../cta/guard.cuh"
#include "load_balancing.cuh"

namespace mergepath {

// The values a bulk insert or remove moves, `words` words of W each: array[0, n) and the
// inserted values (one per position; none for a remove), into out (out_len values).
template <class W>
struct bulk_values {
  const W* array;
  const W* values;
  W* out;
  int64_t out_len;
  int words;
};

// Partition p of the merge of the positions with the array's positions: the positions before
// merge output p * spacing.
template <class I>
__device__ __forceinline__ void bulk_partitions_body(const I* positions, int64_t count, int64_t n, int64_t spacing,
                                                     int64_t num_partitions, int64_t* partitions) {
  merge_path_partitions_body(positions, count, item_positions<I>{0}, n, spacing, num_partitions, partitions,
                             less_t<I>());
}

// A bulk tile's shared memory: its positions (slot h + 1 its position h, the walk's layout;
// slot 0 the position before the tile, or 0), each output's source, the threads' shares.
template <int NT, int VT, class I>
struct bulk_tile_shared {
  I positions[NT * VT + 1];
  int sources[NT * VT];
  int share_starts[NT];
};

// Loads tile blockIdx.x's positions (of the merge of positions[0, count) with the array's n
// positions, partitions as bulk_partitions_body's) into shared memory, synchronized; returns
// the tile's range.
template <int NT, int VT, class I>
__device__ __forceinline__ merge_range bulk_tile_load(const I* positions, int64_t count, int64_t n,
                                                      const int64_t* partitions, bulk_tile_shared<NT, VT, I>& s) {
  wait_for_previous_kernel();  // the partitions (see merge.cuh)
  const merge_range r = compute_merge_range(count, n, blockIdx.x, NT * VT, partitions);
  for (int h = (int)threadIdx.x; h <= r.a_count(); h += NT)
    s.positions[h] = r.a_begin + h > 0 ? positions[r.a_begin + h - 1] : I(0);
  __syncthreads();
  return r;
}

// Whether the tile's partitions and this thread's share (its walk's first and last split,
// load_balancing_walk's result) are exact points of a merge path (cta/guard.cuh), where every
// share meets the next: then the tile's outputs are its inputs' items, each once. Synchronizes.
template <int NT, int VT, class I>
__device__ __forceinline__ bool bulk_share_exact(bulk_tile_shared<NT, VT, I>& s, int2 share, const merge_range& r,
                                                 int64_t count, int64_t n, const int64_t* partitions) {
  s.share_starts[threadIdx.x] = share.x;
  __syncthreads();
  return share_meets_next<VT>(s.share_starts, share.y, r.count()) &&
         (threadIdx.x != 0 || merge_partitions_exact(count, n, blockIdx.x, NT * VT, partitions));
}

// Insert: output tile blockIdx.x. Device positions are not checked: where they are unsorted,
// the tile's partitions or its threads' shares may not meet; the tile then writes nothing and
// reports it, and the fallback kernel after the tiles writes the values, then the array.
template <int NT, int VT, class I, class W>
__device__ __forceinline__ void bulk_insert_tile(const I* positions, int64_t inserts, int64_t n,
                                                 const int64_t* partitions, const bulk_values<W>& v,
                                                 merge_guard* guard) {
  __shared__ bulk_tile_shared<NT, VT, I> s;  // sources[o]: array item k, or ~h for value h
  const merge_range r = bulk_tile_load<NT, VT>(positions, inserts, n, partitions, s);
  const int2 share = load_balancing_walk<VT>(s.positions, r.a_count(), item_positions<I>{r.b_begin}, r.b_count(),
                                             [&](int h, int k) { s.sources[h + k] = ~h; },
                                             [&](int k, int h) { s.sources[h + k] = k; });
  if (!__syncthreads_and(bulk_share_exact<NT, VT>(s, share, r, inserts, n, partitions))) {
    if (threadIdx.x == 0) report_inexact(guard);
    return;
  }
  const int words = v.words;
  const uint64_t out_first = (uint64_t)(r.a_begin + r.b_begin);
  cta_move_words_from<NT, LOAD_BALANCING_MOVES>(r.count() * words, v.out, [&](int u, const W*& from, uint64_t& to) {
    const int o = words == 1 ? u : u / words, w = u - o * words;  // one word a value: no division
    const int src = s.sources[o];
    from = src >= 0 ? v.array + (uint64_t)(r.b_begin + src) * words + w : v.values + (uint64_t)(r.a_begin + ~src) * words + w;
    to = (out_first + o) * words + w;
    return true;
  });
}

// Remove of distinct positions: output tile blockIdx.x. An item is removed where the position
// before it in the merge (slot h of the tile's positions: slot 0 the one before the tile)
// equals it; a kept item with h of the tile's positions before it takes kept slot k - h - e
// (e: whether the tile's first item is removed by the position before the tile), the tile's
// slots starting at out_begin, its first item's index less the positions below it. Device
// positions are not checked: where they are not strictly increasing, a tile can find its split,
// its shares or its slots inexact; it then writes nothing and reports it, and the fallback
// kernel after the tiles writes the array's first kept items. No write reaches past out_len.
template <int NT, int VT, class I, class W>
__device__ __forceinline__ void bulk_remove_tile(const I* positions, int64_t removes, int64_t n,
                                                 const int64_t* partitions, const bulk_values<W>& v,
                                                 merge_guard* guard) {
  constexpr int NV = NT * VT;
  __shared__ bulk_tile_shared<NT, VT, I> s;  // sources[j]: the tile's item in kept slot j
  __shared__ int kept;
  if (threadIdx.x == 0) kept = 0;
  const merge_range r = bulk_tile_load<NT, VT>(positions, removes, n, partitions, s);
  const int e = r.a_begin > 0 && s.positions[0] == (I)r.b_begin;
  bool slots_fit = true;
  int mine = 0;
  const int2 share = load_balancing_walk<VT>(
      s.positions, r.a_count(), item_positions<I>{r.b_begin}, r.b_count(), [](int, int) {},
      [&](int k, int h) {
        if ((h > 0 || r.a_begin > 0) && s.positions[h] == (I)(r.b_begin + k)) return;  // removed
        const int j = k - h - e;
        if (j >= 0 && j < NV) s.sources[j] = k;
        else slots_fit = false;
        ++mine;
      });
  atomicAdd(&kept, mine);
  bool exact = bulk_share_exact<NT, VT>(s, share, r, removes, n, partitions) && slots_fit;
  if (threadIdx.x == 0) {
    // The tile's split is the merge path's: the position before it at most its first item,
    // the position after it at least that (so the slots begin where the tile before's end).
    const I first_item = (I)r.b_begin;
    exact = exact && (r.a_begin == 0 || s.positions[0] <= first_item) &&
            (r.a_begin == removes || r.b_begin == 0 || positions[r.a_begin] >= first_item);
  }
  const int a_n = r.a_count();
  const bool increasing = cta_lists_sorted<VT>(s.positions + 1, a_n, [&](int t) { return t == 0 ? 0 : a_n; }, 1,
                                               [](I x, I before) { return x <= before; });
  if (!__syncthreads_and(exact && increasing)) {
    if (threadIdx.x == 0) report_inexact(guard);
    return;
  }
  const int words = v.words;
  const int64_t out_begin = r.b_begin - r.a_begin + e;
  cta_move_words_from<NT, LOAD_BALANCING_MOVES>(kept * words, v.out, [&](int u, const W*& from, uint64_t& to) {
    const int j = words == 1 ? u : u / words, w = u - j * words;
    from = v.array + (uint64_t)(r.b_begin + s.sources[j]) * words + w;
    to = (uint64_t)(out_begin + j) * words + w;
    return out_begin + j >= 0 && out_begin + j < v.out_len;
  });
}

}  // namespace mergepath

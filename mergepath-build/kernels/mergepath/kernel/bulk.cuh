// Kernel layer: bulk insert (Modern GPU's) on the load-balancing search's tiles. The inserts'
// positions (A, sorted) are merged with the array's positions 0, 1, ..., n - 1 (B, a counting
// sequence, never stored), a position before the array item it equals (A first on ties), so
// value j lands just before array[positions[j]], equal positions keep their values' order, and
// merge output o is output item o. Each tile notes where its outputs come from, then copies
// them in coalesced order: the array and the values are read once and the output written once.
#pragma once
#include "../cta/guard.cuh"
#include "load_balancing.cuh"

namespace mergepath {

// The values a bulk insert moves, `words` words of W each: array[0, n), then the inserted
// values (one per position), into out (n + inserts values).
template <class W>
struct bulk_insert_values {
  const W* array;
  const W* values;
  W* out;
  int words;
};

// Partition p of the merge of the positions with the array's positions: the inserts before
// merge output p * spacing.
template <class I>
__device__ __forceinline__ void bulk_insert_partitions_body(const I* positions, int64_t inserts, int64_t n,
                                                            int64_t spacing, int64_t num_partitions,
                                                            int64_t* partitions) {
  merge_path_partitions_body(positions, inserts, item_positions<I>{0}, n, spacing, num_partitions, partitions,
                             less_t<I>());
}

// Output tile blockIdx.x of the merge (partitions as bulk_insert_partitions_body's). Device
// positions are not checked: where they are unsorted, the tile's partitions or its threads'
// shares may not meet (cta/guard.cuh); the tile then writes nothing and reports it, and the
// fallback kernel after the tiles writes the values, then the array.
template <int NT, int VT, class I, class W>
__device__ __forceinline__ void bulk_insert_tile(const I* positions, int64_t inserts, int64_t n,
                                                 const int64_t* partitions, const bulk_insert_values<W>& v,
                                                 merge_guard* guard) {
  constexpr int NV = NT * VT;
  __shared__ I tile_positions[NV + 1];  // slot h + 1: the tile's position h (the walk's layout)
  __shared__ int sources[NV];           // output o's source: array item k, or ~h for value h
  __shared__ int share_starts[NT];
  wait_for_previous_kernel();  // the partitions (see merge.cuh)
  const int64_t tile = blockIdx.x;
  const merge_range r = compute_merge_range(inserts, n, tile, NV, partitions);
  const int a_n = r.a_count(), b_n = r.b_count();
  for (int h = (int)threadIdx.x; h < a_n; h += NT) tile_positions[1 + h] = positions[r.a_begin + h];
  __syncthreads();
  const int2 share = load_balancing_walk<VT>(
      tile_positions, a_n, item_positions<I>{r.b_begin}, b_n, [&](int h, int k) { sources[h + k] = ~h; },
      [&](int k, int h) { sources[h + k] = k; });
  share_starts[threadIdx.x] = share.x;
  __syncthreads();
  const bool exact = share_meets_next<VT>(share_starts, share.y, a_n + b_n) &&
                     (threadIdx.x != 0 || merge_partitions_exact(inserts, n, tile, NV, partitions));
  if (!__syncthreads_and(exact)) {
    if (threadIdx.x == 0) report_inexact(guard);
    return;
  }
  const int words = v.words;
  const uint64_t out_first = (uint64_t)(tile * NV);
  cta_move_words_from<NT, LOAD_BALANCING_MOVES>((a_n + b_n) * words, v.out, [&](int u, const W*& from, uint64_t& to) {
    const int o = words == 1 ? u : u / words, w = u - o * words;  // one word a value: no division
    const int s = sources[o];
    from = s >= 0 ? v.array + (uint64_t)(r.b_begin + s) * words + w : v.values + (uint64_t)(r.a_begin + ~s) * words + w;
    to = (out_first + o) * words + w;
    return true;
  });
}

}  // namespace mergepath

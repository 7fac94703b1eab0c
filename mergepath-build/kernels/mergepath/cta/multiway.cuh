// CTA layer: the multiway merge path search. The exact split of k sorted inputs at an output
// rank of their stable merge (equal items: lower inputs first), found by the CTA together; the
// host's partition::multiway_split mirrors it step for step.
#pragma once
#include <stdint.h>
#include <mergepath/contract.cuh>  // MULTIWAY_MAX_WAYS, MULTIWAY_SEARCH_ROUNDS
#include "tile.cuh"  // cta_restage_thread_order, serial_merge_pairs_at

namespace mergepath {

// Shared memory of cta_multiway_split: this round's candidate of every input.
template <class K> struct multiway_split_shared {
  K key[MULTIWAY_MAX_WAYS];          // the middle item of the input's range
  int64_t mid[MULTIWAY_MAX_WAYS];    // its index in the input
  int64_t width[MULTIWAY_MAX_WAYS];  // the range's width (0: settled)
  unsigned long long width_sum, rank;
  int pivot, first_live;
};

// Items of `a[0, n)` that go before `x` of input `pivot_input` when `a` is input `input`
// (equal items of a lower input go first: an upper bound; of a higher one after: a lower bound),
// clamped to [lo, hi]: searched only there.
template <class K, class Comp>
__device__ __forceinline__ int64_t multiway_count_before(const K* a, int64_t lo, int64_t hi, const K& x, int input,
                                                         int pivot_input, Comp comp) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const bool before = input < pivot_input ? !comp(x, a[mid]) : comp(a[mid], x);
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The search ranges of a multiway split, in registers: thread tid holds those of inputs
// tid * PER_THREAD + j (contiguous, so a scan over threads is in input order).
template <int NT> struct multiway_ranges {
  static constexpr int PER_THREAD = (MULTIWAY_MAX_WAYS + NT - 1) / NT;
  int64_t lo[PER_THREAD], hi[PER_THREAD];
  __device__ __forceinline__ static int input(int j) { return (int)threadIdx.x * PER_THREAD + j; }
};

// The ranges between split rows lo_row and hi_row (a null lo_row: the inputs' starts; a null
// hi_row: their ends), clamped into the inputs with lo <= hi whatever the rows say (rows of
// unsorted inputs may say anything).
template <int NT>
__device__ __forceinline__ multiway_ranges<NT> multiway_ranges_between(const int64_t* counts, int ways,
                                                                       const int64_t* lo_row, const int64_t* hi_row) {
  multiway_ranges<NT> r;
#pragma unroll
  for (int j = 0; j < r.PER_THREAD; ++j) {
    const int t = r.input(j);
    const int64_t n = t < ways ? counts[t] : 0;
    int64_t l = lo_row && t < ways ? lo_row[t] : 0;
    int64_t h = hi_row && t < ways ? hi_row[t] : n;
    l = l < 0 ? 0 : (l > n ? n : l);
    r.lo[j] = l;
    r.hi[j] = h < l ? l : (h > n ? n : h);
  }
  return r;
}

// The ranges holding the split at output rank `rank` of the `ways` inputs (ways <=
// MULTIWAY_MAX_WAYS): those between the rows lo_row and hi_row (splits known to bound this
// one, a bracket), narrowed by the rank itself (at least rank - (total - n) and at most rank
// items of an input of n).
template <int NT>
__device__ __forceinline__ multiway_ranges<NT> multiway_initial_ranges(const int64_t* counts, int ways, int64_t rank,
                                                                       int64_t total, const int64_t* lo_row,
                                                                       const int64_t* hi_row) {
  multiway_ranges<NT> r = multiway_ranges_between<NT>(counts, ways, lo_row, hi_row);
#pragma unroll
  for (int j = 0; j < r.PER_THREAD; ++j) {
    const int t = r.input(j);
    const int64_t n = t < ways ? counts[t] : 0;
    const int64_t at_least = rank - (total - n), at_most = rank;
    r.lo[j] = r.lo[j] < at_least ? (at_least < r.hi[j] ? at_least : r.hi[j]) : r.lo[j];
    r.hi[j] = r.hi[j] > at_most ? (at_most > r.lo[j] ? at_most : r.lo[j]) : r.hi[j];
  }
  return r;
}

// Narrows ranges `r` holding the split at output rank `rank` of the stable merge of the inputs
// (equal items: lower inputs first) until their total width is at most `settle_width` (0: the
// split itself, lo == hi). Called by all NT threads. A round: every input with a non-empty
// range offers its middle item weighted by the range's width; the weighted median of the
// offers (in the merge's order) is the pivot; the items before it in every input (binary
// searches inside the ranges) say whether it is among the first `rank`, and every range's
// lower or upper end moves to those counts. Each round removes at least a quarter of the
// total width. Unsorted inputs (or a comparator that is not a strict weak order) stop after
// MULTIWAY_SEARCH_ROUNDS rounds with ranges inside the inputs.
template <int NT, class K, class Comp>
__device__ __forceinline__ void cta_multiway_narrow(const K* const* inputs, int ways, int64_t rank,
                                                                  int64_t settle_width, multiway_ranges<NT>& r,
                                                                  multiway_split_shared<K>& s, Comp comp) {
  constexpr int PER_THREAD = multiway_ranges<NT>::PER_THREAD;
  const int tid = (int)threadIdx.x;
#pragma unroll 1
  for (int round = 0; round < MULTIWAY_SEARCH_ROUNDS; ++round) {
    if (tid == 0) {
      s.width_sum = 0;
      s.rank = 0;
      s.pivot = INT32_MAX;
      s.first_live = INT32_MAX;
    }
    __syncthreads();
    unsigned long long my_width = 0;
    int my_first = INT32_MAX;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
      const int t = r.input(j);
      if (t >= ways) continue;
      const int64_t w = r.hi[j] - r.lo[j];
      s.width[t] = w;
      if (w > 0) {
        s.mid[t] = r.lo[j] + w / 2;
        s.key[t] = inputs[t][r.lo[j] + w / 2];
        my_width += (unsigned long long)w;
        if (my_first == INT32_MAX) my_first = t;
      }
    }
    if (my_width) atomicAdd(&s.width_sum, my_width);
    if (my_first != INT32_MAX) atomicMin(&s.first_live, my_first);
    __syncthreads();
    const unsigned long long width = s.width_sum;
    if (width <= (unsigned long long)settle_width) break;  // the same in every thread
    // The weighted median: the candidate with at most half the width ahead of it and more
    // than half up to its end.
#pragma unroll 1
    for (int j = 0; j < PER_THREAD; ++j) {
      const int t = r.input(j);
      if (t >= ways || s.width[t] == 0) continue;
      const K x = s.key[t];
      unsigned long long ahead = 0;
#pragma unroll 1
      for (int d = 0; d < ways; ++d) {
        if (d == t || s.width[d] == 0) continue;
        const K y = s.key[d];
        if (comp(y, x) || (!comp(x, y) && d < t)) ahead += (unsigned long long)s.width[d];
      }
      if (2 * ahead <= width && width < 2 * (ahead + (unsigned long long)s.width[t])) atomicMin(&s.pivot, t);
    }
    __syncthreads();
    const int pivot = s.pivot != INT32_MAX ? s.pivot : s.first_live;
    const int64_t m = s.mid[pivot];
    const K x = s.key[pivot];
    int64_t before[PER_THREAD];
    unsigned long long my_rank = 0;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
      const int t = r.input(j);
      before[j] = 0;
      if (t >= ways) continue;
      // Clamped to the range: the clamped counts sum below `rank` exactly when the true ones
      // do, as every split lies in its range.
      before[j] = t == pivot ? m : multiway_count_before(inputs[t], r.lo[j], r.hi[j], x, t, pivot, comp);
      my_rank += (unsigned long long)before[j];
    }
    if (my_rank) atomicAdd(&s.rank, my_rank);
    __syncthreads();
    const bool in_prefix = (int64_t)s.rank < rank;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
      const int t = r.input(j);
      if (t >= ways) continue;
      int64_t c = in_prefix && t == pivot ? m + 1 : before[j];
      c = c < r.lo[j] ? r.lo[j] : (c > r.hi[j] ? r.hi[j] : c);
      if (in_prefix) r.lo[j] = c;
      else r.hi[j] = c;
    }
    __syncthreads();  // s.rank and the candidates are read before the next round resets them
  }
}

// split[t] = items of input t (inputs[t][0, counts[t])) among the first `rank` items of the
// stable merge of the `ways` inputs, searched from the bracket [lo_row, hi_row] (null rows: no
// bound that side) by cta_multiway_narrow. Called by all NT threads.
template <int NT, class K, class Comp>
__device__ __forceinline__ void cta_multiway_split(const K* const* inputs, const int64_t* counts, int ways,
                                                   int64_t rank, int64_t total, const int64_t* lo_row,
                                                   const int64_t* hi_row, int64_t* split,
                                                   multiway_split_shared<K>& s, Comp comp) {
  multiway_ranges<NT> r = multiway_initial_ranges<NT>(counts, ways, rank, total, lo_row, hi_row);
  cta_multiway_narrow<NT>(inputs, ways, rank, 0, r, s, comp);
#pragma unroll
  for (int j = 0; j < r.PER_THREAD; ++j)
    if (r.input(j) < ways) split[r.input(j)] = r.lo[j];
}

// Merges `ways` sorted lists held in shared memory, list t at shared_keys[start[t],
// start[t + 1]) (start[0] = 0, start[ways] = count >= 1, `start` in shared memory, the caller
// synchronized after writing both), stably (equal keys: lower lists first): ceil(log2(ways))
// rounds, each merging consecutive lists pairwise (serial_merge_pairs_at), the lists doubling.
// On return the merged tile is in registers in thread order (thread t: items VT * t ..) and
// the shared arrays are still in use (store with cta_store_thread_order, which starts with a
// barrier). With HasValues, `positions` are the items' places in the original lists (below
// `count`), for gathering values once.
template <int NT, int VT, bool HasValues, class K, class Comp>
__device__ __forceinline__ void cta_merge_lists(K (&keys)[VT], int (&positions)[VT], int count, const int* start,
                                                int ways, K* shared_keys, int* shared_positions, Comp comp) {
  const int first = VT * (int)threadIdx.x;
  if (ways == 1) {
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int at = first + i < count ? first + i : count - 1;
      keys[i] = shared_keys[at];
      positions[i] = at;
    }
    return;
  }
#pragma unroll 1
  for (int stride = 1; stride < ways; stride *= 2) {
    if (stride > 1) cta_restage_thread_order<VT, HasValues>(keys, positions, shared_keys, shared_positions);
    const int lists = (ways + stride - 1) / stride;
    const auto bound = [&](int i) { return start[i * stride < ways ? i * stride : ways]; };
    int indices[VT];
    serial_merge_pairs_at<VT>(shared_keys, bound, lists, count, first, keys, indices, comp);
    if constexpr (HasValues) {
#pragma unroll
      for (int i = 0; i < VT; ++i) positions[i] = stride == 1 ? indices[i] : shared_positions[indices[i]];
    }
  }
}

}  // namespace mergepath

// CTA layer: merges that keep their inputs' items when the inputs are not sorted. On sorted
// inputs every search of a merge finds a point of its one merge path, so the tiles' and the
// threads' shares fit together exactly. On unsorted ones two searches can cross, and shares
// would overlap or leave gaps: items taken twice or not at all. So each tile checks what makes
// its output a permutation of its share of the inputs (its bounds are exact path points, and
// its threads' shares meet, or its slices are sorted so every merge inside it is exact) and
// reports to the launch's guard where it is not; a fallback kernel after the tiles then writes
// the inputs one after another (kernel/unsorted.cuh): an unspecified order of the same items,
// each value with its key.
#pragma once
#include <mergepath/contract.cuh>  // merge_guard

namespace mergepath {

// Whether the threads' shares of a two-way merge of a tile meet: thread t, whose share starts
// after `a_start` items of A (its merge-path split) and took the items of `indices` (tile
// positions, those below `a_count` from A; items past `count` not taken), ends where thread
// t + 1 starts, and the last where A ends. Then the threads' shares cut the tile's slices of A
// and B exactly once, whatever the keys. Called by all NT threads; returns the same in every
// thread, synchronized.
template <int NT, int VT>
__device__ __forceinline__ bool cta_shares_meet(int a_start, const int (&indices)[VT], int a_count, int count) {
  __shared__ int starts[NT];
  const int first = VT * (int)threadIdx.x;
  int a_end = a_start;
#pragma unroll
  for (int i = 0; i < VT; ++i) a_end += (int)(first + i < count && indices[i] < a_count);
  starts[threadIdx.x] = a_start;
  __syncthreads();
  const int next = threadIdx.x + 1 < NT ? starts[threadIdx.x + 1] : a_count;
  return __syncthreads_and(a_end == next);
}

// Whether the lists keys[start(t), start(t + 1)) (t < lists; start(0) = 0, start(lists) =
// count) are each sorted by `comp`: each thread checks its VT-item chunk against each item's
// predecessor in the same list. Called by all NT threads once the lists are in shared memory
// (and synchronized); returns the same in every thread, synchronized. `start` is a function of
// the list index (lists >= 1).
template <int VT, class K, class Start, class Comp>
__device__ __forceinline__ bool cta_lists_sorted(const K* keys, int count, Start start, int lists, Comp comp) {
  const int first = VT * (int)threadIdx.x;
  const int end = first + VT < count ? first + VT : count;
  bool sorted = true;
  if (first < end) {
    int list = 0, hi = lists;  // the last list starting at or before `first`
    while (hi - list > 1) {
      const int mid = (list + hi) / 2;
      if (start(mid) <= first) list = mid;
      else hi = mid;
    }
    int list_begin = start(list), next = start(list + 1);
#pragma unroll 1
    for (int i = first; i < end; ++i) {
      while (i >= next && list + 1 < lists) {
        ++list;
        list_begin = next;
        next = start(list + 1);
      }
      if (i > list_begin && comp(keys[i], keys[i - 1])) sorted = false;
    }
  }
  return __syncthreads_and(sorted);
}

// Marks the launch's guard where this tile's output is not a permutation of its share (`exact`
// false, the same in every thread): the fallback kernel after the tiles then writes the inputs
// in order. Rare (unsorted inputs), so no tile pays more than the check.
__device__ __forceinline__ void cta_report_inexact(merge_guard* guard, bool exact) {
  if (!exact && threadIdx.x == 0) atomicOr(&guard->unsorted, 1);
}

}  // namespace mergepath

// CTA layer: merges that keep their inputs' items when the inputs are not sorted. On sorted
// inputs every search of a merge finds a point of its one merge path, so the tiles' and the
// threads' shares fit together exactly. On unsorted ones two searches can cross, and shares
// would overlap or leave gaps: items taken twice or not at all. So each tile checks what makes
// its output a permutation of its share of the inputs (its bounds are exact path points, and
// its threads' shares meet, or its slices are sorted so every merge inside it is exact) and
// reports to the launch's guard where it is not (report_inexact); a fallback kernel after the
// tiles then writes the inputs one after another (kernel/unsorted.cuh): an unspecified order
// of the same items, each value with its key.
#pragma once
#include <mergepath/contract.cuh>  // merge_guard

namespace mergepath {

// Whether this thread's share of a two-way merge of a tile (of `count` items, VT a thread)
// meets the next thread's: it ends after `a_end` items of A (serial_merge_at's split.a_end)
// where thread threadIdx.x + 1 starts (`starts`: the threads' split.a in shared memory, written
// before a barrier). A share that reaches the tile's end ends right whatever the keys (its
// steps take what is left of A and B), so only shares before it are compared. Where every
// thread's share meets its neighbour's, the shares cut the tile's slices exactly once.
template <int VT>
__device__ __forceinline__ bool share_meets_next(const int* starts, int a_end, int count) {
  return VT * ((int)threadIdx.x + 1) >= count || starts[threadIdx.x + 1] == a_end;
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

// Marks the launch's guard: this thread found its tile's output not a permutation of its share,
// so the fallback kernel after the tiles writes the inputs in order. Rare (unsorted inputs), so
// no tile pays more than its checks.
__device__ __forceinline__ void report_inexact(merge_guard* guard) { atomicOr(&guard->unsorted, 1); }

}  // namespace mergepath

// CTA layer: merges that keep their inputs' items when the inputs are not sorted. On sorted
// inputs every search of a merge finds a point of its one merge path, so the tiles' and the
// threads' shares fit together exactly. On unsorted ones two searches can cross, and shares
// would overlap or leave gaps: items taken twice or not at all. So each tile checks what makes
// its output a permutation of its share of the inputs — its bounds are exact path points (not
// clamped) and its slices are sorted, so every merge inside it is exact — and the grid's last
// CTA to finish, where some tile found otherwise, writes the inputs one after another instead:
// an unspecified order of the same items, each value with its key.
#pragma once
#include <mergepath/contract.cuh>  // merge_guard

namespace mergepath {

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

// Ends a guarded merge kernel. Every CTA of the grid calls it, all NT threads, after its last
// store, with `exact`: whether its output is a permutation of its share of the inputs. The last
// CTA to finish, where some CTA was not exact, calls write_inputs_in_order() (all its threads:
// the inputs one after another over the whole output), then resets the guard (zero between
// launches) for the next launch on the stream.
template <class WriteInputsInOrder>
__device__ __forceinline__ void cta_finish_guarded(merge_guard* guard, bool exact, WriteInputsInOrder write_inputs_in_order) {
  __shared__ bool last, unsorted;
  // The grid barrier's pattern: the CTA's stores are ordered before thread 0's fence and its
  // count, so the last CTA's writes come after every other CTA's.
  __syncthreads();
  if (threadIdx.x == 0) {
    if (!exact) atomicOr(&guard->unsorted, 1);
    __threadfence();
    last = atomicAdd(&guard->done, 1) == (int)gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  if (threadIdx.x == 0) {
    __threadfence();
    unsorted = atomicOr(&guard->unsorted, 0) != 0;
  }
  __syncthreads();
  if (unsorted) write_inputs_in_order();
  if (threadIdx.x == 0) {
    guard->done = 0;
    guard->unsorted = 0;
  }
}

// dst[0, n) = src[0, n), by the NT threads of one CTA.
template <int NT, class T>
__device__ __forceinline__ void cta_copy(const T* src, int64_t n, T* dst) {
  for (int64_t i = threadIdx.x; i < n; i += NT) dst[i] = src[i];
}

}  // namespace mergepath

// Thread and warp layer: Merge Path searches.
//
// The merge path of A and B crosses cross-diagonal `diag` at (a, diag - a); `merge_path`
// returns that `a`. Ties go to A (A's element of an equal pair is output first), which makes
// the merge stable. The index type is a template parameter: `int` inside a tile (shared
// memory), `int64_t` over global memory.
#pragma once
#include <stdint.h>

namespace mergepath {

// Does A[i] go out before B[j] in a stable merge? (A wins ties.)
template <class K, class Comp>
__device__ __forceinline__ bool a_goes_first(K a_key, K b_key, Comp comp) {
  return !comp(b_key, a_key);
}

// Binary search of one cross-diagonal, one thread.
template <class Index, class KeysA, class KeysB, class Comp>
__device__ __forceinline__ Index merge_path(KeysA a, Index a_count, KeysB b, Index b_count,
                                            Index diag, Comp comp) {
  Index begin = diag > b_count ? diag - b_count : 0;
  Index end = diag < a_count ? diag : a_count;
  while (begin < end) {
    Index mid = begin + ((end - begin) >> 1);
    if (a_goes_first(a[mid], b[diag - 1 - mid], comp)) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

// The same search by a whole warp: each step the 32 lanes probe 32 points of the remaining
// range and a ballot keeps the one gap that holds the crossing, so a range of length L takes
// about log33(L) dependent global loads instead of log2(L). Over 2^25 keys that is 5 rounds of
// memory latency instead of 25, which matters because every tile waits for its partition.
// All 32 lanes must call it with the same arguments; every lane returns the result.
template <class KeysA, class KeysB, class Comp>
__device__ __forceinline__ int64_t warp_merge_path(KeysA a, int64_t a_count, KeysB b,
                                                   int64_t b_count, int64_t diag, Comp comp) {
  const int lane = threadIdx.x & 31;
  int64_t begin = diag > b_count ? diag - b_count : 0;
  int64_t end = diag < a_count ? diag : a_count;
  while (begin < end) {
    // Probe begin + floor(len * (lane + 1) / 33), split to avoid overflow: always < end.
    int64_t len = end - begin;
    int64_t mid = begin + (len / 33) * (lane + 1) + ((len % 33) * (lane + 1)) / 33;
    bool pred = a_goes_first(a[mid], b[diag - 1 - mid], comp);
    // pred is monotone in the probe position: true for a prefix of the lanes.
    unsigned mask = __ballot_sync(0xffffffffu, pred);
    int count = __popc(mask);
    int64_t last_true = __shfl_sync(0xffffffffu, mid, count > 0 ? count - 1 : 0);
    int64_t first_false = __shfl_sync(0xffffffffu, mid, count < 32 ? count : 31);
    if (count > 0) begin = last_true + 1;
    if (count < 32) end = first_false;
  }
  return begin;
}

}  // namespace mergepath

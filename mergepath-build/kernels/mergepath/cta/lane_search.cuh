// CTA layer: searches by a group of lanes of a warp (a power of two up to 32), for kernels
// whose searches are few and so bound by their chain of dependent loads rather than by the
// sectors they fetch: a small sort's partitions, a four-way pass's boundaries and tile splits.
#pragma once
#include "../thread/search.cuh"

namespace mergepath {

// A group of `lanes` consecutive lanes of a warp (a power of two up to 32) searching together:
// each round every lane probes its own point of the range left, and one ballot keeps the gap
// that holds the answer, so a search over n items takes log(n) / log(lanes + 1) rounds of
// dependent loads instead of log2(n). Where the searches are few (a small sort's partitions),
// that chain of loads, not their traffic, is their time.
struct lane_group {
  int lane, lanes;
  unsigned mask;  // the group's lanes in the warp
  int shift;      // the group's first lane in the warp
  double step;    // this lane's probe as a fraction of the range: (lane + 1) / (lanes + 1)

  __device__ __forceinline__ explicit lane_group(int lanes_) : lanes(lanes_) {
    lane = (int)(threadIdx.x % lanes_);
    shift = (int)(threadIdx.x % 32) / lanes_ * lanes_;
    mask = (lanes_ == 32 ? 0xffffffffu : ((1u << lanes_) - 1)) << shift;
    step = (double)(lane + 1) / (double)(lanes_ + 1);
  }

  // The group's first lane whose `pred` is false (`lanes` where none is), for a predicate true
  // on a prefix of the lanes.
  __device__ __forceinline__ int first_false(bool pred) const {
    const unsigned bits = (__ballot_sync(mask, pred) & mask) >> shift;
    const unsigned all = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    return bits == all ? lanes : __ffs(~bits) - 1;
  }

  // The point this lane probes in [begin, begin + len), len > 0: about len * (lane + 1) /
  // (lanes + 1) in, rising with the lane (in floating point: a 64-bit division by a lane
  // count known only at run time costs more than the search's loads).
  __device__ __forceinline__ int64_t probe(int64_t begin, int64_t len) const {
    const int64_t m = begin + (int64_t)((double)len * step);
    return m < begin + len ? m : begin + len - 1;
  }

  // Lane `f - 1`'s `v` (the last lane taking, given `f` = first_false) and lane `f`'s (the first
  // not taking), on every lane of the group; lane 0's where there is no such lane.
  template <class T>
  __device__ __forceinline__ T at_last_taking(T v, int f) const {
    return __shfl_sync(mask, v, f > 0 ? f - 1 : 0, lanes);
  }
  template <class T>
  __device__ __forceinline__ T at_first_not(T v, int f) const {
    return __shfl_sync(mask, v, f < lanes ? f : 0, lanes);
  }

  // Narrows [begin, end) to the gap holding the first point whose `takes` is false, given this
  // lane's probe `m` and whether it takes: the gap after the last probe that took (begin) and
  // up to the first that did not (end). The same on every lane of the group.
  __device__ __forceinline__ void narrow(int64_t& begin, int64_t& end, int64_t m, bool takes) const {
    const int f = first_false(takes);
    const int64_t last_taking = at_last_taking(m, f);
    const int64_t first_not = at_first_not(m, f);
    if (f > 0) begin = last_taking + 1;
    if (f < lanes) end = first_not;
  }
};

// merge_path by a lane group: the crossing of diagonal `diag` of the merge path of x and y,
// the same on every lane (ties to x, as merge_path).
template <class K, class Comp>
__device__ __forceinline__ int64_t group_merge_path(const lane_group& g, const K* x, int64_t x_count, const K* y,
                                                    int64_t y_count, int64_t diag, Comp comp) {
  int64_t begin = diag > y_count ? diag - y_count : 0;
  int64_t end = diag < x_count ? diag : x_count;
  while (begin < end) {
    const int64_t m = g.probe(begin, end - begin);
    g.narrow(begin, end, m, a_goes_first(x[m], y[diag - 1 - m], comp));
  }
  return begin;
}

// sorted_bound2 by a lane group: the items of each of two sorted runs that go before `key`
// (Upper: those not after it), both searches in the same rounds.
template <bool Upper, class K, class Comp>
__device__ __forceinline__ void group_bound2(const lane_group& g, const K* keys0, int64_t count0, const K* keys1,
                                             int64_t count1, K key, int64_t& bound0, int64_t& bound1, Comp comp) {
  int64_t b0 = 0, e0 = count0, b1 = 0, e1 = count1;
  const auto before = [&](const K& k) { return Upper ? !comp(key, k) : comp(k, key); };
  while (b0 < e0 || b1 < e1) {
    // A finished search probes nothing and narrows nothing (its range is empty).
    const bool live0 = b0 < e0, live1 = b1 < e1;
    const int64_t m0 = live0 ? g.probe(b0, e0 - b0) : b0, m1 = live1 ? g.probe(b1, e1 - b1) : b1;
    const bool takes0 = live0 && before(keys0[m0]);
    const bool takes1 = live1 && before(keys1[m1]);
    if (live0) g.narrow(b0, e0, m0, takes0);
    if (live1) g.narrow(b1, e1, m1, takes1);
  }
  bound0 = b0;
  bound1 = b1;
}

}  // namespace mergepath

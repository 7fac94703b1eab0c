// Kernel layer: the bodies of the multiway merge kernels. Coarse partitions, one CTA per
// output tile boundary (cta_multiway_split), then one CTA per output tile: the tile's slice of
// every input, in input order, is one sequence of sorted runs, and its stable sort
// (cta_sort_tile) is the stable k-way merge of the slices.
#pragma once
#include "../cta/multiway.cuh"
#include "../cta/scan.cuh"
#include "../cta/tile.cuh"
#include "mergesort.cuh"  // cta_sort_tile

namespace mergepath {

// splits[p * ways .. p * ways + ways) = the split at output rank min(p * spacing, total), for
// p = blockIdx.x < num_partitions.
template <int NT, class K, class Comp>
__device__ __forceinline__ void multiway_partitions_body(const K* const* inputs, const int64_t* counts, int ways,
                                                         int64_t total, int64_t spacing, int64_t num_partitions,
                                                         int64_t* splits, Comp comp) {
  __shared__ multiway_split_shared<K> shared;
  const int64_t p = blockIdx.x;
  if (p >= num_partitions) return;
  const int64_t rank = p * spacing < total ? p * spacing : total;
  cta_multiway_split<NT>(inputs, counts, ways, rank, total, splits + p * ways, shared, comp);
}

// A tile's slice of the inputs as one sequence: position i is in input t where
// start[t] <= i < start[t + 1], at inputs[t][begin[t] + i - start[t]] (begin: the tile's first
// split row). `start` is in shared memory.
template <class T>
struct multiway_tile_reader {
  const T* const* inputs;
  const int64_t* begin;
  const int* start;
  int ways;
  __device__ __forceinline__ int input_of(int i) const {
    int lo = 0, hi = ways;  // the last t with start[t] <= i
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (start[mid] <= i) lo = mid;
      else hi = mid;
    }
    return lo;
  }
  __device__ __forceinline__ T operator[](int i) const {
    const int t = input_of(i);
    return inputs[t][begin[t] + (i - start[t])];
  }
};

// Output tile blockIdx.x (NT * VT items) of the stable merge of the inputs, between split rows
// blockIdx.x and blockIdx.x + 1. Each input's slice is clamped into the input and to a
// non-negative length, and the tile to its output range, so splits of unsorted inputs give an
// unspecified order of input items, never an access out of bounds.
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void multiway_merge_tile(const K* const* inputs, const V* const* values, const int64_t* counts,
                                                    int ways, int64_t total, const int64_t* splits, K* out,
                                                    V* out_vals, Comp comp) {
  constexpr int NV = NT * VT;
  constexpr int PER_THREAD = (MULTIWAY_MAX_WAYS + NT - 1) / NT;
  __shared__ K shared_keys[NV];
  __shared__ int shared_positions[HasValues ? NV : 1];
  __shared__ int start[MULTIWAY_MAX_WAYS + 1];
  __shared__ int64_t begin[MULTIWAY_MAX_WAYS];
  __shared__ scan_shared<NT> scan;
  const int64_t tile = blockIdx.x;
  const int64_t diag0 = tile * NV;
  const int n_out = total - diag0 < NV ? (int)(total - diag0) : NV;
  const int64_t* row0 = splits + tile * ways;
  const int64_t* row1 = row0 + ways;
  // Thread tid owns inputs [tid * PER_THREAD, ...): their slice lengths, scanned in input order.
  int64_t len[PER_THREAD];
  int64_t mine = 0;
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    const int t = (int)threadIdx.x * PER_THREAD + j;
    len[j] = 0;
    if (t >= ways) continue;
    const int64_t n = counts[t];
    int64_t b = row0[t], e = row1[t];
    b = b < 0 ? 0 : (b > n ? n : b);
    e = e < b ? b : (e > n ? n : e);
    begin[t] = b;
    len[j] = e - b < NV ? e - b : NV;
    mine += len[j];
  }
  int64_t sum;
  int64_t offset = cta_exclusive_scan<NT>(mine, sum, scan);
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    const int t = (int)threadIdx.x * PER_THREAD + j;
    if (t >= ways) continue;
    start[t] = offset < NV ? (int)offset : NV;
    offset += len[j];
  }
  __syncthreads();
  const int n = sum < n_out ? (int)sum : n_out;
  if (n == 0) return;  // the same in every thread
  const multiway_tile_reader<K> keys_in{inputs, begin, start, ways};
  const multiway_tile_reader<V> values_in{values, begin, start, ways};
  cta_sort_tile<NT, VT, HasValues>(keys_in, values_in, n, out + diag0, HasValues ? out_vals + diag0 : out_vals, shared_keys,
                                   shared_positions, comp);
}

}  // namespace mergepath

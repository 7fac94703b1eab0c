// Kernel layer: the merges' fallback for unsorted inputs (cta/guard.cuh). Launched after a
// guarded merge's tiles as their programmatic dependent: where no tile reported its share
// inexact it returns at once; otherwise it writes the inputs one after another over the whole
// output, keys and values, and resets the guard. Key-independent: items are moved as bytes.
#pragma once
#include <mergepath/contract.cuh>  // merge_guard
#include "merge.cuh"               // wait_for_previous_kernel

namespace mergepath {

// One input of a fallback: its keys and values (null: none) as bytes, and its item count.
struct fallback_input {
  const unsigned char* keys;
  const unsigned char* values;
  int64_t count;
};

// dst[0, bytes) = src[0, bytes), by the whole grid.
__device__ __forceinline__ void grid_copy_bytes(const unsigned char* src, int64_t bytes, unsigned char* dst) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += stride) dst[i] = src[i];
}

// The fallback over `ways` inputs (`input(t)` a fallback_input) into out_keys (and out_values,
// with value_bytes > 0). The guard is read once by every CTA before any resets it: the last
// CTA to finish resets it (zero between launches).
template <class Input>
__device__ __forceinline__ void merge_fallback_body(merge_guard* guard, int64_t ways, Input input, int64_t key_bytes,
                                                    int64_t value_bytes, unsigned char* out_keys,
                                                    unsigned char* out_values) {
  __shared__ bool reported;
  wait_for_previous_kernel();
  // One atomic read per CTA, through L2 where the tiles' reports are (one per thread queued
  // 67,584 at one address: 50 us a merge on an H100).
  if (threadIdx.x == 0) reported = atomicOr(&guard->unsorted, 0) != 0;
  __syncthreads();
  if (!reported) return;  // no tile reported
  int64_t offset = 0;
  for (int64_t t = 0; t < ways; ++t) {
    const fallback_input in = input(t);
    grid_copy_bytes(in.keys, in.count * key_bytes, out_keys + offset * key_bytes);
    if (value_bytes > 0) grid_copy_bytes(in.values, in.count * value_bytes, out_values + offset * value_bytes);
    offset += in.count;
  }
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&guard->done, 1) == (int)gridDim.x - 1) {
    guard->done = 0;
    guard->unsorted = 0;
  }
}

}  // namespace mergepath

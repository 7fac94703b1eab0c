// Kernel layer: the runs of equal packed words in a record sort. After the sort by a word of
// the order, the items tied on every word so far form runs; the next word needs sorting only
// inside them. A run starts at a head (the first item, or one whose word differs from the
// item's before it, now or at an earlier word); the heads' positions, compacted, are the
// offsets of the segments the next word's segmented sort takes. Two launches over the same
// chunks of items, one CTA each: the heads and their count per chunk (which the host sums: no
// second launch where every item is a head), then each chunk's heads written at the count of
// the chunks before it.
#pragma once
#include "../cta/scan.cuh"

namespace mergepath {

template <int NT>
__device__ __forceinline__ void record_heads_body(const record_heads_params& p) {
  __shared__ scan_shared<NT> shared;
  const int64_t begin = (int64_t)blockIdx.x * p.chunk;
  const int64_t end = p.count - begin < p.chunk ? p.count : begin + p.chunk;
  int64_t mine = 0;
  for (int64_t i = begin + threadIdx.x; i < end; i += NT) {
    const bool head = i == 0 || p.order[i] != p.order[i - 1] || (!p.first && p.heads[i]);
    p.heads[i] = head;
    mine += head;
  }
  int64_t total;
  cta_exclusive_scan<NT>(mine, total, shared);
  if (threadIdx.x == 0) p.chunk_heads[blockIdx.x] = total;
}

template <int NT>
__device__ __forceinline__ void record_segments_body(const record_segments_params& p) {
  __shared__ scan_shared<NT> shared;
  int64_t before = 0;  // the heads of the chunks before this one
  for (int64_t c = threadIdx.x; c < blockIdx.x; c += NT) before += p.chunk_heads[c];
  int64_t base;
  cta_exclusive_scan<NT>(before, base, shared);
  const int64_t begin = (int64_t)blockIdx.x * p.chunk;
  const int64_t end = p.count - begin < p.chunk ? p.count : begin + p.chunk;
  for (int64_t first = begin; first < end; first += NT) {
    const int64_t i = first + threadIdx.x;
    const int64_t head = i < end && p.heads[i];
    int64_t heads;
    const int64_t at = cta_exclusive_scan<NT>(head, heads, shared);
    if (head) p.offsets[base + at] = (uint64_t)i;
    base += heads;
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) p.offsets[base] = (uint64_t)p.count;
}

}  // namespace mergepath

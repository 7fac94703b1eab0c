// Kernel layer: the runs of equal packed words in a record sort. After the sort by a word of
// the order, the items tied on every word so far form runs; the next word needs sorting only
// inside them. A run starts at a head (the first item, or one whose word differs from the
// item's before it, now or at an earlier word); the heads' positions, compacted, are the
// offsets of the segments the next word's segmented sort takes. The host does not learn how
// many there are (that would wait for the GPU): the offsets array always has n + 1 entries, those
// past the heads all n (empty segments at the end). Two launches over the same chunks of items,
// one CTA each: the heads and their count per chunk, then each chunk's heads written at the
// count of the chunks before it, and the chunk's share of the empty tail. Where no items tie,
// every offset is n: all segments empty, so the segmented sort and the next word's packing
// (which reads offsets[0]) return at once instead of sorting n runs of one item. The heads of
// keys equal under a comparator (records by a custom one, through their addresses) come the
// same way, from the comparator instead of the words.
#pragma once
#include "../cta/scan.cuh"

namespace mergepath {

// heads[i] = is_head(i) over chunk blockIdx.x of p's items (record_heads_params or
// comparator_heads_params), and the chunk's count of heads.
template <int NT, class P, class IsHead>
__device__ __forceinline__ void heads_body(const P& p, IsHead is_head) {
  __shared__ scan_shared<NT> shared;
  const int64_t begin = (int64_t)blockIdx.x * p.chunk;
  const int64_t end = p.count - begin < p.chunk ? p.count : begin + p.chunk;
  int64_t mine = 0;
  for (int64_t i = begin + threadIdx.x; i < end; i += NT) {
    const bool head = i == 0 || is_head(i);
    p.heads[i] = head;
    mine += head;
  }
  int64_t total;
  cta_exclusive_scan<NT>(mine, total, shared);
  if (threadIdx.x == 0) p.chunk_heads[blockIdx.x] = total;
}

template <int NT>
__device__ __forceinline__ void record_heads_body(const record_heads_params& p) {
  heads_body<NT>(p, [&](int64_t i) { return p.order[i] != p.order[i - 1] || (!p.first && p.heads[i]); });
}

// The heads of the runs of keys equal under `comp` (neither goes before the other): where a
// key is not equal to the one before, whether the keys are sorted or not.
template <int NT, class K, class Comp>
__device__ __forceinline__ void comparator_heads_body(const comparator_heads_params& p, Comp comp) {
  const K* keys = reinterpret_cast<const K*>(p.keys);
  heads_body<NT>(p, [&](int64_t i) { return comp(keys[i - 1], keys[i]) || comp(keys[i], keys[i - 1]); });
}

template <int NT>
__device__ __forceinline__ void record_segments_body(const record_segments_params& p) {
  __shared__ scan_shared<NT> shared;
  // The heads of the chunks before this one, and of all.
  int64_t before = 0, all = 0;
  for (int64_t c = threadIdx.x; c < gridDim.x; c += NT) {
    const int64_t h = p.chunk_heads[c];
    all += h;
    if (c < blockIdx.x) before += h;
  }
  int64_t base, heads_total;
  cta_exclusive_scan<NT>(before, base, shared);
  cta_exclusive_scan<NT>(all, heads_total, shared);
  const int64_t begin = (int64_t)blockIdx.x * p.chunk;
  const int64_t end = p.count - begin < p.chunk ? p.count : begin + p.chunk;
  // The empty segments at the end: offsets[heads_total .. count] = count, this chunk's share
  // of them (the last chunk also writes offsets[count]); without ties, every offset.
  const int64_t tail_end = blockIdx.x == gridDim.x - 1 ? p.count + 1 : end;
  const int64_t tail_begin = heads_total == p.count ? begin : (begin > heads_total ? begin : heads_total);
  for (int64_t j = tail_begin + threadIdx.x; j < tail_end; j += NT) p.offsets[j] = (uint64_t)p.count;
  if (heads_total == p.count) return;
  for (int64_t first = begin; first < end; first += NT) {
    const int64_t i = first + threadIdx.x;
    const int64_t head = i < end && p.heads[i];
    int64_t heads;
    const int64_t at = cta_exclusive_scan<NT>(head, heads, shared);
    if (head) p.offsets[base + at] = (uint64_t)i;
    base += heads;
  }
}

}  // namespace mergepath

// Kernel layer: the bodies of the segmented sort kernels. Tiles start every `stride` positions;
// each is sorted on its own, so every short segment is sorted whole in one tile, and the long
// segments crossing tile starts are sorted piecewise and then finished by merge levels.
#pragma once
#include "mergesort.cuh"
#include "../cta/pieces.cuh"
#include "../cta/scan.cuh"
#include <type_traits>

namespace mergepath {

// Segmented sort: an item and the segment it is in (numbered from the tile's first segment),
// ordered by segment, then by key, so a tile sorted by segment_order keeps every segment in
// its place and sorts each one.
template <class K> struct segment_item {
  K key;
  int segment;
};
template <class Comp> struct segment_order {
  Comp comp;
  template <class T>
  __device__ __forceinline__ bool operator()(const T& a, const T& b) const {
    return a.segment < b.segment || (a.segment == b.segment && comp(a.key, b.key));
  }
};
// Items equal by segment_order have the same segment and, where Comp is an identity order, the
// same key bits: sorting keys alone by it then needs no stability either (cta_blocksort's
// sorting network).
template <class Comp> struct order_is_identity<segment_order<Comp>> : order_is_identity<Comp> {};

// Segment s as a range of positions, each end clamped into [0, count] and the end to at least
// the start, so any offsets (device ones are not validated) give in-bounds ranges.
struct segment_span {
  int64_t begin, end;
};
__device__ __forceinline__ segment_span segment_at(const int64_t* offsets, int64_t s, int64_t count) {
  int64_t b = offsets[s], e = offsets[s + 1];
  b = b < 0 ? 0 : (b > count ? count : b);
  e = e < b ? b : (e > count ? count : e);
  return {b, e};
}

// The segment holding position p: the last offset not after it, in [-1, num_segments].
__device__ __forceinline__ int64_t segment_of(const int64_t* offsets, int64_t num_segments, int64_t p) {
  return sorted_bound<true>(offsets, num_segments + 1, p, less_t<int64_t>()) - 1;
}

// The tiles of a segmented sort start every `stride` positions, stride = NV - small. A segment
// of at most `small` items crossing a tile's start is taken whole by the tile before, so tile t
// sorts [segmented_tile_start(t), segmented_tile_start(t + 1)): fewer than stride + small = NV
// items, every short segment whole. Only the longer segments are cut at tile starts (pieces)
// and finished by merge levels. The start is kept in [t stride, t stride + small) and in the
// offsets' span, so tiles never overlap, whatever the offsets.
__device__ __forceinline__ int64_t segmented_tile_start(const int64_t* offsets, int64_t num_segments, int64_t count,
                                                        int64_t t, int64_t stride, int64_t small) {
  const int64_t lo = segment_at(offsets, 0, count).begin, end = segment_at(offsets, num_segments - 1, count).end;
  const int64_t hi = end > lo ? end : lo, p = t * stride;
  int64_t start = p;
  if (p > lo && p < hi) {
    const int64_t s = segment_of(offsets, num_segments, p);
    if (s >= 0 && s < num_segments) {
      const segment_span sp = segment_at(offsets, s, count);
      if (sp.begin < p && sp.end > p && sp.end - sp.begin <= small) start = sp.end;
    }
  }
  start = start < p + small ? start : p + small - 1;
  return start < lo ? lo : (start > hi ? hi : start);
}

// Merge levels a segment needs after the tiles are sorted: none for a segment of at most
// `small` items (whole in one tile); else its pieces are the tiles it touches, and level k
// merges pairs of runs of 2^k pieces, so ceil(log2(pieces)).
__device__ __forceinline__ int segment_levels(segment_span sp, int64_t stride, int64_t small) {
  if (sp.end - sp.begin <= small) return 0;
  const int64_t pieces = (sp.end - 1) / stride - sp.begin / stride + 1;
  int levels = 0;
  while ((int64_t(1) << levels) < pieces) ++levels;
  return levels;
}

// The check of host offsets before a segmented sort touches the keys (a grid-stride pass, one
// atomic per warp): result->first_invalid lowered to the first i where offsets[i] >
// offsets[i + 1], or i is the last offset and it passes `count` (the order in which the host's
// own check reports them); result->max_pieces raised to the most tiles a segment longer than
// `small` touches, from which the host takes the levels to launch. Offsets are the host's
// unsigned values.
__device__ __forceinline__ void segment_offsets_check_body(const unsigned long long* offsets, int64_t num_offsets,
                                                           int64_t count, int64_t stride, int64_t small,
                                                           segment_offsets_check* result) {
  unsigned long long first_invalid = ~0ull, max_pieces = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < num_offsets; i += (int64_t)gridDim.x * blockDim.x) {
    const unsigned long long begin = offsets[i];
    const bool last = i + 1 == num_offsets;
    const unsigned long long end = last ? begin : offsets[i + 1];
    if (last ? begin > (unsigned long long)count : begin > end) {
      first_invalid = min(first_invalid, (unsigned long long)i);
    } else if (end - begin > (unsigned long long)small) {
      const unsigned long long pieces = (end - 1) / stride - begin / stride + 1;
      max_pieces = max(max_pieces, pieces);
    }
  }
  for (int d = WARP_THREADS / 2; d > 0; d /= 2) {
    first_invalid = min(first_invalid, __shfl_xor_sync(0xffffffffu, first_invalid, d));
    max_pieces = max(max_pieces, __shfl_xor_sync(0xffffffffu, max_pieces, d));
  }
  if (threadIdx.x % WARP_THREADS == 0) {
    if (first_invalid != ~0ull) atomicMin(&result->first_invalid, first_invalid);
    if (max_pieces > 0) atomicMax(&result->max_pieces, max_pieces);
  }
}

// segment_bound, segment_tile_jobs, segment_merge and segmented_levels_progress, whose sizes
// the host's temp layout holds, are the contract's (contract.cuh).

// Segmented sort, step 0: the start of every tile (one thread per tile start, num_tiles + 1 of
// them); the level count the tile sorts raise and the merge levels' progress counters
// (`progress_words` words), zeroed.
__device__ __forceinline__ void segmented_bounds_body(const int64_t* offsets, int64_t num_segments, int64_t count,
                                                      int64_t stride, int64_t small, int64_t num_tiles,
                                                      segment_bound* bounds, int* max_levels, unsigned int* progress,
                                                      int progress_words) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t == 0) *max_levels = 0;
  if (blockIdx.x == 0)
    for (int i = threadIdx.x; i < progress_words; i += blockDim.x) progress[i] = 0;
  if (t > num_tiles) return;
  const int64_t pos = segmented_tile_start(offsets, num_segments, count, t, stride, small);
  const int64_t s = segment_of(offsets, num_segments, pos);
  bounds[t] = {pos, s, s < 0 || s >= num_segments ? INT64_MAX : segment_at(offsets, s, count).end};
}

// Whether the tile from `lo` to `hi` lies inside one segment, the one holding its first item
// (an empty tile counts as one).
__device__ __forceinline__ bool segmented_tile_in_one_segment(segment_bound lo, segment_bound hi) {
  return lo.segment_end >= hi.pos;
}

// The items of the tile between two bounds: at most NV whatever the offsets.
template <int NV>
__device__ __forceinline__ int segmented_tile_items(segment_bound lo, segment_bound hi) {
  return hi.pos - lo.pos < 0 ? 0 : (hi.pos - lo.pos > NV ? NV : (int)(hi.pos - lo.pos));
}

// Thread 0 of the CTA sorting tile blockIdx.x: the tile's merge jobs (the long segment holding
// its first item, and the one holding its last if it goes on into the next tile), and
// *max_levels raised to the levels they need.
__device__ __forceinline__ void write_segmented_tile_jobs(segment_bound lo, segment_bound hi, int n,
                                                          const int64_t* offsets, int64_t num_segments,
                                                          int64_t count, int64_t stride, int64_t small,
                                                          segment_tile_jobs* jobs, int* max_levels) {
  segment_tile_jobs j = {{-1, -1}, 0};
  for (int e = 0; e < 2 && n > 0; ++e) {
    const int64_t s = e ? hi.segment : lo.segment;
    if (s < 0 || s >= num_segments || (e == 1 && s == j.segment[0])) continue;
    const segment_span sp = segment_at(offsets, s, count);
    if (e == 1 && sp.begin >= hi.pos) continue;
    const int levels = segment_levels(sp, stride, small);
    if (levels > 0) {
      j.segment[e] = s;
      j.levels = levels > j.levels ? levels : j.levels;
    }
  }
  jobs[blockIdx.x] = j;
  if (j.levels > 0) atomicMax(max_levels, (int)j.levels);
}

// The starts of a tile's segments after the first (m of them, tile-local, clamped into [0, n])
// staged in shared memory where they fit (m <= NV; else m = NV + 1 and nothing is staged), and
// what they say: whether a start falls inside the tile (several pieces), and whether every
// piece has at most SHORT_PIECE items with the starts in order (short pieces, sorted by
// counting).
struct segmented_tile_starts {
  int m;
  bool several, short_pieces;
};
template <int NT, int NV, class Start>
__device__ __forceinline__ segmented_tile_starts stage_segmented_tile_starts(const int64_t* offsets, segment_bound lo,
                                                                             segment_bound hi, int n, Start* starts) {
  const int64_t m64 = hi.segment - lo.segment;
  segmented_tile_starts t = {m64 < 0 ? 0 : (m64 > NV ? NV + 1 : (int)m64), true, false};
  if (t.m > NV) return t;
  for (int i = threadIdx.x; i < t.m; i += NT) {
    const int64_t o = offsets[lo.segment + 1 + i];
    starts[i] = (Start)(o < lo.pos ? 0 : (o > lo.pos + n ? n : o - lo.pos));
  }
  __syncthreads();
  bool inner = false, longer = false, down = false;
  for (int k = threadIdx.x; k <= t.m; k += NT) {
    const int prev = k > 0 ? starts[k - 1] : 0, cur = k < t.m ? starts[k] : n;
    inner |= k < t.m && cur > 0 && cur < n;
    longer |= cur - prev > SHORT_PIECE;
    down |= cur < prev;
  }
  t.several = __syncthreads_or(inner);
  t.short_pieces = !__syncthreads_or(longer || down);
  return t;
}

// What the short-pieces launch found about a tile for the items launch.
enum : unsigned char { SEGMENTED_TILE_SORTED = 0, SEGMENTED_TILE_ITEMS = 1 };

// Segmented sort, step 1: sorts tile blockIdx.x (positions [bounds[t].pos, bounds[t + 1].pos),
// at most NT * VT) in place so every segment inside it is sorted and every long segment
// crossing a tile start is sorted piecewise; writes the tile's merge jobs and raises
// *max_levels to the levels they need. Segment s is keys[offsets[s] .. offsets[s + 1]).
// Three launches share the tiles, each a kernel of its own so each runs at its own occupancy:
// - OneSegment: the tiles inside one segment, by mergesort's tile sort;
// - short pieces (this function otherwise): the tiles whose pieces all have at most
//   SHORT_PIECE items, by counting (cta_rank_pieces); it writes every tile's kind;
// - segmented_blocksort_items_tile: the other tiles, by kind.
template <int NT, int VT, bool HasValues, bool OneSegment, class K, class V, class Comp>
__device__ __forceinline__ void segmented_blocksort_tile(K* keys, V* values, int64_t count, const int64_t* offsets,
                                                         int64_t num_segments, int64_t stride,
                                                         const segment_bound* bounds, unsigned char* kinds,
                                                         segment_tile_jobs* jobs, int* max_levels, Comp comp) {
  constexpr int NV = NT * VT;
  static_assert(NV <= 65535, "pieces are numbered in 16 bits");
  const segment_bound lo = bounds[blockIdx.x], hi = bounds[blockIdx.x + 1];
  if (segmented_tile_in_one_segment(lo, hi) != OneSegment) {
    if (!OneSegment && threadIdx.x == 0) kinds[blockIdx.x] = SEGMENTED_TILE_SORTED;
    return;
  }
  const int64_t first = lo.pos;
  const int n = segmented_tile_items<NV>(lo, hi);
  __shared__ int shared_positions[HasValues ? NV : 1];
  if constexpr (OneSegment) {
    if (threadIdx.x == 0)
      write_segmented_tile_jobs(lo, hi, n, offsets, num_segments, count, stride, NV - stride, jobs, max_levels);
    if (n <= 0) return;
    __shared__ K shared_keys[NV];
    cta_sort_tile<NT, VT, HasValues>(keys + first, HasValues ? values + first : values, n, keys + first,
                                     HasValues ? values + first : values, shared_keys, shared_positions, comp);
    return;
  }
  __shared__ struct {
    K keys[NV];
    unsigned short starts[NV], piece[NV], order[NV], owner[NV + 1];
  } shared;
  const segmented_tile_starts ts = stage_segmented_tile_starts<NT, NV>(offsets, lo, hi, n, shared.starts);
  const bool mine = ts.several && ts.short_pieces;
  if (threadIdx.x == 0) {
    kinds[blockIdx.x] = mine ? SEGMENTED_TILE_SORTED : SEGMENTED_TILE_ITEMS;
    if (mine) write_segmented_tile_jobs(lo, hi, n, offsets, num_segments, count, stride, NV - stride, jobs, max_levels);
  }
  if (!mine) return;
  int piece[VT];
  cta_segment_pieces<VT>(shared.starts, ts.m, n, piece);
#pragma unroll
  for (int i = 0; i < VT; ++i)
    if (VT * (int)threadIdx.x + i < n) shared.piece[VT * threadIdx.x + i] = (unsigned short)piece[i];
  cta_load_ranges<NT, VT>(tile_ranges<1, K>{{keys + first}, {0, n}}, n, shared.keys);
  __syncthreads();
  cta_rank_pieces<NT, VT>(shared.keys, shared.starts, shared.piece, shared.order, shared.owner, ts.m, n, comp);
  for (int p = threadIdx.x; p < n; p += NT) {
    const int i = shared.owner[p] < n ? shared.owner[p] : p;
    keys[first + p] = shared.keys[i];
    if constexpr (HasValues) shared_positions[p] = i;
  }
  if constexpr (HasValues) {
    __syncthreads();
    cta_gather_shared<NT, VT, V, true>(shared_positions, tile_ranges<1, V>{{values + first}, {0, n}}, values + first,
                                       n);
  }
}

// Segmented sort, step 1, last launch: the tiles the short-pieces launch marked, sorted by
// (segment, key) as segment_items (or as one segment where only empty segments cut the tile).
// Keys alone with a zip codec (`Words`, thread/codec.cuh: built-in keys of at most 4 bytes)
// sort as u64 words instead, the segment high and the key's order bits low: one compare each.
template <int NT, int VT, bool HasValues, class Words, class K, class V, class Comp>
__device__ __forceinline__ void segmented_blocksort_items_tile(K* keys, V* values, int64_t count,
                                                               const int64_t* offsets, int64_t num_segments,
                                                               int64_t stride, const segment_bound* bounds,
                                                               const unsigned char* kinds, segment_tile_jobs* jobs,
                                                               int* max_levels, Comp comp) {
  constexpr int NV = NT * VT;
  if (kinds[blockIdx.x] != SEGMENTED_TILE_ITEMS) return;
  const segment_bound lo = bounds[blockIdx.x], hi = bounds[blockIdx.x + 1];
  const int64_t first = lo.pos;
  const int n = segmented_tile_items<NV>(lo, hi);
  if (threadIdx.x == 0)
    write_segmented_tile_jobs(lo, hi, n, offsets, num_segments, count, stride, NV - stride, jobs, max_levels);
  if (n <= 0) return;
  using item = segment_item<K>;
  union shared_t {
    item items[NV];
    uint64_t words[NV];
    K keys[NV];
    int starts[NV];
  };
  __shared__ shared_t shared;
  __shared__ int shared_positions[HasValues ? NV : 1];
  const segmented_tile_starts ts = stage_segmented_tile_starts<NT, NV>(offsets, lo, hi, n, shared.starts);
  if (!ts.several) {
    cta_sort_tile<NT, VT, HasValues>(keys + first, HasValues ? values + first : values, n, keys + first,
                                     HasValues ? values + first : values, shared.keys, shared_positions, comp);
    return;
  }
  // Each item's segment, numbered from lo.segment: from the staged starts where they fit
  // shared memory (always, but for runs of empty segments), else by walking the offsets in
  // global memory.
  const int64_t s0 = lo.segment;
  int segment[VT];
  if (ts.m <= NV) {
    cta_segment_pieces<VT>(shared.starts, ts.m, n, segment);
  } else {
    const int p0 = VT * (int)threadIdx.x < n ? VT * (int)threadIdx.x : n - 1;
    int64_t s = segment_of(offsets, num_segments, first + p0);
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int at = VT * (int)threadIdx.x + i < n ? VT * (int)threadIdx.x + i : n - 1;
      while (s + 1 < num_segments && offsets[s + 1] <= first + at) ++s;
      segment[i] = (int)(s - s0);
    }
  }
  __syncthreads();
  K loaded[VT];
  cta_load_thread_order<NT, VT>(keys + first, n, reinterpret_cast<K*>(shared.items), loaded);
  __syncthreads();
  int positions[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) positions[i] = VT * (int)threadIdx.x + i;
  if constexpr (!HasValues && !std::is_void_v<Words>) {
    uint64_t words[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) words[i] = (uint64_t)segment[i] << 32 | Words::zip(loaded[i], 0) >> 32;
    cta_blocksort<NT, VT, false>(words, positions, n, shared.words, shared_positions, less_t<uint64_t>());
#pragma unroll
    for (int i = 0; i < VT; ++i) loaded[i] = Words::key(words[i] << 32);
  } else {
    item items[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) items[i] = item{loaded[i], segment[i]};
    cta_blocksort<NT, VT, HasValues>(items, positions, n, shared.items, shared_positions, segment_order<Comp>{comp});
#pragma unroll
    for (int i = 0; i < VT; ++i) loaded[i] = items[i].key;
  }
  cta_store_thread_order<NT, VT>(loaded, reinterpret_cast<K*>(shared.items), keys + first, n);
  if constexpr (HasValues) {
    cta_gather_values<NT, VT, V, true>(positions, shared_positions, tile_ranges<1, V>{{values + first}, {0, n}},
                                        values + first, n);
  }
}

// Calls f(span, levels, out_begin, out_end) for each job of tile `tile`: the segment, the
// merge levels it needs, and the tile's share of it, [tile stride, (tile + 1) stride).
template <class F>
__device__ __forceinline__ void for_each_tile_job(const segment_tile_jobs& j, int64_t tile, const int64_t* offsets,
                                                  int64_t count, int64_t stride, int64_t small, F f) {
  const int64_t t0 = tile * stride;
#pragma unroll 1
  for (int e = 0; e < 2; ++e) {
    const int64_t s = e ? j.segment[1] : j.segment[0];
    if (s < 0) continue;
    const segment_span sp = segment_at(offsets, s, count);
    f(sp, segment_levels(sp, stride, small), t0 > sp.begin ? t0 : sp.begin, t0 + stride < sp.end ? t0 + stride : sp.end);
  }
}

// The pair of runs that merge level `level` merges for a segment's share of tile `tile`:
// A = [a_begin, b_begin), B = [b_begin, b_end), each 2^level pieces counted from the tile
// holding the segment's start.
struct segment_level_runs {
  int64_t a_begin, b_begin, b_end;
};
__device__ __forceinline__ segment_level_runs segment_runs_at(segment_span sp, int64_t tile, int level,
                                                              int64_t stride) {
  const int64_t first_tile = sp.begin / stride, pair = (tile - first_tile) >> (level + 1);
  const int64_t pair_begin = (first_tile + (pair << (level + 1))) * stride, run = stride << level;
  return {pair_begin > sp.begin ? pair_begin : sp.begin, pair_begin + run < sp.end ? pair_begin + run : sp.end,
          pair_begin + 2 * run < sp.end ? pair_begin + 2 * run : sp.end};
}

// What tile `tile` merges at level `level` for its job `job` (0 or 1): the two ends of the
// tile's share of the job's segment on the merge path of its pair of runs (out_begin < 0:
// nothing, the job's segment needing no such level).
template <class K, class Comp>
__device__ __forceinline__ segment_merge segmented_level_split(const K* keys, int64_t count, const int64_t* offsets,
                                                               int64_t stride, int64_t small,
                                                               const segment_tile_jobs& j, int64_t tile, int job,
                                                               int level, Comp comp) {
  const int64_t s = job ? j.segment[1] : j.segment[0];
  if (j.levels <= level || s < 0) return {0, 0, 0, 0, -1};
  const segment_span sp = segment_at(offsets, s, count);
  if (segment_levels(sp, stride, small) <= level) return {0, 0, 0, 0, -1};
  const int64_t t0 = tile * stride;
  const int64_t out_begin = t0 > sp.begin ? t0 : sp.begin, out_end = t0 + stride < sp.end ? t0 + stride : sp.end;
  const segment_level_runs runs = segment_runs_at(sp, tile, level, stride);
  const int64_t a_count = runs.b_begin - runs.a_begin, b_count = runs.b_end - runs.b_begin;
  const K* a = keys + runs.a_begin;
  const int64_t d0 = out_begin - runs.a_begin, d1 = out_end - runs.a_begin;
  const int64_t a0 = merge_path<PARTITION_PROBES>(a, a_count, a + a_count, b_count, d0, comp);
  const int64_t a1 = merge_path<PARTITION_PROBES>(a, a_count, a + a_count, b_count, d1, comp);
  const merge_range r = merge_range_between(runs.a_begin, a_count, runs.b_begin, b_count, d0, d1, a0, a1);
  return {r.a_begin, r.a_end, r.b_begin, r.b_end, out_begin};
}

// Merges the slices of `m` (out_begin >= 0) from the keys_in buffer into the same positions of
// keys_out, with values where HasValues.
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void segmented_merge_slices(const K* keys_in, const V* values_in, const segment_merge& m,
                                                       K* keys_out, V* values_out, Comp comp) {
  const merge_range r = {m.a_begin, m.a_end, m.b_begin, m.b_end};
  merge_tile_range<NT, VT, HasValues>(keys_in, values_in, keys_in, values_in, r, keys_out + m.out_begin,
                                      HasValues ? values_out + m.out_begin : values_out, comp);
}

// Segmented sort, a merge level launched on its own (the levels a segment of about the mean
// length needs; see segmented_levels_body for the rest), step 1: what each tile merges for
// each of its jobs, one thread per (tile, job). All the level's searches are in flight at once,
// and the merge's CTAs start loading after one read.
template <class K, class Comp>
__device__ __forceinline__ void segmented_level_splits_body(const K* keys, int64_t count, const int64_t* offsets,
                                                            int64_t stride, int64_t small,
                                                            const segment_tile_jobs* jobs, const int* max_levels,
                                                            int level, segment_merge* merges, Comp comp) {
  if (level >= *max_levels) return;
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, tile = g / 2;
  if (tile * stride >= count) return;
  merges[g] = segmented_level_split(keys, count, offsets, stride, small, jobs[tile], tile, (int)(g % 2), level, comp);
}

// Step 2: merge blockIdx.x of step 1, from keys_in into keys_out (same positions). One CTA per
// merge, as mergesort's passes: a CTA looping over merges needs more registers (96 against 48
// for 4-byte keys) and measured a level at 0.22-0.4 ms against 0.19 ms (BENCHMARKS.md).
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void segmented_merge_level_tile(const K* keys_in, const V* values_in, int level,
                                                           const int* max_levels, const segment_merge* merges,
                                                           K* keys_out, V* values_out, Comp comp) {
  if (level >= *max_levels) return;
  const segment_merge m = merges[blockIdx.x];
  if (m.out_begin >= 0) segmented_merge_slices<NT, VT, HasValues>(keys_in, values_in, m, keys_out, values_out, comp);
}


// Segmented sort, the merge levels from `first_level` on and the copy back, in one launch of
// resident CTAs, so levels that turn out not to be needed (a call with device offsets must
// allow for the longest possible segment) cost nothing, where a launch per level costs its
// CTAs (12 us for an empty level at 2^26). Work items are handed out in order by a counter:
// for each level from first_level below *max_levels, its splits (NT of
// the tiles' jobs per item: where each tile's share of its pair of runs starts and ends on the
// merge path) then its merges (one tile's job per item, from the level's input buffer into the
// other, same positions; runs are counted from the tile holding the segment's start, so they
// are the pieces the tile sort and earlier levels sorted); then the copy back of the segments
// that needed an odd number of levels and so ended in the temporary buffer (one tile per
// item). An item first waits until every item of the phase before it is finished. Items are
// taken in order and wait only on earlier ones, so the earliest unfinished item never waits:
// no deadlock, whatever the number of CTAs resident.
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void segmented_levels_body(K* keys, V* values, K* tmp_keys, V* tmp_values, int64_t count,
                                                      const int64_t* offsets, int64_t stride,
                                                      const segment_tile_jobs* jobs, const int* max_levels,
                                                      int first_level, segment_merge* merges,
                                                      segmented_levels_progress* progress, Comp comp) {
  constexpr int NV = NT * VT;
  const int64_t small = NV - stride;
  const int levels = *max_levels < SEGMENTED_MAX_LEVELS ? *max_levels : SEGMENTED_MAX_LEVELS;
  if (levels <= 0) return;
  const int64_t tiles = (count + stride - 1) / stride, num_merges = 2 * tiles;
  const int64_t split_items = (num_merges + NT - 1) / NT, per_level = split_items + num_merges;
  // Levels first_level.. (none where the launched ones were all), then the copy back.
  const int level0 = first_level < levels ? first_level : levels;
  const int64_t total = (levels - level0) * per_level + tiles;
  __shared__ unsigned long long handed[2];
  // Thread 0's bookkeeping: phases below `ready` are known finished (this CTA has waited for
  // them once); `finished` items of `finished_phase` are this CTA's, not yet counted in done[]
  // (counted once the CTA moves to another phase or runs out of items, before it waits on
  // anything: fences and atomics once per phase instead of once per item).
  int ready = 2 * level0, finished_phase = 0;
  unsigned int finished = 0;
  const auto publish = [&] {
    if (finished == 0) return;
    __threadfence();  // the CTA's writes (ordered before thread 0 by the last barrier) first
    atomicAdd(progress->done + finished_phase, finished);
    finished = 0;
  };
  if (threadIdx.x == 0) handed[0] = atomicAdd(&progress->handed, 1ull);
  __syncthreads();
  // Item = level * per_level + r, followed from the last item (items only grow, by about the
  // number of CTAs: a step or two, where a division would cost more than a small merge).
  int64_t item = 0, r = 0;
  int level = level0;
#pragma unroll 1
  for (int turn = 0;; turn ^= 1) {
    const int64_t next = (int64_t)handed[turn];
    if (next >= total) break;
    for (r += next - item, item = next; r >= per_level; r -= per_level) ++level;
    const int phase = level < levels ? 2 * level + (r >= split_items) : 2 * levels;
    if (threadIdx.x == 0) {
      handed[turn ^ 1] = atomicAdd(&progress->handed, 1ull);  // the next item, fetched while this one runs
      if (phase != finished_phase) publish();
      if (phase > ready) {
        const unsigned int need = (unsigned int)(phase % 2 ? split_items : num_merges);
        const volatile unsigned int* done = progress->done + phase - 1;
        while (*done < need) __nanosleep(200);
        __threadfence();  // the finished phase's writes, for this CTA's reads after the barrier
        ready = phase;
      }
    }
    __syncthreads();
    if (phase == 2 * levels) {
      // Copy back tile r's shares of the segments that needed an odd number of levels.
      for_each_tile_job(jobs[r], r, offsets, count, stride, small,
                        [&](segment_span, int job_levels, int64_t out_begin, int64_t out_end) {
        if (job_levels % 2 == 0) return;
        // A share is at most a tile: all of a thread's loads in flight, then its stores.
        const int len = (int)(out_end - out_begin);
        K k[VT];
        V v[HasValues ? VT : 1];
#pragma unroll
        for (int q = 0; q < VT; ++q) {
          const int i = NT * q + (int)threadIdx.x;
          if (i < len) {
            k[q] = tmp_keys[out_begin + i];
            if constexpr (HasValues) v[q] = tmp_values[out_begin + i];
          }
        }
#pragma unroll
        for (int q = 0; q < VT; ++q) {
          const int i = NT * q + (int)threadIdx.x;
          if (i < len) {
            keys[out_begin + i] = k[q];
            if constexpr (HasValues) values[out_begin + i] = v[q];
          }
        }
      });
    } else {
      const K* keys_in = level % 2 ? tmp_keys : keys;
      if (phase % 2 == 0) {
        const int64_t g = r * NT + threadIdx.x;
        if (g < num_merges) {
          const int64_t tile = g / 2;
          merges[g] = segmented_level_split(keys_in, count, offsets, stride, small, jobs[tile], tile, (int)(g % 2),
                                            level, comp);
        }
      } else {
        const segment_merge m = merges[r - split_items];
        if (m.out_begin >= 0) {
          segmented_merge_slices<NT, VT, HasValues>(keys_in, level % 2 ? tmp_values : values, m,
                                                    level % 2 ? keys : tmp_keys, level % 2 ? values : tmp_values,
                                                    comp);
        }
      }
      if (threadIdx.x == 0) {
        finished_phase = phase;
        ++finished;
      }
    }
    __syncthreads();  // the item done by every thread, handed[turn] read, before the next
  }
  if (threadIdx.x == 0) publish();
}

}  // namespace mergepath

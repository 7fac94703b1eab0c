// Kernel layer: the bodies of the mergesort kernels. A sort is one blocksort pass (every tile
// sorted on its own) and then merge passes over sorted runs of `run` items. A two-way pass
// merges pairs of runs ("frames" of 2 * run items) with one coarse merge-path partition per
// output tile, searched inside the tile's frame. A four-way pass merges frames of four runs
// A, B, C, D as (A + B) + (C + D) inside each CTA, on full output tiles whose exact splits of
// the four runs are found inside brackets of coarse sample boundaries (see
// mergesort4_boundaries_body and mergesort4_tile_splits_body), so no global pass ever
// materializes A + B.
#pragma once
#include "kernel_merge.cuh"

namespace mergepath {

// The pair of runs that output position `diag` of a merge pass falls in: A is
// keys[begin, begin + a_count), B follows it with b_count items.
struct mergesort_frame {
  int64_t begin, a_count, b_count;
};

__device__ __forceinline__ mergesort_frame find_mergesort_frame(int64_t count, int64_t run, int64_t diag) {
  mergesort_frame f;
  f.begin = diag / (2 * run) * (2 * run);
  f.a_count = count - f.begin < run ? count - f.begin : run;
  const int64_t rest = count - f.begin - f.a_count;
  f.b_count = rest < run ? rest : run;
  return f;
}

// Where the merge path of diagonal `diag`'s frame crosses it, as an A index local to the frame.
template <class K, class Comp>
__device__ __forceinline__ int64_t mergesort_partition(const K* keys, int64_t count, int64_t run,
                                                       int64_t diag, Comp comp) {
  const mergesort_frame f = find_mergesort_frame(count, run, diag);
  const K* a = keys + f.begin;
  return merge_path<PARTITION_PROBES>(a, f.a_count, a + f.a_count, f.b_count, diag - f.begin, comp);
}

// partitions[p] = where the merge path of p's frame crosses p's diagonal, min(p * spacing,
// count), as an A index local to the frame. `run` must be a multiple of `spacing`, so no tile
// straddles two frames.
template <class K, class Comp>
__device__ __forceinline__ void mergesort_partitions_body(const K* keys, int64_t count, int64_t spacing,
                                                          int64_t run, int64_t num_partitions,
                                                          int64_t* partitions, Comp comp) {
  const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_partitions) return;
  const int64_t diag = p * spacing < count ? p * spacing : count;
  partitions[p] = mergesort_partition(keys, count, run, diag, comp);
}

// The slices of the input that output tile `tile` of a merge pass merges (global indices), from
// the tile's start and end partitions. A tile ending at its frame's end takes the frame's whole
// A run: the partition at that diagonal belongs to the next frame.
__device__ __forceinline__ merge_range mergesort_range(int64_t count, int64_t run, int64_t tile, int nv,
                                                       int64_t part0, int64_t part1) {
  const int64_t diag0 = tile * nv;
  const int64_t diag1 = diag0 + nv < count ? diag0 + nv : count;
  const mergesort_frame f = find_mergesort_frame(count, run, diag0);
  const int64_t end_local = diag1 - f.begin;
  const int64_t a1 = end_local == f.a_count + f.b_count ? f.a_count : part1;
  return merge_range_between(f.begin, f.a_count, f.begin + f.a_count, f.b_count, diag0 - f.begin, end_local, part0, a1);
}

// Sorts the n <= NT * VT keys keys_in[0..n) (and their values) into keys_out, which may be
// keys_in itself, through cta_blocksort: mergesort's first pass on one tile. Keys are read
// and written through pointers or through an encoding_reader / decoding_writer.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysIn, class KeysOut>
__device__ __forceinline__ void cta_sort_tile(KeysIn keys_in, const V* values_in, int n, KeysOut keys_out, V* values_out,
                                              K* shared_keys, int* shared_positions, Comp comp) {
  K keys[VT];
  int positions[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) positions[i] = VT * (int)threadIdx.x + i;
  cta_load_thread_order<NT, VT>(keys_in, n, shared_keys, keys);
  cta_blocksort<NT, VT, HasValues>(keys, positions, n, shared_keys, shared_positions, comp);
  cta_store_thread_order<NT, VT>(keys, shared_keys, keys_out, n);
  if constexpr (HasValues) {
    cta_gather_values<NT, VT, V, true>(positions, shared_positions, tile_ranges<1, V>{{values_in}, {0, n}},
                                        values_out, n);
  }
}

// Sorts tile blockIdx.x of keys_in[0..count) (NT * VT items) into the same place of keys_out,
// which may be keys_in itself, staging it in `shared_keys` (and `shared_positions`), NT * VT
// slots each. With HasValues, values follow their keys: they are gathered once, through the
// sorted keys' source positions (values_out may be values_in too). Keys are read and written
// through pointers or an encoding_reader / decoding_writer.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysIn, class KeysOut>
__device__ __forceinline__ void blocksort_tile_in(KeysIn keys_in, const V* values_in, int64_t count,
                                                  KeysOut keys_out, V* values_out, K* shared_keys,
                                                  int* shared_positions, Comp comp) {
  constexpr int NV = NT * VT;
  const int64_t first = (int64_t)blockIdx.x * NV;
  const int n = count - first < NV ? (int)(count - first) : NV;
  cta_sort_tile<NT, VT, HasValues>(keys_in + first, HasValues ? values_in + first : values_in, n, keys_out + first,
                                   HasValues ? values_out + first : values_out, shared_keys, shared_positions, comp);
}

// blocksort_tile_in with the tile in static shared memory.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysIn, class KeysOut>
__device__ __forceinline__ void blocksort_tile(KeysIn keys_in, const V* values_in, int64_t count,
                                               KeysOut keys_out, V* values_out, Comp comp) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ int shared_positions[HasValues ? NV : 1];
  blocksort_tile_in<NT, VT, HasValues>(keys_in, values_in, count, keys_out, values_out, shared_keys,
                                       shared_positions, comp);
}

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

// Where tile t starts, the segment holding that position (segment_of) and where that segment
// ends (INT64_MAX for none), so a tile learns from its two bounds alone whether it lies inside
// one segment.
struct segment_bound {
  int64_t pos, segment, segment_end;
};

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

// What the merge levels do in tile t: the long segments crossing a tile start that hold the
// tile's first and last items (-1: none; the two may be the same), and the most levels
// either needs.
struct segment_tile_jobs {
  int64_t segment[2];
  int64_t levels;
};

// The piece (of the tile's segments) holding each of a thread's VT items in thread order:
// the number of starts[0..m) at or before the item (starts sorted, in shared memory).
template <int VT, class Start>
__device__ __forceinline__ void cta_segment_pieces(const Start* starts, int m, int n, int (&piece)[VT]) {
  const int p0 = VT * (int)threadIdx.x < n ? VT * (int)threadIdx.x : n - 1;
  int next = sorted_bound<true>(starts, m, p0, less_t<int>());
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int at = VT * (int)threadIdx.x + i < n ? VT * (int)threadIdx.x + i : n - 1;
    while (next < m && starts[next] <= at) ++next;
    piece[i] = next;
  }
}

// c += p as one predicated add (the compiler's own code for it is an add and a select).
__device__ __forceinline__ void count_if(int& c, bool p) {
  asm("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %1, 0;\n\t@q add.s32 %0, %0, 1;\n\t}" : "+r"(c) : "r"((int)p));
}

// Ranks keys[0..n) in shared memory stably within each piece [starts[u - 1], starts[u])
// (starts[-1] = 0, starts[m] = n; piece[i] = item i's u; every piece at most SHORT_PIECE
// items): on return owner[p] (n + 1 slots) is the item that goes to place p, or >= n where a
// comparator that is not a strict weak order left p unclaimed. The keys stay where they are.
//
// Item i goes to its piece's start plus the number of the piece's items ordered before it (one
// comparison per pair of items). A thread counts for a group of GROUP neighbouring items of one
// piece, so each key it loads serves GROUP comparisons; groups are dealt to the threads by
// their piece's length (`order`, n slots of scratch), so a warp's groups loop equally long.
// Equal keys claim one place (the first claim stands: a compare-and-swap, so no two threads'
// stores meet), leaving the places after it unclaimed: each such place is then filled, in
// item order, by the items equal to the one that claimed it (stability).
constexpr int SHORT_PIECE = 64;
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void cta_rank_pieces(const K* keys, const unsigned short* starts, const unsigned short* piece,
                                                unsigned short* order, unsigned short* owner, int m, int n, Comp comp) {
  constexpr int GROUP = sizeof(K) <= 8 ? 4 : 2;
  constexpr unsigned short UNCLAIMED = 0xffff;
  static_assert(VT <= 32, "a bit per place of a thread");
  static_assert(SHORT_PIECE == 64, "two piece lengths per lane of the scan below");
  // Piece u's items [b, e).
  const auto piece_bounds = [&](int u, int& b, int& e) {
    b = u > 0 ? starts[u - 1] : 0;
    e = u < m ? starts[u] : n;
  };
  // Deal the groups by piece length, longest first: each piece takes a place in its length's
  // stretch of `order` (owner[u]: its offset there), the stretches are laid out by a scan of
  // their sizes, and each group goes to its piece's place plus its rank in the piece.
  __shared__ int stretch[SHORT_PIECE + 1];
  if (threadIdx.x < SHORT_PIECE) stretch[threadIdx.x] = 0;
  __syncthreads();
  for (int u = threadIdx.x; u <= m; u += NT) {
    int b, e;
    piece_bounds(u, b, e);
    if (e > b) owner[u] = (unsigned short)atomicAdd(&stretch[SHORT_PIECE - (e - b)], (e - b + GROUP - 1) / GROUP);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x, v0 = stretch[2 * lane], v1 = stretch[2 * lane + 1];
    int sum = v0 + v1;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int o = __shfl_up_sync(0xffffffffu, sum, d);
      if (lane >= d) sum += o;
    }
    stretch[2 * lane] = sum - v0 - v1;
    stretch[2 * lane + 1] = sum - v1;
    if (lane == 31) stretch[SHORT_PIECE] = sum;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += NT) {
    const int u = piece[i];
    int b, e;
    piece_bounds(u, b, e);
    if ((i - b) % GROUP == 0) order[stretch[SHORT_PIECE - (e - b)] + owner[u] + (i - b) / GROUP] = (unsigned short)i;
  }
  __syncthreads();
  const int groups = stretch[SHORT_PIECE];
  for (int p = threadIdx.x; p < n; p += NT) owner[p] = UNCLAIMED;
  __syncthreads();
  // Each item claims its place (of equal keys' claims, one stands).
#pragma unroll 1
  for (int g = threadIdx.x; g < groups; g += NT) {
    const int i = order[g];
    int b, e;
    piece_bounds(piece[i], b, e);
    K x[GROUP];
    int before[GROUP];
#pragma unroll
    for (int k = 0; k < GROUP; ++k) {
      x[k] = keys[i + k < e ? i + k : e - 1];
      before[k] = 0;
    }
#pragma unroll 4
    for (int j = b; j < e; ++j) {
      const K y = keys[j];
#pragma unroll
      for (int k = 0; k < GROUP; ++k) count_if(before[k], comp(y, x[k]));
    }
#pragma unroll
    for (int k = 0; k < GROUP; ++k)  // inside the piece whatever the comparator
      if (i + k < e) atomicCAS(&owner[b + before[k] < e ? b + before[k] : e - 1], UNCLAIMED, (unsigned short)(i + k));
  }
  __syncthreads();
  // Places claimed by equal keys: a claimed place followed by an unclaimed one in its piece.
  unsigned tied = 0;
  for (int p = threadIdx.x, k = 0; p < n; p += NT, ++k) {
    if (owner[p] == UNCLAIMED || p + 1 >= n || owner[p + 1] != UNCLAIMED) continue;
    int b, e;
    piece_bounds(piece[p], b, e);
    if (p + 1 < e) tied |= 1u << k;
  }
  if (__syncthreads_or(tied != 0)) {
    // Each run of unclaimed places is measured (into `order`, free now) before any is filled:
    // the fill of the next run writes the place that ends this one.
    for (int p = threadIdx.x, k = 0; p < n; p += NT, ++k) {
      if (!(tied >> k & 1)) continue;
      int b, e;
      piece_bounds(piece[p], b, e);
      int end = p + 1;
      while (end < e && owner[end] == UNCLAIMED) ++end;
      order[p] = (unsigned short)end;
    }
    __syncthreads();
    for (int p = threadIdx.x, k = 0; p < n; p += NT, ++k) {
      if (!(tied >> k & 1)) continue;
      int b, e;
      piece_bounds(piece[p], b, e);
      const int end = order[p];
      const K x = keys[owner[p]];
      for (int j = b, d = p; j < e && d < end; ++j)
        if (!comp(keys[j], x) && !comp(x, keys[j])) owner[d++] = (unsigned short)j;
    }
    __syncthreads();
  }
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
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
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
  item items[VT];
  int positions[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    items[i] = item{loaded[i], segment[i]};
    positions[i] = VT * (int)threadIdx.x + i;
  }
  cta_blocksort<NT, VT, HasValues>(items, positions, n, shared.items, shared_positions, segment_order<Comp>{comp});
#pragma unroll
  for (int i = 0; i < VT; ++i) loaded[i] = items[i].key;
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

// What one CTA merges for one job at a merge level: the input slices and where the output
// starts (out_begin < 0: nothing).
struct segment_merge {
  int64_t a_begin, a_end, b_begin, b_end, out_begin;
};

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

// How far the merge levels have got: work items handed out, and the items finished in each
// phase (phase 2 l: level l's splits, 2 l + 1: its merges). Zeroed by segmented_bounds_body.
constexpr int SEGMENTED_MAX_LEVELS = 64;
struct segmented_levels_progress {
  unsigned long long handed;
  unsigned int done[2 * SEGMENTED_MAX_LEVELS];
};

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

// One merge pass: output tile blockIdx.x of the pass that merges runs of `run` items. With
// `partitions` null, the CTA searches its own two partitions first (one launch per pass instead
// of two: faster while the passes are small, see BENCHMARKS.md). Keys are written through a
// pointer or a decoding_writer.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysOut>
__device__ __forceinline__ void mergesort_pass_tile(const K* keys_in, const V* values_in, int64_t count,
                                                    int64_t run, const int64_t* partitions, KeysOut keys_out,
                                                    V* values_out, Comp comp) {
  constexpr int NV = NT * VT;
  const int64_t tile = blockIdx.x;
  int64_t part0, part1;
  if (partitions) {
    part0 = partitions[tile];
    part1 = partitions[tile + 1];
  } else {
    __shared__ int64_t searched[2];
    if (threadIdx.x < 2) {
      const int64_t diag = (tile + threadIdx.x) * NV;
      searched[threadIdx.x] = mergesort_partition(keys_in, count, run, diag < count ? diag : count, comp);
    }
    __syncthreads();
    part0 = searched[0];
    part1 = searched[1];
  }
  const merge_range r = mergesort_range(count, run, tile, NV, part0, part1);
  merge_tile_range<NT, VT, HasValues>(keys_in, values_in, keys_in, values_in, r, keys_out + tile * NV,
                                      HasValues ? values_out + tile * NV : values_out, comp);
}

// ---- Four-way passes ----------------------------------------------------------------------

// Frame `frame` of a four-way pass: four runs of `run` items from `begin` (the last frame's
// runs may be short or empty).
struct mergesort4_frame {
  int64_t begin;
  int64_t count[4];
  __device__ __forceinline__ int64_t run_begin(int r) const {
    int64_t b = begin;
#pragma unroll
    for (int i = 0; i < 3; ++i)
      if (i < r) b += count[i];
    return b;
  }
};

__device__ __forceinline__ mergesort4_frame find_mergesort4_frame(int64_t count, int64_t run, int64_t frame) {
  mergesort4_frame f;
  f.begin = frame * 4 * run;
  int64_t rest = count - f.begin;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    f.count[r] = rest < run ? rest : run;
    rest -= f.count[r];
  }
  return f;
}

// Items of each of a frame's four runs that go out before a boundary or a tile (frame-local).
struct split4 {
  int64_t at[4];
};

__device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Segments of a frame: one per boundary, a boundary every `spacing` items of A + B and of C + D.
__device__ __forceinline__ int64_t mergesort4_segments(const mergesort4_frame& f, int64_t spacing) {
  return ceil_div(f.count[0] + f.count[1], spacing) + ceil_div(f.count[2] + f.count[3], spacing);
}

// A point of a pair's merge path: the pair's first and second runs' items before it.
struct path_point {
  int64_t first, second;
};

// The item a pair's merge puts out at path point `p` (not the pair's end).
template <class K, class Comp>
__device__ __forceinline__ K item_at(const K* x, int64_t x_count, const K* y, int64_t y_count, path_point p,
                                     Comp comp) {
  const bool from_x = p.second >= y_count || (p.first < x_count && a_goes_first(x[p.first], y[p.second], comp));
  return from_x ? x[p.first] : y[p.second];
}

// Boundary `j` of a pair of runs P = (p0, p1): the element x at position j * spacing of P's
// merge, as the split of all four runs before x, and x's place among all the frame's
// boundaries. The split of P is P's merge path; the other pair Q's items before x are found by
// one binary search in each of its runs (QAfter: Q is C + D, after P, so its ties with x go
// after x). Every item before x is either among P's first j * spacing or before x in Q, and
// Q's boundary m is before x exactly when m * spacing < (Q's items before x). So the place is
// j + ceil(c / spacing) = ceil(rank / spacing), with c Q's items before x and rank = j *
// spacing + c x's position in the frame's merge.
template <bool QAfter, class K, class Comp>
__device__ __forceinline__ int64_t pair_boundary(const K* p0, int64_t n0, const K* p1, int64_t n1, const K* q0,
                                                 int64_t m0, const K* q1, int64_t m1, int64_t j,
                                                 int64_t spacing, int64_t (&split)[4], Comp comp) {
  const int64_t diag = j * spacing;
  const int64_t a = merge_path<PARTITION_PROBES>(p0, n0, p1, n1, diag, comp);
  const int64_t b = diag - a;
  const K x = item_at(p0, n0, p1, n1, {a, b}, comp);
  int64_t c, d;
  sorted_bound2<!QAfter>(q0, m0, q1, m1, x, c, d, comp);
  split[0] = a;
  split[1] = b;
  split[2] = c;
  split[3] = d;
  return j + ceil_div(c + d, spacing);
}

// The segment boundaries of a four-way pass, one thread each (`num_segments` in all, frame
// after frame; a full frame has 4 * run / spacing). Boundaries are the elements at every
// `spacing`-th position of A + B and of C + D; each is written, as the split of the four runs
// before it, to its place in the frame's boundaries sorted by rank. Between two consecutive
// boundaries there are at most `spacing` items of A + B and `spacing` of C + D: the brackets
// in which mergesort4_tile_splits_body finds the tiles' exact splits. Three binary searches
// per boundary, none nested.
template <class K, class Comp>
__device__ __forceinline__ void mergesort4_boundaries_body(const K* keys, int64_t count, int64_t spacing,
                                                           int64_t run, int64_t num_segments, split4* splits,
                                                           Comp comp) {
  const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= num_segments) return;
  const int64_t per_frame = 4 * run / spacing;
  const int64_t frame = g / per_frame, j = g % per_frame;
  const mergesort4_frame f = find_mergesort4_frame(count, run, frame);
  const K* a = keys + f.begin;
  const K* b = a + f.count[0];
  const K* c = b + f.count[1];
  const K* d = c + f.count[2];
  const int64_t ab_boundaries = ceil_div(f.count[0] + f.count[1], spacing);
  int64_t split[4], slot;
  if (j < ab_boundaries) {
    slot = pair_boundary<true>(a, f.count[0], b, f.count[1], c, f.count[2], d, f.count[3], j, spacing, split, comp);
  } else {
    int64_t s[4];
    slot = pair_boundary<false>(c, f.count[2], d, f.count[3], a, f.count[0], b, f.count[1], j - ab_boundaries,
                                spacing, s, comp);
    split[0] = s[2];
    split[1] = s[3];
    split[2] = s[0];
    split[3] = s[1];
  }
  // Distinct slots for a strict weak order; a comparator that is not one can push a boundary
  // past the frame's last slot (and leave others unwritten: mergesort4_tile_splits_body clamps
  // what it reads).
  const int64_t segments = mergesort4_segments(f, spacing);
  if (slot >= segments) slot = segments - 1;
  split4 out;
#pragma unroll
  for (int r = 0; r < 4; ++r) out.at[r] = split[r];
  splits[frame * per_frame + slot] = out;
}

// Tiles of a frame in a four-way pass: one per `tile` items of its output (the last may be
// short).
__device__ __forceinline__ int64_t mergesort4_tiles(const mergesort4_frame& f, int64_t tile) {
  return ceil_div(f.count[0] + f.count[1] + f.count[2] + f.count[3], tile);
}

// Lanes per output tile in mergesort4_tile_splits_body (a divisor of 32, so a tile's lanes are
// in one warp). Measured on the H100 (u64 keys, 2^26): 2 and 4 alike, 8 and 16 slower (their
// extra probes cost DRAM traffic in the passes over long runs).
constexpr int TILE_SPLIT_LANES = 4;

// Two merge-path searches in lockstep (their loads in flight together): for s = 0, 1, the
// point at diagonal diag[s] of the merge path of runs x[s] and y[s], searched only between
// two known points lo[s] and hi[s] of that path (lo[s].first + lo[s].second <= diag[s] <=
// hi[s].first + hi[s].second).
template <class K, class Comp>
__device__ __forceinline__ void merge_path_between2(const K* const (&x)[2], const K* const (&y)[2],
                                                    const path_point (&lo)[2], const path_point (&hi)[2],
                                                    const int64_t (&diag)[2], path_point (&at)[2], Comp comp) {
  int64_t begin[2], end[2];
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    // The x position is in [lo.first, hi.first] and diag - it in [lo.second, hi.second].
    begin[s] = diag[s] - hi[s].second > lo[s].first ? diag[s] - hi[s].second : lo[s].first;
    end[s] = diag[s] - lo[s].second < hi[s].first ? diag[s] - lo[s].second : hi[s].first;
  }
  while (begin[0] < end[0] || begin[1] < end[1]) {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if (begin[s] < end[s]) {
        const int64_t mid = begin[s] + (end[s] - begin[s]) / 2;
        if (a_goes_first(x[s][mid], y[s][diag[s] - 1 - mid], comp)) begin[s] = mid + 1;
        else end[s] = mid;
      }
    }
  }
#pragma unroll
  for (int s = 0; s < 2; ++s) at[s] = {begin[s], diag[s] - begin[s]};
}

// The exact splits of a four-way pass's output tiles of `tile` = 2 * spacing items, one tile
// per TILE_SPLIT_LANES lanes (`num_tiles` tiles, frame after frame; a full frame has 4 * run /
// tile), each written as the four runs' counts (frame-local) before the tile's first output.
// The frame's coarse boundaries (mergesort4_boundaries_body, `spacing` apart in each pair:
// `coarse`) are in slots ceil(rank / spacing) (see pair_boundary), so the last one at or
// before tile j's first output is slot 2 j and the next slot 2 j + 1 (or the frame's end): a
// bracket with at most `spacing` items of A + B and of C + D between its ends.
//
// The four-way merge is (A + B) merged with (C + D), A + B first on ties, so the split at rank r
// is k items of A + B and r - k of C + D, with k the merge path of the two pairs' merges at
// diagonal r, and each pair's split its own merge path at k (or r - k). k is searched over the
// bracket with one probe per lane at once (TILE_SPLIT_LANES + 1 gaps a round): a probe at m
// compares the item A + B puts out at m with the one C + D puts out at r - 1 - m, each found by
// a merge-path search of its pair, both in lockstep. A round keeps the gap between the last
// probe that took from A + B and the first that did not, and those two probes' path points
// bound every later search of both pairs, so the inner searches shrink with the outer one.
// Against one thread per run (a binary search over its items, each probe three nested bound
// searches), the chain of dependent loads is less than half as long.
template <class K, class Comp>
__device__ __forceinline__ void mergesort4_tile_splits_body(const K* keys, int64_t count, int64_t spacing,
                                                            int64_t run, const split4* coarse, int64_t num_tiles,
                                                            split4* splits, Comp comp) {
  constexpr int G = TILE_SPLIT_LANES;
  const int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
  if (g >= num_tiles) return;  // the tile's lanes leave together
  const int lane = (int)(threadIdx.x % G);
  const unsigned group = (G == 32 ? 0xffffffffu : ((1u << G) - 1)) << ((threadIdx.x % 32) / G * G);
  const int64_t tile = 2 * spacing, per_frame = 4 * run / tile, frame = g / per_frame, j = g % per_frame;
  const mergesort4_frame f = find_mergesort4_frame(count, run, frame);
  const split4* bounds = coarse + frame * (4 * run / spacing);
  split4 lo = bounds[2 * j], hi;
  if (2 * j + 1 < mergesort4_segments(f, spacing)) hi = bounds[2 * j + 1];
  else
#pragma unroll
    for (int r = 0; r < 4; ++r) hi.at[r] = f.count[r];
  // Inside the runs and lo <= hi, as they are for a strict weak order. (A comparator that is
  // not one can leave slots unwritten or out of order; so clamped, every search below stays
  // inside the bracket whatever the comparator says, and the split inside the runs.)
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    lo.at[r] = lo.at[r] < 0 ? 0 : (lo.at[r] > f.count[r] ? f.count[r] : lo.at[r]);
    hi.at[r] = hi.at[r] < lo.at[r] ? lo.at[r] : (hi.at[r] > f.count[r] ? f.count[r] : hi.at[r]);
  }
  const int64_t rank = j * tile;
  const K* const x[2] = {keys + f.run_begin(0), keys + f.run_begin(2)};
  const K* const y[2] = {keys + f.run_begin(1), keys + f.run_begin(3)};
  const int64_t x_count[2] = {f.count[0], f.count[2]}, y_count[2] = {f.count[1], f.count[3]};
  // Known path points: pair 0 (A + B) at diagonals <= and >= every probe m, pair 1 (C + D) at
  // diagonals <= and >= r - 1 - m.
  path_point below[2] = {{lo.at[0], lo.at[1]}, {lo.at[2], lo.at[3]}};
  path_point above[2] = {{hi.at[0], hi.at[1]}, {hi.at[2], hi.at[3]}};
  int64_t begin = below[0].first + below[0].second, end = above[0].first + above[0].second;
  if (rank - (above[1].first + above[1].second) > begin) begin = rank - (above[1].first + above[1].second);
  if (rank - (below[1].first + below[1].second) < end) end = rank - (below[1].first + below[1].second);
  while (begin < end) {
    const int64_t len = end - begin;
    const int64_t m = begin + len * (lane + 1) / (G + 1);  // in [begin, end)
    const int64_t diag[2] = {m, rank - 1 - m};
    path_point at[2];
    merge_path_between2(x, y, below, above, diag, at, comp);
    const K ab = item_at(x[0], x_count[0], y[0], y_count[0], at[0], comp);
    const K cd = item_at(x[1], x_count[1], y[1], y_count[1], at[1], comp);
    // Probes that take from A + B come first; the first that does not is lane `f`.
    const unsigned takes = (__ballot_sync(group, a_goes_first(ab, cd, comp)) & group) >> ((threadIdx.x % 32) / G * G);
    const int f = __ffs(~takes) - 1;  // G where every probe takes
    const int64_t a_last = __shfl_sync(group, at[0].first, f > 0 ? f - 1 : 0, G);
    const int64_t c_last = __shfl_sync(group, at[1].first, f > 0 ? f - 1 : 0, G);
    const int64_t a_first = __shfl_sync(group, at[0].first, f < G ? f : 0, G);
    const int64_t c_first = __shfl_sync(group, at[1].first, f < G ? f : 0, G);
    const int64_t m_last = begin + len * f / (G + 1), m_first = begin + len * (f + 1) / (G + 1);
    if (f > 0) {
      begin = m_last + 1;
      below[0] = {a_last, m_last - a_last};
      above[1] = {c_last, rank - 1 - m_last - c_last};
    }
    if (f < G) {
      end = m_first;
      above[0] = {a_first, m_first - a_first};
      below[1] = {c_first, rank - 1 - m_first - c_first};
    }
    // Points found at a smaller diagonal are not after those at a larger one (on the path of
    // a strict weak order; kept so for any comparator, so later searches stay in bounds).
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if (above[s].first < below[s].first) above[s].first = below[s].first;
      if (above[s].second < below[s].second) above[s].second = below[s].second;
    }
  }
  // k = begin: the pairs' own splits at k and r - k, inside the points known by now (the
  // clamps change nothing for a strict weak order).
  const int64_t ab_lo = below[0].first + below[0].second, ab_hi = above[0].first + above[0].second;
  const int64_t cd_lo = below[1].first + below[1].second, cd_hi = above[1].first + above[1].second;
  const int64_t k = begin < ab_lo ? ab_lo : (begin > ab_hi ? ab_hi : begin);
  const int64_t diag[2] = {k, rank - k < cd_lo ? cd_lo : (rank - k > cd_hi ? cd_hi : rank - k)};
  path_point at[2];
  merge_path_between2(x, y, below, above, diag, at, comp);
  for (int q = lane; q < 4; q += G) splits[g].at[q] = q < 2 ? (q == 0 ? at[0].first : at[0].second)
                                                           : (q == 2 ? at[1].first : at[1].second);
}

// One four-way pass: output tile blockIdx.x (see mergesort4_tile_splits_body) with NT threads
// and VT items each, NT * VT = tile. The tile's slices of the runs are loaded as
// [A | C | B | D]; all threads merge A with B and C with D in one pass (serial_merge_two_at:
// X = A | C, Y = B | D), back into shared memory as [A + B | C + D], then (A + B) with (C + D).
// With HasValues, the source positions of both levels are composed and values are gathered
// once, from global memory.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysOut>
__device__ __forceinline__ void mergesort4_pass_tile(const K* keys_in, const V* values_in, int64_t count,
                                                     int64_t run, const split4* splits, KeysOut keys_out,
                                                     V* values_out, Comp comp) {
  constexpr int NV = NT * VT;
  __shared__ merge_shared<NV, K> shared;
  __shared__ int shared_sources[HasValues ? NV : 1];
  const int64_t g = blockIdx.x;
  const int64_t per_frame = 4 * run / NV;
  const mergesort4_frame f = find_mergesort4_frame(count, run, g / per_frame);
  const split4 lo = splits[g];
  split4 hi;
  if (g % per_frame + 1 < mergesort4_tiles(f, NV)) hi = splits[g + 1];
  else
#pragma unroll
    for (int r = 0; r < 4; ++r) hi.at[r] = f.count[r];
  // The tile's output starts at its rank in the frame. mergesort4_tile_splits_body keeps every
  // split inside the runs; for a strict weak order the splits also grow from tile to tile by
  // exactly the tile's items. A comparator that is not one can break that: the tile is then
  // left unwritten (unspecified output, no access out of bounds).
  const int64_t out_first = f.begin + g % per_frame * NV;
  const int64_t frame_rest = count - out_first;
  bool ranges = true;
  int items = 0;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int64_t len = hi.at[r] - lo.at[r];
    ranges = ranges && 0 <= len && len <= NV;
    items += (int)len;
  }
  const bool consistent = ranges && items == (frame_rest < NV ? (int)frame_rest : NV);

  // Load order A, C, B, D.
  constexpr int LOAD_ORDER[4] = {0, 2, 1, 3};
  tile_ranges<4, K> key_src;
  key_src.start[0] = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = LOAD_ORDER[i];
    key_src.range[i] = keys_in + f.run_begin(r) + lo.at[r];
    key_src.start[i + 1] = key_src.start[i] + (int)(hi.at[r] - lo.at[r]);
  }
  const int n = consistent ? key_src.start[4] : 0;
  cta_load_ranges<NT, VT>(key_src, n, shared.keys);
  __syncthreads();

  // Level 1: A + B, then C + D.
  const int first = VT * (int)threadIdx.x;
  const int n_a = key_src.start[1], n_ac = key_src.start[2], n_acb = key_src.start[3];
  K results[VT];
  int indices[VT];
  if (first < n) serial_merge_two_at<VT>(shared.keys, n_a, n_ac, n_acb, n, first, results, indices, comp);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (first + i < n) {
      shared.keys[first + i] = results[i];
      if constexpr (HasValues) shared_sources[first + i] = indices[i];
    }
  }
  __syncthreads();

  // Level 2: (A + B) with (C + D).
  const int n_ab = n_a + (n_acb - n_ac);
  if (first < n) serial_merge_at<VT>(shared.keys, 0, n_ab, n, first, results, indices, comp);
  if constexpr (HasValues) {
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (first + i < n) indices[i] = shared_sources[indices[i]];
  }
  cta_store_thread_order<NT, VT>(results, shared.keys, keys_out + out_first, n);
  if constexpr (HasValues) {
    tile_ranges<4, V> value_src;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      value_src.range[i] = values_in + (key_src.range[i] - keys_in);
      value_src.start[i] = key_src.start[i];
    }
    value_src.start[4] = n;
    cta_gather_values<NT, VT>(indices, shared.indices, value_src, values_out + out_first, n);
  }
}

}  // namespace mergepath

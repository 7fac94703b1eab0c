// Kernel layer: mergesort's four-way passes. A four-way pass merges frames of four runs
// A, B, C, D as (A + B) + (C + D) inside each CTA, on full output tiles whose exact splits of
// the four runs are found inside brackets of coarse sample boundaries (see
// mergesort4_boundaries_body and mergesort4_tile_splits_body), so no global pass ever
// materializes A + B.
#pragma once
#include "merge.cuh"
#include "../cta/lane_search.cuh"

namespace mergepath {

// A frame of a four-way pass: its four runs (keys, and values where the pass moves them; the
// last frame's runs may be short or empty), where its output starts, and its first coarse
// boundary and first output tile among the pass's.
template <class K, class V>
struct mergesort4_frame {
  const K* keys[4];
  const V* values[4];
  int64_t count[4];
  int64_t out_begin, first_boundary, first_tile;
  __device__ __forceinline__ int64_t total() const { return count[0] + count[1] + count[2] + count[3]; }
};

// Where a four-way pass's frames come from: a sort's runs of `run` items one after another in
// `keys` (and `values`), four to a frame, or, with Table (the multiway merge's passes), the
// host's table of `num_frames` frames over runs of any lengths anywhere. A template parameter:
// with both ways in one kernel, the loads through the frames' pointers compiled as generic
// loads instead of global ones, which made the sort's four-way pairs pass 70 % slower.
template <class K, class V, bool Table>
struct mergesort4_frames {
  using key_type = K;
  const K* keys;
  const V* values;
  int64_t count, run;
  const sort4_frame* table;
  int64_t num_frames;

  // Sort frame `frame`, with boundaries `spacing` apart and output tiles of `tile` items (run
  // is a multiple of both).
  __device__ __forceinline__ mergesort4_frame<K, V> uniform(int64_t frame, int64_t spacing, int64_t tile) const {
    mergesort4_frame<K, V> f;
    int64_t begin = frame * 4 * run, rest = count - begin;
    f.out_begin = begin;
    f.first_boundary = frame * (4 * run / spacing);
    f.first_tile = frame * (4 * run / tile);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      f.count[r] = rest < run ? rest : run;
      f.keys[r] = keys + begin;
      f.values[r] = nullptr;  // a sort's values are at its keys' offsets: value_slice
      begin += f.count[r];
      rest -= f.count[r];
    }
    return f;
  }

  // Table row i. Its addresses are byte offsets from `keys` and `values` (the pass's first
  // run): pointers derived from the kernel's parameters are known to be global, so the loads
  // through them stay global loads (from bare integers they would be generic ones).
  __device__ __forceinline__ mergesort4_frame<K, V> row(int64_t i) const {
    const sort4_frame& t = table[i];
    mergesort4_frame<K, V> f;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      f.keys[r] = reinterpret_cast<const K*>(reinterpret_cast<const unsigned char*>(keys) + t.keys[r]);
      f.values[r] = reinterpret_cast<const V*>(reinterpret_cast<const unsigned char*>(values) + t.values[r]);
      f.count[r] = t.count[r];
    }
    f.out_begin = t.out_begin;
    f.first_boundary = t.first_boundary;
    f.first_tile = t.first_tile;
    return f;
  }

  // The last table row whose `first` (first_boundary or first_tile) is at most g: the frame
  // holding g (frames before it with as many are empty).
  template <class First>
  __device__ __forceinline__ int64_t row_of(int64_t g, First first) const {
    int64_t lo = 0, hi = num_frames;  // first(lo) <= g < first(hi), first(num_frames) = infinity
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (first(table[mid]) <= g) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  // The frame of coarse boundary g (its first_tile counts tiles of `spacing` items: boundaries
  // read no tiles).
  __device__ __forceinline__ mergesort4_frame<K, V> of_boundary(int64_t g, int64_t spacing) const {
    if constexpr (Table) return row(row_of(g, [](const sort4_frame& t) { return t.first_boundary; }));
    else return uniform(g / (4 * run / spacing), spacing, spacing);
  }

  // The frame of output tile g (its first_boundary counts boundaries `spacing` apart).
  __device__ __forceinline__ mergesort4_frame<K, V> of_tile(int64_t g, int64_t spacing, int64_t tile) const {
    if constexpr (Table) return row(row_of(g, [](const sort4_frame& t) { return t.first_tile; }));
    else return uniform(g / (4 * run / tile), spacing, tile);
  }

  // The values of the key slice `slice` (run r of frame f from item lo): in a sort at the
  // slice's offset in `values` (nothing more held in registers through the merge), from a
  // table at the run's own values.
  __device__ __forceinline__ const V* value_slice(const K* slice, const mergesort4_frame<K, V>& f, int r,
                                                  int64_t lo) const {
    if constexpr (Table) return f.values[r] + lo;
    else return values + (slice - keys);
  }
};

__device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Coarse boundaries of a frame: one every `spacing` items of A + B and of C + D.
template <class F>
__device__ __forceinline__ int64_t mergesort4_frame_boundaries(const F& f, int64_t spacing) {
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
// spacing + c x's position in the frame's merge. One thread (g.lanes = 1: merge_path_aligned,
// whose probes share DRAM sectors with the neighbouring boundaries' searches) or a lane group.
template <bool QAfter, class K, class Comp>
__device__ __forceinline__ int64_t pair_boundary(const lane_group& g, const K* p0, int64_t n0, const K* p1, int64_t n1,
                                                 const K* q0, int64_t m0, const K* q1, int64_t m1, int64_t j,
                                                 int64_t spacing, int64_t (&split)[4], Comp comp) {
  const int64_t diag = j * spacing;
  const int64_t a = g.lanes == 1 ? merge_path<PARTITION_PROBES>(p0, n0, p1, n1, diag, comp)
                                 : group_merge_path(g, p0, n0, p1, n1, diag, comp);
  const int64_t b = diag - a;
  const K x = item_at(p0, n0, p1, n1, {a, b}, comp);
  int64_t c, d;
  if (g.lanes == 1) sorted_bound2<!QAfter>(q0, m0, q1, m1, x, c, d, comp);
  else group_bound2<!QAfter>(g, q0, m0, q1, m1, x, c, d, comp);
  split[0] = a;
  split[1] = b;
  split[2] = c;
  split[3] = d;
  return j + ceil_div(c + d, spacing);
}

// The coarse boundaries of a four-way pass, one lane group of `lanes` each (`num_boundaries`
// in all, frame after frame; a full frame has 4 * run / spacing). Boundaries are the elements
// at every `spacing`-th position of A + B and of C + D; each is written, as the split of the
// four runs before it, to its place in the frame's boundaries sorted by rank. Between two
// consecutive boundaries there are at most `spacing` items of A + B and `spacing` of C + D:
// the brackets in which mergesort4_tile_splits_body finds the tiles' exact splits. Three
// searches per boundary, none nested.
template <class Frames, class Comp>
__device__ __forceinline__ void mergesort4_boundaries_body(const Frames& frames, int64_t spacing,
                                                           int64_t num_boundaries, int lanes, split4* splits,
                                                           Comp comp) {
  using K = typename Frames::key_type;
  const lane_group group(lanes);
  const int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / lanes;
  if (g >= num_boundaries) return;  // the group's lanes leave together
  const mergesort4_frame<K, K> f = frames.of_boundary(g, spacing);
  const int64_t j = g - f.first_boundary;
  const K* const* run = f.keys;
  const int64_t ab_boundaries = ceil_div(f.count[0] + f.count[1], spacing);
  int64_t split[4], slot;
  if (j < ab_boundaries) {
    slot = pair_boundary<true>(group, run[0], f.count[0], run[1], f.count[1], run[2], f.count[2], run[3], f.count[3],
                               j, spacing, split, comp);
  } else {
    int64_t s[4];
    slot = pair_boundary<false>(group, run[2], f.count[2], run[3], f.count[3], run[0], f.count[0], run[1], f.count[1],
                                j - ab_boundaries, spacing, s, comp);
    split[0] = s[2];
    split[1] = s[3];
    split[2] = s[0];
    split[3] = s[1];
  }
  if (group.lane != 0) return;
  // Distinct slots for a strict weak order; a comparator that is not one (or unsorted runs)
  // can push a boundary past the frame's last slot (and leave others unwritten:
  // mergesort4_tile_splits_body clamps what it reads).
  const int64_t frame_boundaries = mergesort4_frame_boundaries(f, spacing);
  if (slot >= frame_boundaries) slot = frame_boundaries - 1;
  split4 out;
#pragma unroll
  for (int r = 0; r < 4; ++r) out.at[r] = split[r];
  splits[f.first_boundary + slot] = out;
}

// Tiles of a frame in a four-way pass: one per `tile` items of its output (the last may be
// short).
template <class F>
__device__ __forceinline__ int64_t mergesort4_tiles(const F& f, int64_t tile) {
  return ceil_div(f.total(), tile);
}

// split4 is the contract's (contract.cuh, included by merge.cuh).

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

// The exact splits of a four-way pass's output tiles of `tile` items (a multiple of the
// boundaries' spacing), one tile per lane group of `lanes` (`num_tiles` tiles, frame after
// frame; a full frame has 4 * run / tile), each written as the four runs' counts (frame-local)
// before the tile's first output. The frame's coarse boundaries (mergesort4_boundaries_body,
// `spacing` apart in each pair: `coarse`) are in slots ceil(rank / spacing) (see
// pair_boundary), so the last one at or before tile j's first output (rank j * tile = s *
// spacing) is slot s and the next slot s + 1 (or the frame's end): a bracket with at most
// `spacing` items of A + B and of C + D between its ends.
//
// The four-way merge is (A + B) merged with (C + D), A + B first on ties, so the split at rank r
// is k items of A + B and r - k of C + D, with k the merge path of the two pairs' merges at
// diagonal r, and each pair's split its own merge path at k (or r - k). k is searched over the
// bracket with one probe per lane at once (lanes + 1 gaps a round): a probe at m
// compares the item A + B puts out at m with the one C + D puts out at r - 1 - m, each found by
// a merge-path search of its pair, both in lockstep. A round keeps the gap between the last
// probe that took from A + B and the first that did not, and those two probes' path points
// bound every later search of both pairs, so the inner searches shrink with the outer one.
// Against one thread per run (a binary search over its items, each probe three nested bound
// searches), the chain of dependent loads is less than half as long.
template <class Frames, class Comp>
__device__ __forceinline__ void mergesort4_tile_splits_body(const Frames& frames, int64_t spacing, int64_t tile,
                                                            const split4* coarse, int64_t num_tiles, int lanes,
                                                            split4* splits, Comp comp) {
  using K = typename Frames::key_type;
  const lane_group group(lanes);
  const int G = lanes;
  const int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
  if (g >= num_tiles) return;  // the tile's lanes leave together
  const mergesort4_frame<K, K> f = frames.of_tile(g, spacing, tile);
  const int64_t j = g - f.first_tile;
  const split4* bounds = coarse + f.first_boundary;
  const int64_t slot = j * (tile / spacing);
  split4 lo = bounds[slot], hi;
  if (slot + 1 < mergesort4_frame_boundaries(f, spacing)) hi = bounds[slot + 1];
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
  const K* const x[2] = {f.keys[0], f.keys[2]};
  const K* const y[2] = {f.keys[1], f.keys[3]};
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
    const int64_t m = group.probe(begin, len);
    const int64_t diag[2] = {m, rank - 1 - m};
    path_point at[2];
    merge_path_between2(x, y, below, above, diag, at, comp);
    const K ab = item_at(x[0], x_count[0], y[0], y_count[0], at[0], comp);
    const K cd = item_at(x[1], x_count[1], y[1], y_count[1], at[1], comp);
    // Probes that take from A + B come first; the first that does not is lane `f`.
    const int f = group.first_false(a_goes_first(ab, cd, comp));  // G where every probe takes
    const int64_t a_last = group.at_last_taking(at[0].first, f), a_first = group.at_first_not(at[0].first, f);
    const int64_t c_last = group.at_last_taking(at[1].first, f), c_first = group.at_first_not(at[1].first, f);
    const int64_t m_last = group.at_last_taking(m, f), m_first = group.at_first_not(m, f);
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
  for (int q = group.lane; q < 4; q += G) splits[g].at[q] = q < 2 ? (q == 0 ? at[0].first : at[0].second)
                                                           : (q == 2 ? at[1].first : at[1].second);
}

// One four-way pass: output tile blockIdx.x (see mergesort4_tile_splits_body) with NT threads
// and VT items each, NT * VT = tile. The tile's slices of the runs are loaded as
// [A | C | B | D]; all threads merge A with B and C with D in one pass (serial_merge_two_at:
// X = A | C, Y = B | D), back into shared memory as [A + B | C + D], then (A + B) with (C + D).
// With HasValues, the source positions of both levels are composed and values are gathered
// once, from global memory. Guarded (the multiway merge's passes, whose runs a caller may not
// have sorted), a tile whose splits do not cut its share exactly, or whose slices are not each
// sorted, writes nothing and reports to `guard` (cta/guard.cuh); where none reports, every tile
// put out a permutation of its share. (A template parameter: the checks' registers made the
// sort's u32 tile spill even where they were skipped.)
template <int NT, int VT, bool HasValues, bool Guarded, class K, class V, bool Table, class Comp, class KeysOut>
__device__ __forceinline__ void mergesort4_pass_tile(const mergesort4_frames<K, V, Table>& frames, const split4* splits,
                                                     KeysOut keys_out, V* values_out, merge_guard* guard,
                                                     Comp comp) {
  constexpr int NV = NT * VT;
  __shared__ merge_shared<NV, K> shared;
  __shared__ int shared_sources[HasValues ? NV : 1];
  const int64_t g = blockIdx.x;
  const mergesort4_frame<K, V> f = frames.of_tile(g, NV, NV);  // (a merge tile reads no boundaries)
  const int64_t j = g - f.first_tile;
  const split4 lo = splits[g];
  split4 hi;
  if (j + 1 < mergesort4_tiles(f, NV)) hi = splits[g + 1];
  else
#pragma unroll
    for (int r = 0; r < 4; ++r) hi.at[r] = f.count[r];
  // The tile's output starts at its rank in the frame. mergesort4_tile_splits_body keeps every
  // split inside the runs; for a strict weak order on sorted runs the splits also start at 0
  // and grow from tile to tile by exactly the tile's items. A comparator that is not one, or
  // unsorted runs, can break that: the tile is then left unwritten (no access out of bounds;
  // reported where guarded).
  const int64_t out_first = f.out_begin + j * NV;
  const int64_t frame_rest = f.total() - j * NV;
  bool ranges = true, from_start = true;
  int items = 0;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int64_t len = hi.at[r] - lo.at[r];
    ranges = ranges && 0 <= len && len <= NV;
    from_start = from_start && lo.at[r] == 0;
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
    key_src.range[i] = f.keys[r] + lo.at[r];
    key_src.start[i + 1] = key_src.start[i] + (int)(hi.at[r] - lo.at[r]);
  }
  const int n = consistent ? key_src.start[4] : 0;
  cta_load_ranges<NT, VT>(key_src, n, shared.keys);
  __syncthreads();
  if constexpr (Guarded) {
    // Uniform over the CTA: the splits are the same for every thread.
    bool exact = consistent && (j > 0 || from_start);
    // The slices' starts as scalars: an index into key_src.start would put it in local memory.
    const int s1 = key_src.start[1], s2 = key_src.start[2], s3 = key_src.start[3];
    const auto start = [=](int t) { return t <= 0 ? 0 : (t == 1 ? s1 : (t == 2 ? s2 : (t == 3 ? s3 : n))); };
    if (exact) exact = cta_lists_sorted<VT>(shared.keys, n, start, 4, comp);
    if (!exact) {
      if (threadIdx.x == 0) report_inexact(guard);
      return;
    }
  }

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
      const int r = LOAD_ORDER[i];
      value_src.range[i] = frames.value_slice(key_src.range[i], f, r, lo.at[r]);
      value_src.start[i] = key_src.start[i];
    }
    value_src.start[4] = n;
    cta_gather_values<NT, VT>(indices, shared.indices, value_src, values_out + out_first, n);
  }
}

}  // namespace mergepath

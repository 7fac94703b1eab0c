// Kernel layer: the bodies of the multiway merge kernels. Sample boundaries first: every
// `boundary_spacing`-th item of every input, ranked exactly in the stable merge (one binary
// search per input) and stored in merge order with its split of all inputs. Between two
// consecutive boundaries lie at most `boundary_spacing` items of each input, so the boundaries
// bracket every split in narrow ranges. Then one CTA per output tile boundary finds the exact
// split inside its bracket (narrowed to a tile, merged in shared memory), and one CTA per
// output tile merges the tile's slices of the inputs in shared memory, pairwise in log2(k)
// rounds (cta_merge_lists).
#pragma once
#include "../cta/guard.cuh"
#include "../cta/multiway.cuh"
#include "../cta/scan.cuh"
#include "../cta/tile.cuh"

namespace mergepath {

// Boundary blockIdx.x: item j * spacing of input m, where boundary_starts[m] (the boundaries
// of the inputs before m) <= blockIdx.x < boundary_starts[m + 1]. Its split of every input
// (items before it in the stable merge) goes to row `slot` of `rows` (`ways` entries) and its
// rank (the split's sum) to ranks[slot], slot being its place among all boundaries in merge
// order: input t's boundaries before it number ceil(split[t] / spacing) - 1 (those at positions
// below split[t]). Distinct slots for sorted inputs and a strict weak order; otherwise slots
// may collide (clamped into the table; rows left unwritten are clamped by their readers).
// Mirrored on the CPU by partition::multiway_boundaries_cpu.
template <int NT, class K, class Comp>
__device__ __forceinline__ void multiway_boundaries_body(const K* const* inputs, const int64_t* counts, int ways,
                                                         int64_t spacing, const int64_t* boundary_starts,
                                                         int64_t num_boundaries, int64_t* rows, int64_t* ranks,
                                                         Comp comp) {
  constexpr int PER_THREAD = (MULTIWAY_MAX_WAYS + NT - 1) / NT;
  __shared__ unsigned long long rank_sum, slot_sum;
  const int64_t b = blockIdx.x;
  if (b >= num_boundaries) return;
  const int tid = (int)threadIdx.x;
  if (tid == 0) rank_sum = slot_sum = 0;
  int lo = 0, hi = ways;  // m: the last input with boundary_starts[m] <= b
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (boundary_starts[mid] <= b) lo = mid;
    else hi = mid;
  }
  const int m = lo;
  const int64_t position = (b - boundary_starts[m] + 1) * spacing;
  const K x = inputs[m][position];
  int64_t split[PER_THREAD];
  unsigned long long my_rank = 0, my_slot = 0;
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    const int t = tid + NT * j;
    split[j] = 0;
    if (t >= ways) continue;
    split[j] = t == m ? position : multiway_count_before(inputs[t], 0, counts[t], x, t, m, comp);
    my_rank += (unsigned long long)split[j];
    my_slot += (unsigned long long)(split[j] > 0 ? (split[j] - 1) / spacing : 0);
  }
  __syncthreads();
  if (my_rank) atomicAdd(&rank_sum, my_rank);
  if (my_slot) atomicAdd(&slot_sum, my_slot);
  __syncthreads();
  const int64_t slot = slot_sum < (unsigned long long)num_boundaries ? (int64_t)slot_sum : num_boundaries - 1;
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    const int t = tid + NT * j;
    if (t < ways) rows[slot * ways + t] = split[j];
  }
  if (tid == 0) ranks[slot] = (int64_t)rank_sum;
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

// Shared memory of a CTA that loads slices of the inputs (multiway_slices).
template <int NT> struct multiway_slices_shared {
  int start[MULTIWAY_MAX_WAYS + 1];
  int64_t begin[MULTIWAY_MAX_WAYS];
  unsigned long long begin_sum;
  scan_shared<NT> scan;
};

// The slices [r.lo[t], r.hi[t]) of the inputs as one tile: begin[t] (= r.lo[t]) and start[t]
// (the slice's place in the tile, in input order), with the tile cut at `limit` items;
// start[ways] is the tile's length, returned, and begin_sum the sum of the begins. Ends
// synchronized.
template <int NT>
__device__ __forceinline__ int multiway_slices(int ways, const multiway_ranges<NT>& r, int limit,
                                               multiway_slices_shared<NT>& s) {
  constexpr int PER_THREAD = multiway_ranges<NT>::PER_THREAD;
  if (threadIdx.x == 0) s.begin_sum = 0;
  int64_t len[PER_THREAD];
  int64_t mine = 0;
  unsigned long long my_begins = 0;
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    const int t = r.input(j);
    len[j] = 0;
    if (t >= ways) continue;
    s.begin[t] = r.lo[j];
    my_begins += (unsigned long long)r.lo[j];
    len[j] = r.hi[j] - r.lo[j] < limit ? r.hi[j] - r.lo[j] : limit;
    mine += len[j];
  }
  int64_t sum;
  int64_t offset = cta_exclusive_scan<NT>(mine, sum, s.scan);  // synchronizes: begin_sum is 0
  if (my_begins) atomicAdd(&s.begin_sum, my_begins);
  const int n = sum < limit ? (int)sum : limit;
#pragma unroll
  for (int j = 0; j < PER_THREAD; ++j) {
    const int t = r.input(j);
    if (t >= ways) continue;
    s.start[t] = offset < n ? (int)offset : n;
    offset += len[j];
  }
  if (threadIdx.x == 0) s.start[ways] = n;
  __syncthreads();
  return n;
}

// splits[p * ways .. p * ways + ways) = the split at output rank min(p * spacing, total), for
// p = blockIdx.x < num_partitions. The search starts from the bracket of the boundaries (rows
// and ranks of multiway_boundaries_body, `num_boundaries` of them) around that rank: the last
// boundary at or before it (or the inputs' starts) and the next (or their ends). Ranges of
// more than NT * VT items in all are narrowed by cta_multiway_narrow first; then the ranges'
// items are merged in shared memory (cta_merge_lists), and the split is the ranges' starts
// plus each input's items among the first (rank - the starts' sum) of that merge.
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void multiway_partitions_body(const K* const* inputs, const int64_t* counts, int ways,
                                                         int64_t total, int64_t spacing, int64_t num_partitions,
                                                         const int64_t* boundary_rows, const int64_t* boundary_ranks,
                                                         int64_t num_boundaries, int64_t* splits, Comp comp) {
  constexpr int NV = NT * VT;
  union shared_t {
    struct {
      K keys[NV];
      int positions[NV];
      int taken[MULTIWAY_MAX_WAYS];
    } merge;
    multiway_split_shared<K> search;
  };
  __shared__ shared_t shared;
  __shared__ multiway_slices_shared<NT> slices;
  const int64_t p = blockIdx.x;
  if (p >= num_partitions) return;
  const int64_t rank = p * spacing < total ? p * spacing : total;
  int64_t lo = 0, hi = num_boundaries;  // boundaries with ranks <= rank
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (boundary_ranks[mid] <= rank) lo = mid + 1;
    else hi = mid;
  }
  const int64_t* lo_row = lo > 0 ? boundary_rows + (lo - 1) * ways : nullptr;
  const int64_t* hi_row = lo < num_boundaries ? boundary_rows + lo * ways : nullptr;
  multiway_ranges<NT> r = multiway_initial_ranges<NT>(counts, ways, rank, total, lo_row, hi_row);
  cta_multiway_narrow<NT>(inputs, ways, rank, NV, r, shared.search, comp);
  __syncthreads();  // shared.search is done with before shared.merge is written
  for (int t = (int)threadIdx.x; t < ways; t += NT) shared.merge.taken[t] = 0;
  const int n = multiway_slices<NT>(ways, r, NV, slices);
  const int64_t ahead = rank - (int64_t)slices.begin_sum;  // items of the merge of the slices
  const int wanted = ahead < 0 ? 0 : (ahead < n ? (int)ahead : n);
  if (wanted > 0) {
    const multiway_tile_reader<K> keys_in{inputs, slices.begin, slices.start, ways};
    cta_load_ranges<NT, VT>(tile_ranges<1, K, multiway_tile_reader<K>>{{keys_in}, {0, n}}, n, shared.merge.keys);
    __syncthreads();
    K keys[VT];
    int positions[VT];
    cta_merge_lists<NT, VT, true>(keys, positions, n, slices.start, ways, shared.merge.keys,
                                  shared.merge.positions, comp);
    const int first = VT * (int)threadIdx.x;
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (first + i < wanted) atomicAdd(&shared.merge.taken[keys_in.input_of(positions[i])], 1);
    __syncthreads();
  }
  int64_t* split = splits + p * ways;
  for (int t = (int)threadIdx.x; t < ways; t += NT) split[t] = slices.begin[t] + shared.merge.taken[t];
}

// Whether split rows row0 and row1 (a tile's) are exact, as they are for sorted inputs: 0 <=
// row0[t] <= row1[t] <= counts[t] for every input, row0 summing to `rank` and row1 to rank +
// n_out. Then the tile's slices are the rows' ranges unclamped, and meet its neighbours'
// slices. Called by all NT threads; returns the same in every thread, synchronized.
template <int NT>
__device__ __forceinline__ bool multiway_rows_exact(const int64_t* counts, int ways, const int64_t* row0,
                                                    const int64_t* row1, int64_t rank, int n_out) {
  __shared__ unsigned long long sums[2];
  if (threadIdx.x == 0) sums[0] = sums[1] = 0;
  __syncthreads();
  bool in_order = true;
  unsigned long long sum0 = 0, sum1 = 0;
  for (int t = (int)threadIdx.x; t < ways; t += NT) {
    const int64_t lo = row0[t], hi = row1[t];
    in_order = in_order && 0 <= lo && lo <= hi && hi <= counts[t];
    sum0 += (unsigned long long)lo;
    sum1 += (unsigned long long)hi;
  }
  if (sum0) atomicAdd(&sums[0], sum0);
  if (sum1) atomicAdd(&sums[1], sum1);
  in_order = __syncthreads_and(in_order);
  return in_order && sums[0] == (unsigned long long)rank && sums[1] == (unsigned long long)(rank + n_out);
}

// Output tile blockIdx.x (NT * VT items) of the stable merge of the inputs, between split rows
// blockIdx.x and blockIdx.x + 1: the tile's slices, loaded in input order, merged by
// cta_merge_lists. Splits of unsorted inputs stay inside the inputs (multiway_ranges_between
// clamps them); with a `guard` (cta/guard.cuh), a tile whose rows are not exact or whose
// slices are not sorted (unsorted inputs) reports it, for the fallback kernel after it
// (kernel/unsorted.cuh).
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void multiway_merge_tile(const K* const* inputs, const V* const* values, const int64_t* counts,
                                                    int ways, int64_t total, const int64_t* splits, K* out,
                                                    V* out_vals, Comp comp, merge_guard* guard = nullptr) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ int shared_positions[HasValues ? NV : 1];
  __shared__ multiway_slices_shared<NT> slices;
  const int64_t tile = blockIdx.x;
  const int64_t diag0 = tile * NV;
  const int n_out = total - diag0 < NV ? (int)(total - diag0) : NV;
  const int64_t* row0 = splits + tile * ways;
  const int n = multiway_slices<NT>(ways, multiway_ranges_between<NT>(counts, ways, row0, row0 + ways), n_out, slices);
  bool exact = !guard || multiway_rows_exact<NT>(counts, ways, row0, row0 + ways, diag0, n_out);
  if (n > 0) {  // the same in every thread
    const multiway_tile_reader<K> keys_in{inputs, slices.begin, slices.start, ways};
    cta_load_ranges<NT, VT>(tile_ranges<1, K, multiway_tile_reader<K>>{{keys_in}, {0, n}}, n, shared_keys);
    __syncthreads();
    if (guard) exact = cta_lists_sorted<VT>(shared_keys, n, [&](int t) { return slices.start[t]; }, ways, comp) && exact;
    K keys[VT];
    int positions[VT];
    cta_merge_lists<NT, VT, HasValues>(keys, positions, n, slices.start, ways, shared_keys, shared_positions, comp);
    cta_store_thread_order<NT, VT>(keys, shared_keys, out + diag0, n);
    if constexpr (HasValues) {
      const multiway_tile_reader<V> values_in{values, slices.begin, slices.start, ways};
      cta_gather_values<NT, VT, V, true>(positions, shared_positions,
                                          tile_ranges<1, V, multiway_tile_reader<V>>{{values_in}, {0, n}},
                                          out_vals + diag0, n);
    }
  }
  if (guard && !exact && threadIdx.x == 0) report_inexact(guard);
}

}  // namespace mergepath

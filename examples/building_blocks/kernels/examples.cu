// Algorithms a user writes from mergepath's public device headers (as a user would: only
// `#include <mergepath/...>`), compiled by this crate's build.rs through mergepath-build. The
// host side is in src/bin/{bulk_insert,join,merge_join,interval_expand}.rs. `mergepath_user/Hit.cuh` is
// the CUDA twin of the derived key `Hit` (src/keys.rs), written by build.rs.
#include <building_blocks/tuning.cuh>
#include <mergepath/kernel/merge.cuh>
#include <mergepath/kernel/load_balancing.cuh>
#include <mergepath/cta/scan.cuh>
#include <mergepath/thread/keys.cuh>
#include <mergepath_user/Hit.cuh>

namespace {
// kernels/tuning.tsv has one row, for every architecture and key size.
constexpr building_blocks::launch_shape SHAPE = building_blocks::examples_shape(0, 8);
constexpr int NT = SHAPE.nt, VT = SHAPE.vt, NV = NT * VT;

struct index_less {
  __device__ __forceinline__ bool operator()(int64_t x, int64_t y) const { return x < y; }
};
}  // namespace

// ---- Bulk insert (Modern GPU's BulkInsert): out = `array` with insert_values[j] placed before
// array[positions[j]] (positions sorted, each in 0..=n; equal positions keep their order). It
// is the stable merge of the positions (A: inserted items win ties) with the array's own
// positions 0, 1, ..., n - 1 (B, a counting sequence, never stored), values following their
// keys. One merge-path-scheduled kernel after the partitions.

extern "C" __global__ void bulk_insert_partitions(const int64_t* positions, int64_t m, int64_t n,
                                                  int64_t num_partitions, int64_t* partitions) {
  mergepath::merge_path_partitions_body(positions, m, mergepath::counting_iterator{0}, n, NV, num_partitions,
                                        partitions, index_less());
}

extern "C" __global__ void __launch_bounds__(NT)
bulk_insert(const int64_t* positions, const uint32_t* insert_values, int64_t m, const uint32_t* array, int64_t n,
            const int64_t* partitions, uint32_t* out) {
  __shared__ mergepath::merge_shared<NV, int64_t> shared;
  const int64_t tile = blockIdx.x;
  const mergepath::merge_range r = mergepath::compute_merge_range(m, n, tile, NV, partitions);
  const int a_n = r.a_count(), count = r.count();
  // The tile's keys: its positions, then its slice of the counting sequence.
  for (int i = threadIdx.x; i < count; i += NT)
    shared.keys[i] = i < a_n ? positions[r.a_begin + i] : r.b_begin + (i - a_n);
  __syncthreads();
  int64_t keys[VT];
  int sources[VT];
  mergepath::cta_merge_from_shared<NT, VT>(shared.keys, a_n, count, keys, sources, index_less());
  mergepath::cta_gather_values<NT, VT>(
      sources, shared.indices, mergepath::two_ranges(insert_values + r.a_begin, a_n, array + r.b_begin, count),
      out + tile * NV, count);
}

// ---- Merge-join count: counts[i] = the number of keys of B equivalent to A[i] under `Comp` (A
// and B sorted by it), in one pass of the merge with A first on ties (the default tie, so the
// library's partitions serve). A[i], merged at output position `out`, has out - i keys of B
// before it (its lower bound); the keys of B equivalent to it are the run after them, in the
// tile's B and, where the run reaches the tile's end, in B beyond it.
template <class K, class Comp>
__device__ __forceinline__ void merge_join_count_tile(const K* a, int64_t a_count, const K* b, int64_t b_count,
                                                      const int64_t* partitions, uint32_t* counts, K* keys) {
  const Comp comp;
  const mergepath::merge_range r = mergepath::compute_merge_range(a_count, b_count, blockIdx.x, NV, partitions);
  mergepath::cta_load_two_ranges<NT, VT>(a + r.a_begin, r.a_count(), b + r.b_begin, r.count(), keys);
  __syncthreads();
  const K* tile_b = keys + r.a_count();
  const int b_n = r.b_count();
  mergepath::cta_merge_visit<NT, VT>(
      keys, r,
      [&](int64_t out, mergepath::source src, int64_t i, const K& key) {
        if (src != mergepath::source::a) return;
        const int64_t lower = out - i;
        int64_t end = r.b_begin + mergepath::equal_run_end(tile_b, (int)(lower - r.b_begin), b_n, key, comp);
        if (end == r.b_end) end = mergepath::equal_run_end(b, r.b_end, b_count, key, comp);
        counts[i] = (uint32_t)(end - lower);
      },
      comp);
}

extern "C" __global__ void __launch_bounds__(NT)
merge_join_count(const uint32_t* a, int64_t a_count, const uint32_t* b, int64_t b_count, const int64_t* partitions,
                 uint32_t* counts) {
  __shared__ uint32_t keys[NV];
  merge_join_count_tile<uint32_t, mergepath::less_t<uint32_t>>(a, a_count, b, b_count, partitions, counts, keys);
}

// The same kernel for the crate's own key, `Hit` in src/keys.rs, by its custom comparator
// `ByX`: both from the header build.rs writes for the derived key, the definitions mergepath's
// own kernels for `Hit` are compiled with.
extern "C" __global__ void __launch_bounds__(NT)
merge_join_count_hit_by_x(const mergepath_user::Hit* a, int64_t a_count, const mergepath_user::Hit* b, int64_t b_count,
                          const int64_t* partitions, uint32_t* counts) {
  __shared__ mergepath_user::Hit keys[NV];
  merge_join_count_tile<mergepath_user::Hit, mergepath_user::Hit_ByX>(a, a_count, b, b_count, partitions, counts, keys);
}

// ---- Join helpers. An exclusive scan of per-row output counts in one pass (decoupled
// look-back), then a load-balanced expansion: each thread finds the row of its first output by
// one search of the offsets and walks its VT outputs serially.

enum join_count : int { COUNT_MATCHES = 0, COUNT_AT_LEAST_ONE = 1, COUNT_IF_NONE = 2 };

// offsets[i] = sum of f(counts[0..i)) and *total = the sum of all, where f is the identity
// (inner join), max(c, 1) (left join: unmatched rows output once) or c == 0 (rows with no
// match). `states`: tiles + 1 zeroed slots (scan states, ticket counter).
extern "C" __global__ void __launch_bounds__(NT)
join_scan(const uint32_t* counts, int64_t rows, int mode, int64_t tiles, uint64_t* states, int64_t* offsets,
          int64_t* total) {
  __shared__ mergepath::scan_shared<NT> shared;
  __shared__ int64_t ticket;
  if (threadIdx.x == 0) ticket = (int64_t)atomicAdd((unsigned long long*)&states[tiles], 1ull);
  __syncthreads();
  const int64_t tile = ticket;
  const int64_t first = tile * NV + VT * threadIdx.x;
  int64_t values[VT];
  int64_t sum = 0;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const uint32_t c = first + i < rows ? counts[first + i] : 0;
    const int64_t f = mode == COUNT_MATCHES ? c : mode == COUNT_AT_LEAST_ONE ? (c > 0 ? c : 1) : (c == 0);
    values[i] = first + i < rows ? f : 0;
    sum += values[i];
  }
  int64_t tile_sum;
  const int64_t before = mergepath::cta_exclusive_scan<NT>(sum, tile_sum, shared);
  const int64_t offset = mergepath::cta_tile_offset<NT>(tile, tile_sum, states, shared);
  int64_t running = offset + before;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (first + i < rows) offsets[first + i] = running;
    running += values[i];
  }
  if (tile == tiles - 1 && threadIdx.x == 0) *total = offset + tile_sum;
}

// Output k of the join's first part (rows of A in order): row i with offsets[i] <= k <
// offsets[i + 1], its rank k - offsets[i] among the row's outputs, and the matching B row
// lower[i] + rank, or none (-1) past the row's matches (a left join's unmatched row).
extern "C" __global__ void __launch_bounds__(NT)
join_expand(const int64_t* offsets, const uint32_t* lower, const uint32_t* counts, int64_t rows,
            const int64_t* total_ptr, int64_t* out_a, int64_t* out_b) {
  const int64_t total = *total_ptr;
  const int64_t k0 = ((int64_t)blockIdx.x * NT + threadIdx.x) * VT;
  if (k0 >= total) return;
  // The row of output k0: the offsets not after k0, minus one (an upper bound).
  int64_t row = mergepath::sorted_bound<true>(offsets, rows, k0, index_less()) - 1;
  for (int i = 0; i < VT && k0 + i < total; ++i) {
    const int64_t k = k0 + i;
    while (row + 1 < rows && offsets[row + 1] <= k) ++row;
    const int64_t rank = k - offsets[row];
    out_a[k] = row;
    out_b[k] = rank < counts[row] ? (int64_t)lower[row] + rank : -1;
  }
}

// A full outer join's second part: the rows of B with no match in A, after the first part.
extern "C" __global__ void join_unmatched(const uint32_t* b_counts, const int64_t* b_offsets, int64_t b_rows,
                                          const int64_t* first_total, int64_t* out_a, int64_t* out_b) {
  const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= b_rows || b_counts[j] != 0) return;
  const int64_t k = *first_total + b_offsets[j];
  out_a[k] = -1;
  out_b[k] = j;
}

// ---- Interval expand (Modern GPU's): out[i] = values[s] for each item i of segment s, the
// segments given by their first items `starts` (an exclusive scan of their lengths), from the
// load-balancing search's public pieces: its partitions, then per tile the segment starts in
// shared memory and each thread's walk over its merge outputs, told each item's segment.
extern "C" __global__ void expand_partitions(const uint32_t* starts, int64_t segments, int64_t count,
                                             int64_t num_partitions, int64_t* partitions) {
  mergepath::load_balancing_partitions_body(starts, segments, count, NV, num_partitions, partitions);
}

extern "C" __global__ void __launch_bounds__(NT)
expand(const uint32_t* starts, int64_t segments, int64_t count, const int64_t* partitions, const uint32_t* values,
       uint32_t* out) {
  __shared__ uint32_t tile_starts[NV + 1];
  const mergepath::merge_range r = mergepath::compute_merge_range(segments - 1, count, blockIdx.x, NV, partitions);
  for (int h = threadIdx.x; h <= r.a_count(); h += NT) tile_starts[h] = starts[r.a_begin + h];
  __syncthreads();
  mergepath::load_balancing_walk<VT>(tile_starts, r.a_count(), mergepath::item_positions<uint32_t>{r.b_begin},
                                     r.b_count(), [](int) {},
                                     [&](int k, int h) { out[r.b_begin + k] = values[r.a_begin + h]; });
}

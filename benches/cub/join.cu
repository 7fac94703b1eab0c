// The anchor of benches/join.rs: a sorted inner join of two u32 key columns of n rows (keys
// below n, SplitMix64 seeds 31 and 32, sorted) as the Thrust composition Modern GPU's
// RelationalJoin describes, on the same GPU in the same device call:
// - each row of A's range of equal rows of B: thrust::lower_bound and thrust::upper_bound;
// - the ranges' lengths scanned (thrust::transform_exclusive_scan), the total read back and
//   the pairs allocated, as the bench's join allocates them;
// - each pair's row of A: thrust::upper_bound of the outputs 0..total in the scanned offsets,
//   minus one; its row of B: lower + its rank in the row (thrust::transform).
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/join.cu -o /tmp/join && /tmp/join [log2_n ...]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 10 after
// a warm-up; bytes as the bench counts them).
#include <cub/version.cuh>
#include "anchor.cuh"
#include <thrust/binary_search.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/scan.h>
#include <thrust/transform.h>
#include <thrust/transform_scan.h>

static std::vector<uint32_t> column(size_t n, uint64_t seed) {
  Rng rng{seed};
  std::vector<uint32_t> keys(n);
  for (auto& k : keys) k = (uint32_t)(rng.next() % n);
  std::sort(keys.begin(), keys.end());
  return keys;
}

struct range_length {
  __host__ __device__ int64_t operator()(const thrust::tuple<int64_t, int64_t>& r) const { return thrust::get<1>(r) - thrust::get<0>(r); }
};

// Output k's row of B from its row of A (upper bound minus one) and the row's first output.
struct pair_b {
  const int64_t* lower;
  const int64_t* offsets;
  __host__ __device__ int64_t operator()(int64_t k, int64_t upper_row) const {
    const int64_t row = upper_row - 1;
    return lower[row] + (k - offsets[row]);
  }
};

struct minus_one {
  __host__ __device__ int64_t operator()(int64_t x) const { return x - 1; }
};

static void bench(size_t n) {
  const std::vector<uint32_t> ha = column(n, 31), hb = column(n, 32);
  thrust::device_vector<uint32_t> a(ha.begin(), ha.end()), b(hb.begin(), hb.end());
  thrust::device_vector<int64_t> lower(n), upper(n), offsets(n);
  size_t pairs = 0;
  float ms = time_ms([&] {
    thrust::lower_bound(thrust::device, b.begin(), b.end(), a.begin(), a.end(), lower.begin());
    thrust::upper_bound(thrust::device, b.begin(), b.end(), a.begin(), a.end(), upper.begin());
    auto ranges = thrust::make_zip_iterator(thrust::make_tuple(lower.begin(), upper.begin()));
    thrust::transform_exclusive_scan(thrust::device, ranges, ranges + n, offsets.begin(), range_length(), int64_t(0), thrust::plus<int64_t>());
    const int64_t last = offsets[n - 1] + (upper[n - 1] - lower[n - 1]);
    pairs = (size_t)last;
    thrust::device_vector<int64_t> out_a(pairs), out_b(pairs);
    thrust::counting_iterator<int64_t> outputs(0);
    thrust::upper_bound(thrust::device, offsets.begin(), offsets.end(), outputs, outputs + pairs, out_a.begin());
    thrust::transform(thrust::device, outputs, outputs + pairs, out_a.begin(), out_b.begin(),
                      pair_b{thrust::raw_pointer_cast(lower.data()), thrust::raw_pointer_cast(offsets.data())});
    thrust::transform(thrust::device, out_a.begin(), out_a.end(), out_a.begin(), minus_one());
  });
  // The pair count checked against a host merge count.
  size_t want = 0;
  for (size_t i = 0, j = 0; i < n; ++i) {
    while (j < n && hb[j] < ha[i]) ++j;
    size_t k = j;
    while (k < n && hb[k] == ha[i]) ++k;
    want += k - j;
  }
  report("join_inner", "thrust_bounds_scan_expand", "u32", n, ms, 8.0 * n + 16.0 * pairs, pairs == want);
  printf("# pairs %zu\n", pairs);
}

int main(int argc, char** argv) {
  for (size_t n : anchor_sizes(argc, argv, {size_t(1) << 24, size_t(1) << 26})) bench(n);
  return 0;
}

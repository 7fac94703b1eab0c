// The anchors of benches/load_balancing.rs: what a user of CUB and Thrust writes for the same
// operations over the same segments, on the same GPU in the same device call.
// - Segmented sum of u32 values: cub::DeviceSegmentedReduce::Sum over the segments' offsets.
// - Interval expand of one u32 value per segment, Thrust's composition: the segment of each item
//   by thrust::upper_bound of the items' indices over the starts, then a gather.
// Segments as the bench's: lengths uniform in 0..32 (SplitMix64 seed 5, as tests/common's Rng),
// and skewed (one segment of half the items first).
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-extended-lambda benches/cub/load_balancing.cu -o /tmp/lbs && /tmp/lbs [log2_n ...]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 10 after
// a warm-up, temp storage outside the timed region, bytes as the bench counts them).
#include <cub/cub.cuh>
#include "anchor.cuh"
#include <thrust/device_vector.h>
#include <thrust/binary_search.h>
#include <thrust/gather.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>
#include <thrust/iterator/counting_iterator.h>

// The bench's starts (benches/load_balancing.rs starts_for).
static std::vector<uint32_t> starts_for(size_t n, bool skewed) {
  Rng rng{5};
  std::vector<uint32_t> starts;
  size_t at = 0;
  if (skewed) { starts.push_back(0); at = n / 2; }
  while (at < n) { starts.push_back((uint32_t)at); at += rng.next() % 32; }
  return starts;
}

static void bench(size_t n, const char* name, bool skewed) {
  std::vector<uint32_t> starts = starts_for(n, skewed);
  const size_t s = starts.size();
  std::vector<uint32_t> offsets(starts);
  offsets.push_back((uint32_t)n);
  std::vector<uint32_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = (uint32_t)(i * 2654435761u);
  std::vector<uint32_t> want(s, 0);
  for (size_t k = 0; k < s; ++k) for (size_t i = offsets[k]; i < offsets[k + 1]; ++i) want[k] += values[i];
  thrust::device_vector<uint32_t> d_offsets(offsets.begin(), offsets.end()), d_values(values.begin(), values.end()), d_sums(s);
  const uint32_t* off = thrust::raw_pointer_cast(d_offsets.data());
  size_t temp_bytes = 0;
  CK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, thrust::raw_pointer_cast(d_values.data()), thrust::raw_pointer_cast(d_sums.data()), (int64_t)s, off, off + 1));
  thrust::device_vector<char> temp(temp_bytes);
  float ms = time_ms([&] {
    size_t t = temp_bytes;
    CK(cub::DeviceSegmentedReduce::Sum(thrust::raw_pointer_cast(temp.data()), t, thrust::raw_pointer_cast(d_values.data()), thrust::raw_pointer_cast(d_sums.data()), (int64_t)s, off, off + 1));
  });
  std::vector<uint32_t> got(s);
  thrust::copy(d_sums.begin(), d_sums.end(), got.begin());
  char op[64];
  snprintf(op, sizeof op, "segmented_reduce_sum_%s", name);
  report(op, "cub_segmented_reduce", "u32", n, ms, 4.0 * n + 8.0 * s, got == want);

  // Interval expand by Thrust: segment of item i = upper_bound(starts, i) - 1, then gather.
  thrust::device_vector<uint32_t> d_starts(starts.begin(), starts.end()), d_segment(n), d_out(n);
  thrust::device_vector<uint32_t> d_per_segment(s);
  thrust::sequence(d_per_segment.begin(), d_per_segment.end());
  ms = time_ms([&] {
    thrust::upper_bound(d_starts.begin(), d_starts.end(), thrust::counting_iterator<uint32_t>(0), thrust::counting_iterator<uint32_t>((uint32_t)n), d_segment.begin());
    thrust::transform(d_segment.begin(), d_segment.end(), d_segment.begin(), [] __device__(uint32_t x) { return x - 1; });
    thrust::gather(d_segment.begin(), d_segment.end(), d_per_segment.begin(), d_out.begin());
  });
  std::vector<uint32_t> expanded(n);
  thrust::copy(d_out.begin(), d_out.end(), expanded.begin());
  bool ok = true;
  for (size_t k = 0; k < s && ok; ++k) for (size_t i = offsets[k]; i < offsets[k + 1]; ++i) ok = ok && expanded[i] == k;
  snprintf(op, sizeof op, "interval_expand_%s", name);
  report(op, "thrust_upper_bound_gather", "u32", n, ms, 8.0 * s + 4.0 * n, ok);
}

int main(int argc, char** argv) {
  const std::vector<size_t> sizes = anchor_sizes(argc, argv, {size_t(1) << 24, size_t(1) << 26});
  for (size_t n : sizes) { bench(n, "uniform32", false); bench(n, "skewed", true); }
  return 0;
}

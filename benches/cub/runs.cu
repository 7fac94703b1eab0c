// The anchors of benches/runs.rs: CUB's DeviceSelect::Unique and DeviceRunLengthEncode::Encode
// and Thrust's reduce_by_key (sums of u32 values) over the bench's keys (n sorted u32 keys in
// runs of 1 to 32, or of 1 or 2; SplitMix64 seed 9), on the same GPU in the same device call.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/runs.cu -o /tmp/runs && /tmp/runs [log2_n ...]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 10 after
// a warm-up, temp storage outside the timed region, the run count read back in each timed call
// as mergepath's calls read theirs; bytes as the bench counts them).
#include <cub/cub.cuh>
#include "anchor.cuh"
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/execution_policy.h>

static void bench(size_t n, const char* name, uint64_t longest) {
  Rng rng{9};
  std::vector<uint32_t> keys;
  keys.reserve(n);
  uint32_t key = 0;
  while (keys.size() < n) {
    size_t len = 1 + rng.next() % longest;
    for (size_t i = 0; i < len && keys.size() < n; ++i) keys.push_back(key);
    ++key;
  }
  const size_t runs = key;
  thrust::device_vector<uint32_t> d_keys(keys.begin(), keys.end()), d_values(n), d_out(n), d_counts(n);
  thrust::sequence(d_values.begin(), d_values.end());
  thrust::device_vector<int64_t> d_runs(1);
  uint32_t* in = thrust::raw_pointer_cast(d_keys.data());
  uint32_t* out = thrust::raw_pointer_cast(d_out.data());
  uint32_t* counts = thrust::raw_pointer_cast(d_counts.data());
  int64_t* num = thrust::raw_pointer_cast(d_runs.data());
  int64_t found = 0;
  char op[64];

  size_t tb = 0;
  CK(cub::DeviceSelect::Unique(nullptr, tb, in, out, num, (int64_t)n));
  thrust::device_vector<char> temp(tb);
  float ms = time_ms([&] { size_t t = tb; CK(cub::DeviceSelect::Unique(thrust::raw_pointer_cast(temp.data()), t, in, out, num, (int64_t)n)); CK(cudaMemcpy(&found, num, 8, cudaMemcpyDeviceToHost)); });
  snprintf(op, sizeof op, "unique_%s", name);
  report(op, "cub_select_unique", "u32", n, ms, 4.0 * (n + runs), (size_t)found == runs);

  tb = 0;
  CK(cub::DeviceRunLengthEncode::Encode(nullptr, tb, in, out, counts, num, (int64_t)n));
  temp.resize(tb);
  ms = time_ms([&] { size_t t = tb; CK(cub::DeviceRunLengthEncode::Encode(thrust::raw_pointer_cast(temp.data()), t, in, out, counts, num, (int64_t)n)); CK(cudaMemcpy(&found, num, 8, cudaMemcpyDeviceToHost)); });
  snprintf(op, sizeof op, "run_length_encode_%s", name);
  report(op, "cub_run_length_encode", "u32", n, ms, 4.0 * (n + 2 * runs), (size_t)found == runs);

  ms = time_ms([&] {
    auto ends = thrust::reduce_by_key(thrust::device, d_keys.begin(), d_keys.end(), d_values.begin(), d_out.begin(), d_counts.begin());
    found = ends.first - d_out.begin();
  });
  snprintf(op, sizeof op, "reduce_by_key_sum_%s", name);
  report(op, "thrust_reduce_by_key", "u32", n, ms, 4.0 * (2 * n + 2 * runs), (size_t)found == runs);
}

int main(int argc, char** argv) {
  const std::vector<size_t> sizes = anchor_sizes(argc, argv, {size_t(1) << 24, size_t(1) << 26});
  for (size_t n : sizes) { bench(n, "runs32", 32); bench(n, "runs2", 2); }
  return 0;
}

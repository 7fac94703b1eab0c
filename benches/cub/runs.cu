// The anchors of benches/runs.rs: CUB's DeviceSelect::Unique and DeviceRunLengthEncode::Encode
// and Thrust's reduce_by_key (sums of u32 values) over the bench's keys (n sorted u32 keys in
// runs of 1 to 32, or of 1 or 2; SplitMix64 seed 9), on the same GPU in the same device call.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/runs.cu -o /tmp/runs && /tmp/runs [log2_n ...]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 10 after
// a warm-up, temp storage outside the timed region, the run count read back in each timed call
// as mergepath's calls read theirs; bytes as the bench counts them).
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/execution_policy.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <functional>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

static float time_ms(std::function<void()> f, int reps = 10) {
  f(); CK(cudaDeviceSynchronize());
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
static void report(const char* op, const char* impl, size_t n, float ms, double bytes, bool ok) {
  printf("%s\t%s\tu32\t%zu\t%.4f\t%.3f\t%.1f\t%s\n", op, impl, n, ms, n / ms / 1e6, bytes / ms / 1e6, ok ? "ok" : "WRONG");
}

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

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
  report(op, "cub_select_unique", n, ms, 4.0 * (n + runs), (size_t)found == runs);

  tb = 0;
  CK(cub::DeviceRunLengthEncode::Encode(nullptr, tb, in, out, counts, num, (int64_t)n));
  temp.resize(tb);
  ms = time_ms([&] { size_t t = tb; CK(cub::DeviceRunLengthEncode::Encode(thrust::raw_pointer_cast(temp.data()), t, in, out, counts, num, (int64_t)n)); CK(cudaMemcpy(&found, num, 8, cudaMemcpyDeviceToHost)); });
  snprintf(op, sizeof op, "run_length_encode_%s", name);
  report(op, "cub_run_length_encode", n, ms, 4.0 * (n + 2 * runs), (size_t)found == runs);

  ms = time_ms([&] {
    auto ends = thrust::reduce_by_key(thrust::device, d_keys.begin(), d_keys.end(), d_values.begin(), d_out.begin(), d_counts.begin());
    found = ends.first - d_out.begin();
  });
  snprintf(op, sizeof op, "reduce_by_key_sum_%s", name);
  report(op, "thrust_reduce_by_key", n, ms, 4.0 * (2 * n + 2 * runs), (size_t)found == runs);
}

int main(int argc, char** argv) {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# device %s sms %d cc %d.%d cub %d\n", p.name, p.multiProcessorCount, p.major, p.minor, CUB_VERSION);
  printf("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s\tok\n");
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(size_t(1) << atoi(argv[i]));
  if (sizes.empty()) sizes = {size_t(1) << 24, size_t(1) << 26};
  for (size_t n : sizes) { bench(n, "runs32", 32); bench(n, "runs2", 2); }
  return 0;
}

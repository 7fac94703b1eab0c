// The anchors of benches/multi.rs: what a user of CUB runs on one GPU for the same sizes, in the
// same device call: CUB's radix sort and merge sort of random u32 keys (64-bit counts, so 2^32
// keys and more) and the device copy of the keys, on GPU 0.
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/multi.cu -o /tmp/multi_anchors && /tmp/multi_anchors [log2_n ...]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 5
// event-timed calls after a warm-up, benches/tune/timing.cuh; temp storage outside the timed
// region; bytes: keys read and written once). Keys are made on the device (SplitMix64), so
// 2^32 of them take no host time.
#include <cub/cub.cuh>
#include <cstdint>
#include "../tune/timing.cuh"

static void report(const char* op, const char* impl, size_t n, float ms, bool ok) {
  printf("%s\t%s\tu32\t%zu\t%.4f\t%.3f\t%.1f\t%s\n", op, impl, n, ms, n / ms / 1e6, 8.0 * n / ms / 1e6, ok ? "ok" : "WRONG");
  fflush(stdout);
}

__global__ void random_keys(uint32_t* keys, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    keys[i] = (uint32_t)(z ^ (z >> 31));
  }
}
__global__ void count_descents(const uint32_t* keys, size_t n, unsigned long long* descents) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i + 1 < n; i += (size_t)gridDim.x * blockDim.x)
    if (keys[i + 1] < keys[i]) atomicAdd(descents, 1ull);
}
static bool sorted(const uint32_t* keys, size_t n, unsigned long long* d_count) {
  CK(cudaMemset(d_count, 0, sizeof *d_count));
  count_descents<<<4096, 256>>>(keys, n, d_count);
  unsigned long long h = 1; CK(cudaMemcpy(&h, d_count, sizeof h, cudaMemcpyDeviceToHost));
  return h == 0;
}

int main(int argc, char** argv) {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# device %s sms %d cc %d.%d cub %d\n", p.name, p.multiProcessorCount, p.major, p.minor, CUB_VERSION);
  printf("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s\tok\n");
  unsigned long long* d_count; CK(cudaMalloc(&d_count, sizeof *d_count));
  for (int i = 1; i < argc; ++i) {
    size_t n = size_t(1) << atoi(argv[i]);
    uint32_t *in, *out; CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&out, n * 4));
    random_keys<<<4096, 256>>>(in, n, 42); CK(cudaGetLastError());
    float ms = median_ms([&] { CK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice)); }, 5);
    report("copy", "cudaMemcpy", n, ms, true);
    { size_t tb = 0; CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, in, out, (int64_t)n));
      void* temp; CK(cudaMalloc(&temp, tb));
      ms = median_ms([&] { size_t t2 = tb; CK(cub::DeviceRadixSort::SortKeys(temp, t2, in, out, (int64_t)n)); }, 5);
      report("sort_keys", "cub_radix_sort", n, ms, sorted(out, n, d_count)); CK(cudaFree(temp)); }
    { size_t tb = 0; CK(cub::DeviceMergeSort::SortKeysCopy(nullptr, tb, in, out, (int64_t)n, ::cuda::std::less<>()));
      void* temp; CK(cudaMalloc(&temp, tb));
      ms = median_ms([&] { size_t t2 = tb; CK(cub::DeviceMergeSort::SortKeysCopy(temp, t2, in, out, (int64_t)n, ::cuda::std::less<>())); }, 5);
      report("sort_keys", "cub_merge_sort", n, ms, sorted(out, n, d_count)); CK(cudaFree(temp)); }
    CK(cudaFree(in)); CK(cudaFree(out));
  }
  return 0;
}

// How long the coarse partition search takes, by method and partition count, over 2^26 u32
// (two sorted halves): launch floor, the library's partition kernel with 1, 3 and 7 probes per
// round, and a 32-lane warp search. Build and run on the GPU machine, from the repository root,
// with the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/partition_latency.cu -o /tmp/partition_latency && /tmp/partition_latency
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
using K = uint32_t;
using C = mergepath::less_t<K>;

// The library's partition kernel with P probes per round.
template <int P>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
part_thread(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  mergepath::merge_path_partitions_body<mergepath::tie::a_first, P>(a, ac, b, bc, spacing, np, parts, C());
}
// The alternative measured against it: one 32-lane warp per partition, 32 probes a round.
__global__ void part_warp(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  int64_t p = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (p >= np) return;
  int lane = threadIdx.x & 31;
  int64_t diag = p * spacing < ac + bc ? p * spacing : ac + bc;
  int64_t begin = diag > bc ? diag - bc : 0, end = diag < ac ? diag : ac;
  while (begin < end) {
    int64_t len = end - begin;
    int64_t mid = begin + (len / 33) * (lane + 1) + ((len % 33) * (lane + 1)) / 33;
    bool pred = !C()(b[diag - 1 - mid], a[mid]);
    unsigned mask = __ballot_sync(~0u, pred);
    int cnt = __popc(mask);
    int64_t lt = __shfl_sync(~0u, mid, cnt > 0 ? cnt - 1 : 0), ff = __shfl_sync(~0u, mid, cnt < 32 ? cnt : 31);
    if (cnt > 0) begin = lt + 1;
    if (cnt < 32) end = ff;
  }
  if (lane == 0) parts[p] = begin;
}
__global__ void empty_kernel() {}

int main() {
  size_t n = size_t(1) << 26;
  std::mt19937_64 g(42); std::vector<K> h(n); for (auto& x : h) x = (K)g();
  std::sort(h.begin(), h.begin() + n / 2); std::sort(h.begin() + n / 2, h.end());
  K* a; CK(cudaMalloc(&a, n * sizeof(K))); K* b = a + n / 2; int64_t* parts; CK(cudaMalloc(&parts, (1 << 20) * 8));
  CK(cudaMemcpy(a, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  int64_t ac = n / 2, bc = n / 2;
  printf("empty_kernel_ms\t%.4f\n", median_ms([&] { empty_kernel<<<1, 32>>>(); }));
  printf("count\tp1_ms\tp3_ms\tp7_ms\twarp33_ms\n");
  for (int64_t count : {132, 528, 2048, 8192, 22800}) {
    int64_t spacing = (int64_t)n / count, np = count + 1;
    unsigned g1 = (unsigned)((np + 127) / 128), gw = (unsigned)((np * 32 + 127) / 128);
    float t1 = median_ms([&] { part_thread<1><<<g1, 128>>>(a, ac, b, bc, spacing, np, parts); });
    float t3 = median_ms([&] { part_thread<3><<<g1, 128>>>(a, ac, b, bc, spacing, np, parts); });
    float t7 = median_ms([&] { part_thread<7><<<g1, 128>>>(a, ac, b, bc, spacing, np, parts); });
    float tw = median_ms([&] { part_warp<<<gw, 128>>>(a, ac, b, bc, spacing, np, parts); });
    printf("%lld\t%.4f\t%.4f\t%.4f\t%.4f\n", (long long)count, t1, t3, t7, tw);
  }
  return 0;
}

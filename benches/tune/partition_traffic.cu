// DRAM traffic of the merge's partition searches (u32, 2^26, tiles of 128 x 23) by the kind of
// load the library's partition kernel uses. Build on the GPU machine, from the repository root,
// with the generated headers in .gpu/include (timing.cuh says how), and run under ncu for
// dram__bytes_read.sum:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/partition_traffic.cu -o /tmp/partition_traffic
//   /tmp/partition_traffic; ncu --kernel-name regex:partitions --launch-skip 1 --metrics gpu__time_duration.sum,dram__bytes_read.sum /tmp/partition_traffic profile
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

using K = uint32_t;

// The loads a search may use: plain (L1 and L2), L2 only (.cg), streaming (.cs), no L1
// allocation (.nc.L1::no_allocate).
template <int Kind> struct loader {
  const K* p;
  __device__ __forceinline__ K operator[](int64_t i) const {
    if constexpr (Kind == 0) return p[i];
    else if constexpr (Kind == 1) return __ldcg(p + i);
    else if constexpr (Kind == 2) return __ldcs(p + i);
    else {
      K v;
      asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p + i));
      return v;
    }
  }
};

// The library's partition kernel reading A and B through loader<Kind>.
template <int Kind>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
partitions(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  mergepath::merge_path_partitions_body(loader<Kind>{a}, ac, loader<Kind>{b}, bc, spacing, np, parts, mergepath::less_t<K>());
}

int main(int argc, char** argv) {
  const bool profile = argc > 1;  // only the cold-L2 runs, for ncu
  const size_t n = size_t(1) << 26;
  std::vector<K> h = sorted_halves<K>(n);
  K* a; int64_t* parts; int64_t* ref;
  CK(cudaMalloc(&a, n * sizeof(K))); CK(cudaMemcpy(a, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  const int64_t nv = 128 * 23, np = (int64_t)((n + nv - 1) / nv) + 1;
  CK(cudaMalloc(&parts, np * 8)); CK(cudaMalloc(&ref, np * 8));
  const unsigned grid = (unsigned)((np + 127) / 128);
  K* b = a + n / 2;
  // A buffer the size of L2 and more, read between runs so every run starts with a cold L2.
  K* flush; const size_t fn = size_t(1) << 25; CK(cudaMalloc(&flush, fn * sizeof(K))); CK(cudaMemset(flush, 1, fn * sizeof(K)));
  partitions<0><<<grid, 128>>>(a, n / 2, b, n - n / 2, nv, np, ref);
  CK(cudaDeviceSynchronize());
  auto run = [&](const char* what, auto kernel) {
    float ms = profile ? 0.f : median_ms([&] { kernel<<<grid, 128>>>(a, n / 2, b, n - n / 2, nv, np, parts); });
    std::vector<int64_t> x(np), y(np);
    CK(cudaMemcpy(x.data(), parts, np * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(y.data(), ref, np * 8, cudaMemcpyDeviceToHost));
    printf("%s\t%.4f ms\t%s\n", what, ms, x == y ? "ok" : "WRONG");
    CK(cudaMemset(flush, 2, fn * sizeof(K))); CK(cudaDeviceSynchronize());
    kernel<<<grid, 128>>>(a, n / 2, b, n - n / 2, nv, np, parts);  // the one to read under ncu (cold L2)
    CK(cudaDeviceSynchronize());
  };
  run("plain", partitions<0>);
  run("cg", partitions<1>);
  run("cs", partitions<2>);
  run("nc_no_allocate", partitions<3>);
  return 0;
}

// Merge u32 2^26, partitions + merge, for tile shapes and with the merge launched as a
// programmatic dependent of the partition kernel (griddepcontrol), at several L2 fetch
// granularities: the library's kernel bodies (merge_path_partitions_body, merge_tile) with the
// shape as template arguments. Build and run on the GPU machine, from the repository root,
// with the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/merge_pdl.cu -o /tmp/merge_pdl && /tmp/merge_pdl [log2_n]
// The 16-byte-store merge measured with it (BENCHMARKS.md, "Merge: the partition phase's floor")
// is in this file at commit bf81afe.
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using K = uint32_t;

template <bool Trigger>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
partitions(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
#if __CUDA_ARCH__ >= 900  // griddepcontrol is sm_90's (the program is built for others in CI)
  if (Trigger) asm volatile("griddepcontrol.launch_dependents;");
#endif
  mergepath::merge_path_partitions_body(a, ac, b, bc, spacing, np, parts, mergepath::less_t<K>());
}

template <int NT, int VT, bool Wait>
__global__ void __launch_bounds__(NT)
merge(const K* a, int64_t ac, const K* b, int64_t bc, const int64_t* parts, K* out) {
#if __CUDA_ARCH__ >= 900
  if (Wait) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  mergepath::merge_tile<NT, VT, false, K, K>(a, nullptr, ac, b, nullptr, bc, parts, out, nullptr, mergepath::less_t<K>());
}

struct Bench : merge_input<K> {
  explicit Bench(size_t n_) : merge_input<K>(n_) {
    printf("copy\t-\t-\t%.4f\t100.0\n", copy_ms);
  }
  void check(const char* what, int nt, int vt, float ms) {
    CK(cudaGetLastError());
    std::vector<K> got(n); CK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
    printf("%s\t%d\t%d\t%.4f\t%.1f\t%s\n", what, nt, vt, ms, 100.0 * copy_ms / ms, got == want ? "ok" : "WRONG");
    fflush(stdout);
    CK(cudaMemset(out, 0, n * sizeof(K)));
  }
  template <int NT, int VT> void run() {
    const int64_t nv = NT * VT, ac = n / 2, bc = n - n / 2;
    const int64_t tiles = (n + nv - 1) / nv, np = tiles + 1;
    const unsigned pgrid = (unsigned)((np + 127) / 128);
    auto part = [&] { partitions<false><<<pgrid, 128>>>(a, ac, b, bc, nv, np, parts); };
    auto part_trigger = [&] { partitions<true><<<pgrid, 128>>>(a, ac, b, bc, nv, np, parts); };
    auto mrg = [&] { merge<NT, VT, false><<<(unsigned)tiles, NT>>>(a, ac, b, bc, parts, out); };
    auto pdl = [&](auto kernel) { launch_dependent(kernel, dim3((unsigned)tiles), dim3(NT), a, ac, b, bc, parts, out); };
    printf("partitions\t%d\t%d\t%.4f\n", NT, VT, median_ms(part, 50));
    check("merge_only", NT, VT, median_ms(mrg, 50));
    check("part+merge", NT, VT, median_ms([&] { part(); mrg(); }, 50));
    check("part+pdl_merge", NT, VT, median_ms([&] { part_trigger(); pdl(merge<NT, VT, true>); }, 50));
  }
};

int main(int argc, char** argv) {
  size_t n = size_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  printf("what\tnt\tvt\tms\tpct_of_copy\tok\n");
  Bench t(n);
  size_t granularity = 0;
  CK(cudaDeviceGetLimit(&granularity, cudaLimitMaxL2FetchGranularity));
  printf("default L2 fetch granularity %zu\n", granularity);
  for (size_t g : {(size_t)32, (size_t)64, (size_t)128, granularity}) {
    CK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, g));
    CK(cudaDeviceGetLimit(&granularity, cudaLimitMaxL2FetchGranularity));
    printf("## L2 fetch granularity %zu\n", granularity);
    t.run<128, 23>(); t.run<256, 19>();
  }
  return 0;
}

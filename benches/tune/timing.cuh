// Shared by the programs in benches/tune: error checks, event timing and the merges' input.
// The device headers include generated ones (mergepath/contract.cuh, from mergepath-build);
// `cargo test --test tune_build`, which compiles every program here, writes them to
// <target dir>/tune-build/include. For the GPU machine (no Rust there), after staging:
//   mkdir -p .gpu && cp -r "${CARGO_TARGET_DIR:-target}/tune-build/include" .gpu/
// and carry .gpu; each program's header gives its nvcc line (-I mergepath-build/kernels -I .gpu/include).
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

// Median of `reps` event-timed calls of f on the legacy stream, after one warm-up call.
template <class F> float median_ms(F f, int reps = 30) {
  f(); CK(cudaDeviceSynchronize());
  cudaEvent_t start, stop; CK(cudaEventCreate(&start)); CK(cudaEventCreate(&stop));
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(start)); f(); CK(cudaEventRecord(stop)); CK(cudaEventSynchronize(stop));
    float ms; CK(cudaEventElapsedTime(&ms, start, stop)); t.push_back(ms);
  }
  CK(cudaEventDestroy(start)); CK(cudaEventDestroy(stop));
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

// `kernel` launched on the legacy stream as a programmatic dependent of the kernel before it
// (as the library's Gpu::launch_dependent).
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = 0;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, (Params)args...));
}

// The log2 sizes given on the command line, else `otherwise`.
inline std::vector<int> log2_sizes(int argc, char** argv, std::vector<int> otherwise) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(atoi(argv[i]));
  return sizes.empty() ? otherwise : sizes;
}

// n random keys whose two halves are each sorted: the merges' input (as the anchors make it).
template <class K> std::vector<K> sorted_halves(size_t n) {
  std::mt19937_64 g(42);
  std::vector<K> h(n);
  for (auto& x : h) x = (K)g();
  std::sort(h.begin(), h.begin() + n / 2);
  std::sort(h.begin() + n / 2, h.end());
  return h;
}

// A merge benchmark's buffers: A and B (sorted_halves, one allocation), the output, room for
// partitions of tiles down to 256 keys, the expected merge, and the time of a device copy of
// the same bytes (the ceiling).
template <class K> struct merge_input {
  size_t n; K *a, *b, *out; int64_t* parts; std::vector<K> want; float copy_ms;
  explicit merge_input(size_t n_) : n(n_) {
    std::vector<K> h = sorted_halves<K>(n);
    want.resize(n); std::merge(h.begin(), h.begin() + n / 2, h.begin() + n / 2, h.end(), want.begin());
    CK(cudaMalloc(&a, n * sizeof(K))); b = a + n / 2; CK(cudaMalloc(&out, n * sizeof(K)));
    CK(cudaMalloc(&parts, (n / 256 + 2) * sizeof(int64_t)));
    CK(cudaMemcpy(a, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    copy_ms = median_ms([&] { CK(cudaMemcpyAsync(out, a, n * sizeof(K), cudaMemcpyDeviceToDevice)); }, 50);
  }
};

// The first positions of runs over n positions as benches/cub/runs.cu makes them (its
// SplitMix64, seed 9): lengths 1 to `longest`, the last cut at n.
inline std::vector<size_t> run_starts(size_t n, uint64_t longest) {
  uint64_t s = 9;
  std::vector<size_t> starts;
  for (size_t at = 0; at < n;) {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    starts.push_back(at);
    at += 1 + (z ^ (z >> 31)) % longest;
  }
  return starts;
}

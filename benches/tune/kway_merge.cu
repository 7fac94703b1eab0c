// The sort engine's pieces measured alone (issue 38): (1) the k-way tile merge — a tile's slices
// of k sorted runs merged in shared memory by cta_merge_lists (pairwise, ceil(log2 k) rounds) —
// given exact splits computed on the host, so no partition search is timed; two ways of loading
// the slices: the library's multiway_merge_tile (each item finds its slice by a binary search
// over the slice starts) and one warp per slice (coalesced, no search); (2) the blocksort on
// tiles of 1x, 2x and 4x the tuning table's (NT = 256, 512, 1024 threads, dynamic shared
// memory), the passes a larger tile saves being log2 of the factor. Build and run on the GPU
// machine, from the repository root, with the generated headers in .gpu/include (timing.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/kway_merge.cu -o /tmp/kway_merge && /tmp/kway_merge [log2_n [k]]
// (a k: that k alone, 256-thread tiles, no blocksorts: for ncu).
// Prints TSV: what key_bytes k nt vt ms gbytes_s of_copy ok (of_copy: the device copy's time of
// the same bytes over this one's).
#include <mergepath/kernel/multiway.cuh>
#include <mergepath/kernel/mergesort.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using mergepath::less_t;

template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) tile_library(const K* const* inputs, const int64_t* counts, int ways, int64_t total,
                                                   const int64_t* splits, K* out) {
  mergepath::multiway_merge_tile<NT, VT, false, K, K>(inputs, (const K* const*)nullptr, counts, ways, total, splits, out,
                                                      (K*)nullptr, less_t<K>());
}

// The same tile, its slices loaded one warp per slice.
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) tile_warp_load(const K* const* inputs, const int64_t* counts, int ways, int64_t total,
                                                     const int64_t* splits, K* out) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ mergepath::multiway_slices_shared<NT> slices;
  const int64_t diag0 = (int64_t)blockIdx.x * NV;
  const int n_out = total - diag0 < NV ? (int)(total - diag0) : NV;
  const int64_t* row0 = splits + blockIdx.x * (int64_t)ways;
  const int n = mergepath::multiway_slices<NT>(ways, mergepath::multiway_ranges_between<NT>(counts, ways, row0, row0 + ways), n_out, slices);
  const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
  for (int t = warp; t < ways; t += NT / 32) {
    const K* src = inputs[t] + slices.begin[t];
    for (int i = slices.start[t] + lane; i < slices.start[t + 1]; i += 32) shared_keys[i] = src[i - slices.start[t]];
  }
  __syncthreads();
  K keys[VT];
  int positions[VT];
  mergepath::cta_merge_lists<NT, VT, false>(keys, positions, n, slices.start, ways, shared_keys, (int*)nullptr, less_t<K>());
  mergepath::cta_store_thread_order<NT, VT>(keys, shared_keys, out + diag0, n);
}

template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) blocksort_dynamic(const K* in, int64_t count, K* out) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  mergepath::blocksort_tile_in<NT, VT, false, K, K>(in, (const K*)nullptr, count, out, (K*)nullptr, (K*)dynamic_shared,
                                                    (int*)nullptr, less_t<K>());
}

// k runs of n / k keys (together a strictly increasing sequence dealt to the runs at random), the
// splits at every tile boundary, and the merged result they must give.
template <class K> struct KwayInput {
  size_t n;
  int k;
  std::vector<K> merged;
  std::vector<int> label;  // the run each item of `merged` went to
  K* keys = nullptr;       // the runs, one after another
  K** inputs = nullptr;
  int64_t* counts = nullptr;
  KwayInput(size_t n_, int k_) : n(n_ - n_ % k_), k(k_), merged(n), label(n) {
    std::mt19937_64 g(k);
    uint64_t x = 0;
    const uint64_t step = sizeof(K) == 4 ? 60 : (uint64_t(1) << 32);  // n * step stays in K for n <= 2^26
    for (auto& m : merged) m = (K)(x += 1 + g() % step);
    for (size_t i = 0; i < n; ++i) label[i] = (int)(i % k);
    std::shuffle(label.begin(), label.end(), g);
    std::vector<K> runs(n);
    std::vector<size_t> at(k);
    for (int t = 0; t < k; ++t) at[t] = t * (n / k);
    for (size_t i = 0; i < n; ++i) runs[at[label[i]]++] = merged[i];
    CK(cudaMalloc(&keys, n * sizeof(K)));
    CK(cudaMemcpy(keys, runs.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    std::vector<K*> ptrs(k);
    std::vector<int64_t> cnt(k, (int64_t)(n / k));
    for (int t = 0; t < k; ++t) ptrs[t] = keys + t * (n / k);
    CK(cudaMalloc(&inputs, k * sizeof(K*)));
    CK(cudaMalloc(&counts, k * sizeof(int64_t)));
    CK(cudaMemcpy(inputs, ptrs.data(), k * sizeof(K*), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(counts, cnt.data(), k * sizeof(int64_t), cudaMemcpyHostToDevice));
  }
  ~KwayInput() { cudaFree(keys); cudaFree(inputs); cudaFree(counts); }
  // Rows of k splits at ranks 0, nv, 2 nv, ..., n (as multiway_merge_tile reads them).
  int64_t* splits(int nv) const {
    const size_t tiles = (n + nv - 1) / nv;
    std::vector<int64_t> rows((tiles + 1) * k), seen(k, 0);
    for (size_t i = 0; i <= n; ++i) {
      if (i % nv == 0 || i == n) std::copy(seen.begin(), seen.end(), rows.begin() + (i + nv - 1) / nv * k);
      if (i < n) ++seen[label[i]];
    }
    int64_t* d;
    CK(cudaMalloc(&d, rows.size() * sizeof(int64_t)));
    CK(cudaMemcpy(d, rows.data(), rows.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    return d;
  }
};

static float copy_ms_of(size_t bytes) {
  void *a, *b;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  const float ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  cudaFree(a); cudaFree(b);
  return ms;
}

template <class K> static void report(const char* what, int k, int nt, int vt, size_t n, float ms, float copy_ms, bool ok) {
  printf("%s\t%zu\t%d\t%d\t%d\t%.4f\t%.1f\t%.3f\t%s\n", what, sizeof(K), k, nt, vt, ms, 2.0 * n * sizeof(K) / ms / 1e6,
         copy_ms / ms, ok ? "ok" : "WRONG");
  fflush(stdout);
}

template <int NT, int VT, class K> void kway(const KwayInput<K>& in, K* out, float copy_ms) {
  const int nv = NT * VT;
  int64_t* splits = in.splits(nv);
  const unsigned tiles = (unsigned)((in.n + nv - 1) / nv);
  auto check = [&] {
    std::vector<K> got(in.n);
    CK(cudaMemcpy(got.data(), out, in.n * sizeof(K), cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0, in.n * sizeof(K)));
    return got == in.merged;
  };
  float ms = median_ms([&] { tile_library<NT, VT, K><<<tiles, NT>>>(in.inputs, in.counts, in.k, (int64_t)in.n, splits, out); });
  CK(cudaGetLastError());
  report<K>("tile_library", in.k, NT, VT, in.n, ms, copy_ms, check());
  ms = median_ms([&] { tile_warp_load<NT, VT, K><<<tiles, NT>>>(in.inputs, in.counts, in.k, (int64_t)in.n, splits, out); });
  CK(cudaGetLastError());
  report<K>("tile_warp_load", in.k, NT, VT, in.n, ms, copy_ms, check());
  cudaFree(splits);
}

template <int NT, int VT, class K> void blocksort(size_t n, float copy_ms) {
  const int nv = NT * VT;
  const size_t bytes = (size_t)nv * sizeof(K);
  CK(cudaFuncSetAttribute(blocksort_dynamic<NT, VT, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  std::mt19937_64 g(7);
  std::vector<K> h(n);
  for (auto& x : h) x = (K)g();
  K *in, *out;
  CK(cudaMalloc(&in, n * sizeof(K))); CK(cudaMalloc(&out, n * sizeof(K)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  const unsigned tiles = (unsigned)((n + nv - 1) / nv);
  const float ms = median_ms([&] { blocksort_dynamic<NT, VT, K><<<tiles, NT, bytes>>>(in, (int64_t)n, out); });
  CK(cudaGetLastError());
  std::vector<K> got(n);
  CK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (size_t t = 0; t < n; t += nv) {
    const size_t e = std::min(n, t + nv);
    std::sort(h.begin() + t, h.begin() + e);
    ok = ok && std::equal(h.begin() + t, h.begin() + e, got.begin() + t);
  }
  report<K>("blocksort", 1, NT, VT, n, ms, copy_ms, ok);
  cudaFree(in); cudaFree(out);
}

// `only_k` > 0: that k alone, the 256-thread large-VT tiles, no blocksorts (for a profiler).
template <class K, int VT_SMALL, int VT_LARGE> void run_type(size_t n, int only_k) {
  const float copy_ms = copy_ms_of(n * sizeof(K));
  printf("copy\t%zu\t-\t-\t-\t%.4f\t%.1f\t1.000\tok\n", sizeof(K), copy_ms, 2.0 * n * sizeof(K) / copy_ms / 1e6);
  K* out;
  CK(cudaMalloc(&out, n * sizeof(K)));
  for (int k : {2, 4, 8, 16, 32, 64}) {
    if (only_k > 0 && k != only_k) continue;
    KwayInput<K> in(n, k);
    if (only_k == 0) kway<128, VT_LARGE, K>(in, out, copy_ms);
    kway<256, VT_LARGE, K>(in, out, copy_ms);
    if (only_k == 0) kway<256, VT_SMALL, K>(in, out, copy_ms);
  }
  cudaFree(out);
  if (only_k > 0) return;
  blocksort<256, VT_LARGE, K>(n, copy_ms);
  blocksort<512, VT_LARGE, K>(n, copy_ms);
  blocksort<1024, VT_LARGE, K>(n, copy_ms);
  blocksort<512, VT_SMALL, K>(n, copy_ms);
}

int main(int argc, char** argv) {
  const size_t n = size_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  const int only_k = argc > 2 ? atoi(argv[2]) : 0;
  printf("what\tkey_bytes\tk\tnt\tvt\tms\tgbytes_s\tof_copy\tok\n");
  run_type<uint32_t, 11, 23>(n, only_k);
  run_type<uint64_t, 7, 15>(n, only_k);
  return 0;
}

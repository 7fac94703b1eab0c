// Merge Path partitions by the aligned search (merge_path_aligned, the library's) against plain
// binary search: the aligned search probes A at positions on a power-of-two grid, the same for
// every diagonal in the top levels, so those probes hit L2 instead of each search fetching its
// own DRAM sectors.
// Times the partitions alone (cold L2) and partitions + the library's merge kernel, u32 and u64,
// for a few tile shapes; `aligned4` decides two bits per round (three probes at once).
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/partition_aligned.cu -o /tmp/pa && /tmp/pa 26
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"

// Probes 1: binary search; 0: the aligned search (the library's PARTITION_PROBES).
template <class K, int Probes>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
partitions(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  mergepath::merge_path_partitions_body<mergepath::tie::a_first, Probes>(a, ac, b, bc, spacing, np, parts, mergepath::less_t<K>());
}

// The aligned search deciding two bits per round: three probes in flight together, half the
// rounds (for a partition kernel bound by latency rather than DRAM sectors).
template <class K>
__device__ __forceinline__ int64_t merge_path_aligned4(const K* a, int64_t a_count, const K* b, int64_t b_count, int64_t diag) {
  const int64_t lo = diag > b_count ? diag - b_count : 0, hi = diag < a_count ? diag : a_count;
  if (hi <= 0) return 0;
  int64_t x = 0;
  int t = 63 - __clzll((long long)hi);
  for (; t >= 1; t -= 2) {
    const int64_t step = int64_t(1) << (t - 1);
    int taken = 0;
#pragma unroll
    for (int j = 1; j <= 3; ++j) {
      const int64_t next = x + j * step;
      taken += next <= hi && (next <= lo || mergepath::a_goes_first(a[next - 1], b[diag - next], mergepath::less_t<K>()));
    }
    x += taken * step;
  }
  if (t == 0) {
    const int64_t next = x + 1;
    if (next <= hi && (next <= lo || mergepath::a_goes_first(a[next - 1], b[diag - next], mergepath::less_t<K>()))) x = next;
  }
  return x;
}

template <class K>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
partitions4(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np) return;
  const int64_t total = ac + bc, diag = p * spacing < total ? p * spacing : total;
  parts[p] = merge_path_aligned4(a, ac, b, bc, diag);
}

template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) merge_kernel(const K* a, int64_t ac, const K* b, int64_t bc, const int64_t* parts, K* out) {
  mergepath::merge_tile<NT, VT, false, K, K>(a, nullptr, ac, b, nullptr, bc, parts, out, nullptr, mergepath::less_t<K>());
}

template <int NT, int VT, class K> void run(const char* ty, size_t n) {
  merge_input<K> in(n);
  K* flush; const size_t fn = size_t(1) << 26; CK(cudaMalloc(&flush, fn));
  const int64_t nv = NT * VT, tiles = (int64_t)((n + nv - 1) / nv), np = tiles + 1;
  int64_t* ref; CK(cudaMalloc(&ref, np * 8));
  const unsigned pgrid = (unsigned)((np + 127) / 128);
  partitions<K, 1><<<pgrid, 128>>>(in.a, n / 2, in.b, n - n / 2, nv, np, ref);
  auto check = [&](const char* what, float ms_parts, float ms_total) {
    std::vector<int64_t> x(np), y(np);
    CK(cudaMemcpy(x.data(), in.parts, np * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(y.data(), ref, np * 8, cudaMemcpyDeviceToHost));
    std::vector<K> o(n); CK(cudaMemcpy(o.data(), in.out, n * sizeof(K), cudaMemcpyDeviceToHost));
    printf("%s\t%s\t2^%d\tparts %.4f ms\tparts+merge %.4f ms\tcopy %.4f\t%.3f of copy\t%s\n", ty, what, (int)__builtin_ctzll(n), ms_parts, ms_total, in.copy_ms,
           in.copy_ms / ms_total, x == y && o == in.want ? "ok" : "WRONG");
  };
  auto measure = [&](const char* what, auto pk) {
    // Partitions alone, each run after a flush of L2 (as after a previous large kernel).
    std::vector<float> t;
    cudaEvent_t ev0, ev1; CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
    for (int r = 0; r < 30; ++r) {
      CK(cudaMemsetAsync(flush, r, fn));
      CK(cudaEventRecord(ev0)); pk<<<pgrid, 128>>>(in.a, n / 2, in.b, n - n / 2, nv, np, in.parts); CK(cudaEventRecord(ev1));
      CK(cudaEventSynchronize(ev1)); float ms; CK(cudaEventElapsedTime(&ms, ev0, ev1)); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    float total = median_ms([&] {
      pk<<<pgrid, 128>>>(in.a, n / 2, in.b, n - n / 2, nv, np, in.parts);
      merge_kernel<NT, VT, K><<<(unsigned)tiles, NT>>>(in.a, n / 2, in.b, n - n / 2, in.parts, in.out);
    });
    check(what, t[t.size() / 2], total);
  };
  measure("binary", partitions<K, 1>);
  measure("aligned", partitions<K, 0>);
  measure("aligned4", partitions4<K>);
  CK(cudaFree(flush)); CK(cudaFree(ref)); CK(cudaFree(in.a)); CK(cudaFree(in.out)); CK(cudaFree(in.parts));
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const size_t n = size_t(1) << atoi(argv[i]);
    run<128, 23, uint32_t>("u32 128x23", n);
    run<256, 19, uint32_t>("u32 256x19", n);
    run<256, 15, uint64_t>("u64 256x15", n);
  }
  return 0;
}

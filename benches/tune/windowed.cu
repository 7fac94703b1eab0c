// Experiment: coarse partitions searched only to a window of W A-positions, the merge CTA loading
// the tile plus the windows and finishing both boundary searches in shared memory.
//   nvcc -O3 -std=c++17 -arch=sm_90 -I../../kernels windowed.cu -o windowed && ./windowed
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <random>

using K = uint32_t;
using C = mergepath::less_t<K>;

// lo[p]: the crossing of diagonal p * spacing lies in [lo[p], lo[p] + W].
template <int W>
__global__ void part_window(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* lo) {
  int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np) return;
  int64_t total = ac + bc, diag = p * spacing < total ? p * spacing : total;
  int64_t begin = diag > bc ? diag - bc : 0, end = diag < ac ? diag : ac;
  while (end - begin > W) {
    int64_t mid = begin + ((end - begin) >> 1);
    if (mergepath::a_goes_first(a[mid], b[diag - 1 - mid], C())) begin = mid + 1; else end = mid;
  }
  lo[p] = begin;
}

template <int NT, int VT, int W>
__global__ void __launch_bounds__(NT) merge_window(const K* a, int64_t ac, const K* b, int64_t bc, const int64_t* lo, K* out) {
  constexpr int NV = NT * VT, EXTRA = (4 * W + NT - 1) / NT;
  __shared__ K keys[NT * (VT + EXTRA)];
  __shared__ int split[2];
  const int64_t tile = blockIdx.x, total = ac + bc;
  const int64_t d0 = tile * NV, d1 = d0 + NV < total ? d0 + NV : total;
  const int64_t lo0 = lo[tile], lo1 = lo[tile + 1];
  const int64_t hi0 = min(lo0 + W, min(d0, ac)), hi1 = min(lo1 + W, min(d1, ac));
  const int64_t A0 = lo0, B0 = d0 - hi0;
  const int na = (int)(hi1 - A0), nb = (int)(d1 - lo1 - B0);
  mergepath::cta_load_two_ranges<NT, VT + EXTRA>(a + A0, na, b + B0, na + nb, keys);
  __syncthreads();
  const int ld0 = (int)(d0 - A0 - B0), ld1 = (int)(d1 - A0 - B0);
  if (threadIdx.x == 0) split[0] = mergepath::merge_path(keys, na, keys + na, nb, ld0, C());
  if (threadIdx.x == 32) split[1] = mergepath::merge_path(keys, na, keys + na, nb, ld1, C());
  __syncthreads();
  const int sa0 = split[0], sa1 = split[1];
  const int sb0 = na + ld0 - sa0, sb1 = na + ld1 - sa1;
  const int a_n = sa1 - sa0, b_n = sb1 - sb0, count = a_n + b_n;
  int diag = VT * (int)threadIdx.x;
  if (diag > count) diag = count;
  int mp = mergepath::merge_path(keys + sa0, a_n, keys + sb0, b_n, diag, C());
  K results[VT];
  int indices[VT];
  mergepath::serial_merge<VT>(keys, sa0 + mp, sa1, sb0 + diag - mp, sb1, results, indices, C());
  mergepath::cta_store_thread_order<NT, VT>(results, keys, out + d0, count);
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT) merge_exact(const K* a, int64_t ac, const K* b, int64_t bc, const int64_t* parts, K* out) {
  mergepath::merge_tile<NT, VT, false, K, K>(a, nullptr, ac, b, nullptr, bc, parts, out, nullptr, C());
}
__global__ void __launch_bounds__(128) part_exact(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  mergepath::merge_path_partitions_body(a, ac, b, bc, spacing, np, parts, C());
}

struct Data {
  size_t n; K *a, *out; int64_t* parts; std::vector<K> want; float copy_ms;
};

template <int NT, int VT, int W> void run(Data& d) {
  const int64_t nv = NT * VT, ac = d.n / 2, bc = d.n - d.n / 2, tiles = (d.n + nv - 1) / nv, np = tiles + 1;
  const K* a = d.a; const K* b = d.a + ac;
  auto part = [&] { part_window<W><<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, d.parts); };
  auto all = [&] { part(); merge_window<NT, VT, W><<<(unsigned)tiles, NT>>>(a, ac, b, bc, d.parts, d.out); };
  CK(cudaMemset(d.out, 0, d.n * sizeof(K)));
  float pms = median_ms(part), ms = median_ms(all);
  CK(cudaGetLastError());
  std::vector<K> got(d.n); CK(cudaMemcpy(got.data(), d.out, d.n * sizeof(K), cudaMemcpyDeviceToHost));
  printf("window%d\t%d\t%d\t%.4f\t%.4f\t%.1f\t%s\n", W, NT, VT, pms, ms, 100.0 * d.copy_ms / ms, got == d.want ? "ok" : "WRONG");
  fflush(stdout);
}
template <int NT, int VT> void run_exact(Data& d) {
  const int64_t nv = NT * VT, ac = d.n / 2, bc = d.n - d.n / 2, tiles = (d.n + nv - 1) / nv, np = tiles + 1;
  const K* a = d.a; const K* b = d.a + ac;
  auto part = [&] { part_exact<<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, d.parts); };
  auto all = [&] { part(); merge_exact<NT, VT><<<(unsigned)tiles, NT>>>(a, ac, b, bc, d.parts, d.out); };
  CK(cudaMemset(d.out, 0, d.n * sizeof(K)));
  float pms = median_ms(part), ms = median_ms(all);
  std::vector<K> got(d.n); CK(cudaMemcpy(got.data(), d.out, d.n * sizeof(K), cudaMemcpyDeviceToHost));
  printf("exact\t%d\t%d\t%.4f\t%.4f\t%.1f\t%s\n", NT, VT, pms, ms, 100.0 * d.copy_ms / ms, got == d.want ? "ok" : "WRONG");
  fflush(stdout);
}

int main(int argc, char** argv) {
  Data d; d.n = size_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  CK(cudaMalloc(&d.a, d.n * sizeof(K))); CK(cudaMalloc(&d.out, d.n * sizeof(K))); CK(cudaMalloc(&d.parts, (d.n / 256 + 2) * 8));
  for (int dist = 0; dist < 2; ++dist) {
    std::mt19937_64 g(42); std::vector<K> h(d.n);
    for (auto& x : h) x = dist == 0 ? (K)g() : (K)(g() % 1000);  // uniform, then few distinct
    std::sort(h.begin(), h.begin() + d.n / 2); std::sort(h.begin() + d.n / 2, h.end());
    CK(cudaMemcpy(d.a, h.data(), d.n * sizeof(K), cudaMemcpyHostToDevice));
    d.want = h; std::sort(d.want.begin(), d.want.end());
    d.copy_ms = median_ms([&] { CK(cudaMemcpyAsync(d.out, d.a, d.n * sizeof(K), cudaMemcpyDeviceToDevice)); });
    printf("# dist %s copy_ms %.4f\nwhat\tnt\tvt\tpart_ms\ttotal_ms\tpct_of_copy\tok\n", dist == 0 ? "uniform" : "few_distinct", d.copy_ms);
    run_exact<128, 23>(d);
    run<128, 23, 32>(d); run<128, 23, 64>(d); run<128, 23, 128>(d); run<128, 23, 256>(d);
    run<128, 31, 64>(d); run<128, 31, 128>(d);
  }
  return 0;
}

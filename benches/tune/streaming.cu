// Experiment: a streaming merge. Each CTA merges one long stretch of the output tile after tile,
// finding each tile's end in shared memory and prefetching the next tile's inputs with cp.async
// while it merges the current one, so only one coarse partition per CTA is searched in global
// memory (against one per tile in the library's two-kernel merge).
//   nvcc -O3 -std=c++17 -arch=sm_90 -I../../kernels streaming.cu -o streaming && ./streaming
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

template <class T> __device__ __forceinline__ void cp_async(T* smem, const T* gmem) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async moves 4, 8 or 16 bytes");
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(sizeof(T)) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

template <int VT, class KA, class KB, class K, class Comp>
__device__ __forceinline__ void serial_merge_view(KA a, int ai, int a_end, KB b, int bi, int b_end,
                                                  K (&results)[VT], Comp comp) {
  K a_key = a[ai < a_end ? ai : 0];
  K b_key = b[bi < b_end ? bi : 0];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    bool take_a = (bi >= b_end) || ((ai < a_end) && mergepath::a_goes_first(a_key, b_key, comp));
    results[i] = take_a ? a_key : b_key;
    if (take_a) { if (++ai < a_end) a_key = a[ai]; }
    else { if (++bi < b_end) b_key = b[bi]; }
  }
}


// Masked ring of R = 2^k slots: slot of global index p is p & (R - 1), so slot and global
// addresses agree modulo 16 bytes and 16-byte cp.async can fill the ring.
template <class K, int R> struct pow2_ring_view {
  const K* slots;
  int base;
  __device__ __forceinline__ K operator[](int x) const { return slots[(base + x) & (R - 1)]; }
};
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
// Copies src[from, to) into ring[p & (R-1)], 16 bytes at a time where aligned.
template <int NT, int R, class K>
__device__ __forceinline__ void ring_fill(K* ring, const K* src, int64_t from, int64_t to, bool vec_ok) {
  constexpr int EPV = 16 / sizeof(K);
  if (from >= to) return;
  const int tid = threadIdx.x;
  if (!vec_ok) {
    for (int64_t p = from + tid; p < to; p += NT) cp_async(&ring[(int)p & (R - 1)], &src[p]);
    return;
  }
  int64_t v0 = (from + EPV - 1) / EPV * EPV, v1 = to / EPV * EPV;
  if (v0 > v1) v0 = v1 = to;  // no whole vector inside
  // head [from, v0) and tail [v1, to): fewer than EPV each
  int head = (int)(v0 - from), tail = (int)(to - v1);
  if (tid < head) cp_async(&ring[(int)(from + tid) & (R - 1)], &src[from + tid]);
  else if (tid >= 32 && tid - 32 < tail) cp_async(&ring[(int)(v1 + tid - 32) & (R - 1)], &src[v1 + tid - 32]);
  const int chunks = (int)((v1 - v0) / EPV);
  for (int c = tid; c < chunks; c += NT) {
    int64_t p = v0 + (int64_t)c * EPV;
    cp_async16(&ring[(int)p & (R - 1)], &src[p]);
  }
}

// Power-of-two rings, 16-byte fills and 16-byte output stores. (A first version with 4-byte
// copies and modulo rings measured slower still: BENCHMARKS.md.)
template <int NT, int VT, class K> __host__ __device__ constexpr int pow2_ring() {
  int r = 1; while (r < 2 * NT * VT) r *= 2; return r;
}
template <int NT, int VT, class K> __host__ __device__ constexpr size_t stream_smem() {
  return sizeof(K) * (2 * pow2_ring<NT, VT, K>() + NT * VT);
}
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT)
stream_merge(const K* a, int64_t an, const K* b, int64_t bn, int64_t per_cta, K* out) {
  using C = mergepath::less_t<K>;
  constexpr int T = NT * VT, R = pow2_ring<NT, VT, K>(), MASK = R - 1;
  constexpr int EPV = 16 / sizeof(K);
  static_assert(T % EPV == 0, "tile must be whole vectors");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  K* ring_a = reinterpret_cast<K*>(smem_raw);
  K* ring_b = ring_a + R;
  K* stage = ring_b + R;
  __shared__ int64_t s_start;
  __shared__ int s_split;
  const int tid = threadIdx.x;
  const int64_t total = an + bn;
  int64_t d = (int64_t)blockIdx.x * per_cta;
  if (d >= total) return;
  const int64_t d_end = d + per_cta < total ? d + per_cta : total;
  const bool vec_a = ((uintptr_t)a & 15) == 0, vec_b = ((uintptr_t)b & 15) == 0;
  const bool vec_out = ((uintptr_t)(out + d) & 15) == 0;
  if (tid == 0) s_start = mergepath::merge_path(a, an, b, bn, d, C());
  __syncthreads();
  int64_t ai = s_start, bi = d - ai;
  ring_fill<NT, R>(ring_a, a, ai, ai + T < an ? ai + T : an, vec_a);
  ring_fill<NT, R>(ring_b, b, bi, bi + T < bn ? bi + T : bn, vec_b);
  cp_async_commit();
  while (d < d_end) {
    const int count = (int)(d_end - d < T ? d_end - d : T);
    cp_async_wait_all();
    __syncthreads();
    const int a_win = (int)(an - ai < T ? an - ai : T), b_win = (int)(bn - bi < T ? bn - bi : T);
    pow2_ring_view<K, R> va{ring_a, (int)ai & MASK}, vb{ring_b, (int)bi & MASK};
    const int diag = VT * tid < count ? VT * tid : count;
    const int mp = mergepath::merge_path(va, a_win, vb, b_win, diag, C());
    if (tid == NT - 1) s_split = mergepath::merge_path(va, a_win, vb, b_win, count, C());
    __syncthreads();
    const int split = s_split;
    const int64_t a_next = ai + split, b_next = bi + (count - split);
    ring_fill<NT, R>(ring_a, a, ai + T < an ? ai + T : an, a_next + T < an ? a_next + T : an, vec_a);
    ring_fill<NT, R>(ring_b, b, bi + T < bn ? bi + T : bn, b_next + T < bn ? b_next + T : bn, vec_b);
    cp_async_commit();
    K results[VT];
    serial_merge_view<VT>(va, mp, split, vb, diag - mp, count - split, results, C());
#pragma unroll
    for (int i = 0; i < VT; ++i) stage[VT * tid + i] = results[i];
    __syncthreads();
    if (vec_out && count == T) {
      const uint4* s4 = reinterpret_cast<const uint4*>(stage);
      uint4* o4 = reinterpret_cast<uint4*>(out + d);
#pragma unroll
      for (int i = 0; i < (T / EPV + NT - 1) / NT; ++i) {
        int idx = NT * i + tid;
        if (idx < T / EPV) o4[idx] = s4[idx];
      }
    } else {
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        int idx = NT * i + tid;
        if (idx < count) out[d + idx] = stage[idx];
      }
    }
    ai = a_next; bi = b_next; d += count;
  }
}

template <class K>
__global__ void partitions(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  mergepath::merge_path_partitions_body(a, ac, b, bc, spacing, np, parts, mergepath::less_t<K>());
}
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT)
tile_merge(const K* a, int64_t ac, const K* b, int64_t bc, const int64_t* parts, K* out) {
  mergepath::merge_tile<NT, VT, false, K, K>(a, nullptr, ac, b, nullptr, bc, parts, out, nullptr, mergepath::less_t<K>());
}

template <class K> struct Bench {
  size_t n; int64_t ac, bc; K *a, *b, *out; int64_t* parts; std::vector<K> want; float copy_ms; int sms;
  Bench(size_t n_, size_t a_n, int dist) : n(n_), ac((int64_t)a_n), bc((int64_t)(n_ - a_n)) {
    std::mt19937_64 g(42 + dist); std::vector<K> h(n);
    for (auto& x : h) x = dist == 0 ? (K)g() : dist == 1 ? (K)7 : (K)(g() % 5);
    std::sort(h.begin(), h.begin() + ac); std::sort(h.begin() + ac, h.end());
    want.resize(n); std::merge(h.begin(), h.begin() + ac, h.begin() + ac, h.end(), want.begin());
    CK(cudaMalloc(&a, n * sizeof(K) + 16)); b = a + ac; CK(cudaMalloc(&out, n * sizeof(K) + 16));
    CK(cudaMalloc(&parts, (n / 256 + 1024) * sizeof(int64_t)));
    CK(cudaMemcpy(a, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    copy_ms = median_ms([&] { CK(cudaMemcpyAsync(out, a, n * sizeof(K), cudaMemcpyDeviceToDevice)); });
  }
  ~Bench() { cudaFree(a); cudaFree(out); cudaFree(parts); }
  bool check() {
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<K> got(n); CK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0, n * sizeof(K)));
    return got == want;
  }
  void report(const char* what, int nt, int vt, int ctas, float ms, bool ok) {
    if (ms == 0.f && ok) return;  // correctness-only call
    printf("%s\t%zu\t%zu\t%d\t%d\t%d\t%.4f\t%.1f\t%.3f\t%s\n", what, sizeof(K), n, nt, vt, ctas, ms,
           2.0 * n * sizeof(K) / ms / 1e6, copy_ms / ms, ok ? "ok" : "WRONG");
    fflush(stdout);
  }
  template <int NT, int VT> void tiles(bool time = true) {
    const int64_t nv = NT * VT, tiles = ((int64_t)n + nv - 1) / nv, np = tiles + 1;
    auto f = [&] {
      partitions<K><<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, parts);
      tile_merge<NT, VT, K><<<(unsigned)tiles, NT>>>(a, ac, b, bc, parts, out);
    };
    float ms = time ? median_ms(f) : (f(), 0.f);
    report("two_kernel", NT, VT, (int)tiles, ms, check());
  }
  template <int NT, int VT> void stream(bool time = true) {
    auto kern = stream_merge<NT, VT, K>;
    const size_t smem = stream_smem<NT, VT, K>();
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, NT, smem));
    const int64_t T = NT * VT;
    int64_t ctas = (int64_t)per_sm * sms;
    int64_t per_cta = (((int64_t)n + ctas - 1) / ctas + T - 1) / T * T;  // whole tiles: aligned stores
    ctas = ((int64_t)n + per_cta - 1) / per_cta;
    if (ctas == 0) ctas = 1;
    auto f = [&] { kern<<<(unsigned)ctas, NT, smem>>>(a, ac, b, bc, per_cta, out); };
    float ms = time ? median_ms(f) : (f(), 0.f);
    report("stream", NT, VT, (int)ctas, ms, check());
  }
};

int main(int argc, char** argv) {
  size_t n = size_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  if (argc > 2) {  // one launch of each, for ncu
    Bench<uint32_t> t(n, n / 2, 0);
    t.stream<128, 15>(false);
    return 0;
  }
  // Correctness over odd sizes, unequal halves and duplicate-heavy keys first.
  for (size_t m : {size_t(0), size_t(1), size_t(2), size_t(1919), size_t(1920), size_t(1921), size_t(100003), size_t(5000000)})
    for (int dist = 0; dist < 3; ++dist)
      for (size_t a_n : {size_t(0), m / 3, m / 2, m}) {
        Bench<uint32_t> t(m ? m : 1, m ? a_n : 0, dist);
        t.stream<128, 15>(false); t.stream<128, 11>(false); t.stream<256, 7>(false);
        Bench<uint64_t> u(m ? m : 1, m ? a_n : 0, dist);
        u.stream<128, 7>(false);
      }
  printf("what\tkey_bytes\tn\tnt\tvt\tctas\tms\tgbytes_s\tof_copy\tok\n");
  {
    Bench<uint32_t> t(n, n / 2, 0);
    printf("copy\t4\t%zu\t-\t-\t-\t%.4f\t%.1f\t1.000\tok\n", n, t.copy_ms, 2.0 * n * 4 / t.copy_ms / 1e6);
    t.tiles<128, 23>();
    t.stream<128, 15>(); t.stream<128, 11>(); t.stream<128, 7>(); t.stream<256, 7>(); t.stream<256, 15>(); t.stream<64, 15>();
  }
  {
    Bench<uint64_t> t(n, n / 2, 0);
    printf("copy\t8\t%zu\t-\t-\t-\t%.4f\t%.1f\t1.000\tok\n", n, t.copy_ms, 2.0 * n * 8 / t.copy_ms / 1e6);
    t.tiles<256, 15>();
    t.stream<128, 7>(); t.stream<128, 15>(); t.stream<256, 7>(); t.stream<64, 15>();
  }
  return 0;
}

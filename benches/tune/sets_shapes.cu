// Launch-shape sweep for the multiset kernels, to fill the `sets` rows of mergepath-build/kernels/tuning.tsv by
// measurement: the library's kernel bodies (set_partitions_body, set_op_tile, set_count_tile)
// with the shape as template arguments. Build and run on the GPU machine, from the repository
// root, with the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/sets_shapes.cu -o /tmp/sets_shapes && /tmp/sets_shapes [log2_n]
// Inputs: the anchors' (two sorted halves of n random u32 keys). Prints TSV:
// variant op nt vt ms pct_of_copy(read n + write result) partition_ms ok. Variants: `ticket`
// (the library's kernel: tiles in ticket order, decoupled look-back), `ticket_min_blocks_N`
// (the same asking for N resident CTAs per SM) and `count` (length only).
// The variants that took tiles by blockIdx.x and placed them without look-back (BENCHMARKS.md,
// "Multiset operations") are in this file at commit bf81afe.
#include <mergepath/kernel/sets.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <random>
#include <vector>

using K = uint32_t;
using Comp = mergepath::less_t<K>;

__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
partitions(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, mergepath::set_split* s,
           uint64_t* states) {
  mergepath::set_partitions_body(a, ac, b, bc, spacing, np, s, states, Comp());
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT)
ticket(const K* a, const K* b, const mergepath::set_split* s, int64_t tiles, int emit, uint64_t* states, K* out,
       uint64_t* count) {
  mergepath::set_op_tile<NT, VT, false, K, K>(a, nullptr, b, nullptr, s, tiles, emit, states, out, nullptr, INT64_MAX,
                                              count, Comp());
}

// The library's kernel with a minimum of MinBlocks resident CTAs per SM asked of the compiler
// (fewer registers, more CTAs to hide the look-back's waits).
template <int NT, int VT, int MinBlocks>
__global__ void __launch_bounds__(NT, MinBlocks)
ticket_min_blocks(const K* a, const K* b, const mergepath::set_split* s, int64_t tiles, int emit, uint64_t* states,
                  K* out, uint64_t* count) {
  mergepath::set_op_tile<NT, VT, false, K, K>(a, nullptr, b, nullptr, s, tiles, emit, states, out, nullptr, INT64_MAX,
                                              count, Comp());
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT)
count_only(const K* a, const K* b, const mergepath::set_split* s, int emit, unsigned long long* count) {
  mergepath::set_count_tile<NT, VT>(a, b, s, emit, count, Comp());
}

struct Bench {
  size_t n;
  K *a, *b, *out;
  mergepath::set_split* splits;
  uint64_t *states, *count;
  std::vector<K> ha, hb;
  float copy_ms;
  explicit Bench(size_t n_) : n(n_) {
    std::mt19937_64 g(42);
    std::vector<K> h(n);
    for (auto& x : h) x = (K)g();
    std::sort(h.begin(), h.begin() + n / 2);
    std::sort(h.begin() + n / 2, h.end());
    ha.assign(h.begin(), h.begin() + n / 2);
    hb.assign(h.begin() + n / 2, h.end());
    CK(cudaMalloc(&a, n * sizeof(K)));
    b = a + n / 2;
    CK(cudaMalloc(&out, n * sizeof(K)));
    CK(cudaMalloc(&splits, (n / 64 + 2) * sizeof(mergepath::set_split)));
    CK(cudaMalloc(&states, (n / 64 + 2) * sizeof(uint64_t)));
    CK(cudaMalloc(&count, sizeof(uint64_t)));
    CK(cudaMemcpy(a, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    copy_ms = median_ms([&] { CK(cudaMemcpyAsync(out, a, n * sizeof(K), cudaMemcpyDeviceToDevice)); });
    printf("copy\t-\t-\t-\t%.4f\t100.0\t-\tok\n", copy_ms);
    CK(cudaMemset(count, 0, sizeof(uint64_t)));
  }
  std::vector<K> expected(int emit) const {
    std::vector<K> w;
    auto o = std::back_inserter(w);
    if (emit == 4) std::set_intersection(ha.begin(), ha.end(), hb.begin(), hb.end(), o);
    else std::set_union(ha.begin(), ha.end(), hb.begin(), hb.end(), o);
    return w;
  }
  template <int NT, int VT> void run() {
    const int64_t nv = NT * VT, ac = n / 2, bc = n - n / 2;
    const int64_t tiles = (n + nv - 1) / nv, np = tiles + 1;
    auto part = [&] { partitions<<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, splits, states); };
    const float part_ms = median_ms(part);
    for (int emit : {4, 7}) {
      const char* op = emit == 4 ? "intersection" : "union";
      const std::vector<K> want = expected(emit);
      // Copy-equivalent traffic: n keys read, the result written.
      const double pct = 100.0 * copy_ms * (n + want.size()) / (2.0 * n);
      // check: 2 the result, 1 its length.
      auto report = [&](const char* variant, float ms, int check) {
        CK(cudaGetLastError());
        uint64_t len = 0;
        CK(cudaMemcpy(&len, count, sizeof len, cudaMemcpyDeviceToHost));
        bool ok = len == want.size();
        if (check == 2 && ok) {
          std::vector<K> got(len);
          CK(cudaMemcpy(got.data(), out, len * sizeof(K), cudaMemcpyDeviceToHost));
          ok = got == want;
        }
        printf("%s\t%s\t%d\t%d\t%.4f\t%.1f\t%.4f\t%s\n", variant, op, NT, VT, ms, pct * 1.0 / ms, part_ms,
               ok ? "ok" : "WRONG");
        fflush(stdout);
      };
      report("ticket", median_ms([&] { part(); ticket<NT, VT><<<(unsigned)tiles, NT>>>(a, b, splits, tiles, emit, states, out, count); }), 2);
      if constexpr (NT == 128 && VT == 23) {
        report("ticket_min_blocks_8", median_ms([&] { part(); ticket_min_blocks<NT, VT, 8><<<(unsigned)tiles, NT>>>(a, b, splits, tiles, emit, states, out, count); }), 2);
        report("ticket_min_blocks_10", median_ms([&] { part(); ticket_min_blocks<NT, VT, 10><<<(unsigned)tiles, NT>>>(a, b, splits, tiles, emit, states, out, count); }), 2);
        report("ticket_min_blocks_12", median_ms([&] { part(); ticket_min_blocks<NT, VT, 12><<<(unsigned)tiles, NT>>>(a, b, splits, tiles, emit, states, out, count); }), 2);
      }
      report("count", median_ms([&] { part(); CK(cudaMemsetAsync(count, 0, 8)); count_only<NT, VT><<<(unsigned)tiles, NT>>>(a, b, splits, emit, (unsigned long long*)count); }), 1);
    }
  }
};

int main(int argc, char** argv) {
  const int log2 = argc > 1 ? atoi(argv[1]) : 26;
  Bench bench(size_t(1) << log2);
  printf("variant\top\tnt\tvt\tms\tpct_of_copy\tpartition_ms\tok\n");
  bench.run<128, 15>();
  bench.run<128, 23>();
  bench.run<128, 31>();
  bench.run<256, 15>();
  bench.run<256, 23>();
}

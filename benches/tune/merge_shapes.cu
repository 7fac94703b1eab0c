// Launch-shape sweep for the merge kernels, to fill mergepath-build/kernels/tuning.tsv by measurement: the
// library's kernel bodies (merge_path_partitions_body, merge_tile) with the shape and the
// partition search's probes per round as template arguments. Build and run on the GPU machine,
// from the repository root, with the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/merge_shapes.cu -o /tmp/merge_shapes && /tmp/merge_shapes [log2_n]
// Prints TSV: key_bytes nt vt ms gbytes_s pct_of_copy partition_ms ok.
#include <mergepath/kernel/merge.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

template <int PROBES, class K>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
partitions(const K* a, int64_t ac, const K* b, int64_t bc, int64_t spacing, int64_t np, int64_t* parts) {
  mergepath::merge_path_partitions_body<mergepath::tie::a_first, PROBES>(a, ac, b, bc, spacing, np, parts, mergepath::less_t<K>());
}
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT)
merge(const K* a, int64_t ac, const K* b, int64_t bc, const int64_t* parts, K* out) {
  mergepath::merge_tile<NT, VT, false, K, K>(a, nullptr, ac, b, nullptr, bc, parts, out, nullptr, mergepath::less_t<K>());
}

template <class K> struct Bench : merge_input<K> {
  using merge_input<K>::n; using merge_input<K>::a; using merge_input<K>::b; using merge_input<K>::out;
  using merge_input<K>::parts; using merge_input<K>::want; using merge_input<K>::copy_ms;
  explicit Bench(size_t n_) : merge_input<K>(n_) {
    printf("copy\t%zu\t-\t-\t%.4f\t%.1f\t100.0\t-\tok\n", sizeof(K), copy_ms, 2.0 * n * sizeof(K) / copy_ms / 1e6);
  }
  template <int NT, int VT> void run() {
    const int64_t nv = NT * VT, ac = n / 2, bc = n - n / 2;
    const int64_t tiles = (n + nv - 1) / nv, np = tiles + 1;
    auto p3 = [&] { partitions<3, K><<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, parts); };
    auto p1 = [&] { partitions<1, K><<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, parts); };
    auto p7 = [&] { partitions<7, K><<<(unsigned)((np + 127) / 128), 128>>>(a, ac, b, bc, nv, np, parts); };
    auto mrg = [&] { merge<NT, VT, K><<<(unsigned)tiles, NT>>>(a, ac, b, bc, parts, out); };
    auto check = [&](const char* what, float ms) {
      CK(cudaGetLastError());
      std::vector<K> got(n); CK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
      printf("%s\t%zu\t%d\t%d\t%.4f\t%.1f\t%.1f\t%s\n", what, sizeof(K), NT, VT, ms, 2.0 * n * sizeof(K) / ms / 1e6,
             100.0 * copy_ms / ms, got == want ? "ok" : "WRONG");
      fflush(stdout);
      CK(cudaMemset(out, 0, n * sizeof(K)));
    };
    printf("part_probes1\t%zu\t%d\t%d\t%.4f\n", sizeof(K), NT, VT, median_ms(p1));
    printf("part_probes3\t%zu\t%d\t%d\t%.4f\n", sizeof(K), NT, VT, median_ms(p3));
    printf("part_probes7\t%zu\t%d\t%d\t%.4f\n", sizeof(K), NT, VT, median_ms(p7));
    check("merge_only", median_ms(mrg));
    check("probes1+merge", median_ms([&] { p1(); mrg(); }));
    check("probes3+merge", median_ms([&] { p3(); mrg(); }));
    check("probes7+merge", median_ms([&] { p7(); mrg(); }));
  }
};

int main(int argc, char** argv) {
  size_t n = size_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  printf("what\tkey_bytes\tnt\tvt\tms\tgbytes_s\tpct_of_copy\tpartition_ms\tok\n");
  { Bench<uint32_t> t(n);
    t.run<128, 15>(); t.run<128, 23>(); t.run<128, 31>(); t.run<256, 15>(); t.run<512, 15>(); }
  { Bench<uint64_t> t(n);
    t.run<128, 15>(); t.run<256, 11>(); t.run<256, 15>(); t.run<512, 7>(); }
  return 0;
}

// The four-way passes' partitions alone (issue 38): the coarse boundaries and the tiles' exact
// splits (mergesort4_boundaries_body, mergesort4_tile_splits_body) searched by lane groups of
// 1 to 32 threads, for each pass of a sort of 2^20 to 2^26 keys (runs of the four-way tile,
// NV = 2 * 128 * VT: 5,888 u32 or 3,840 u64 keys, times 4^p; random keys, each run sorted).
// Where the searches are few their chain of dependent loads is their time and more lanes
// shorten it; where they are many their DRAM sectors are, and more lanes add to them.
// Build and run on the GPU machine, from the repository root, with the generated headers in
// .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/four_way_splits.cu -o /tmp/four_way_splits && /tmp/four_way_splits [max_log2_n]
// Each pass twice: coarse boundaries half a tile apart, then a whole tile apart (half as many
// boundaries, each tile split searching a bracket twice as wide). Prints TSV: key_bytes log2_n
// run kernel spacing lanes searches ms ok (ok: the same boundaries as one lane per boundary,
// the same tile splits as four lanes per tile with boundaries half a tile apart).
#include <mergepath/kernel/mergesort4.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

template <class K> using frames_t = mergepath::mergesort4_frames<K, K, false>;

template <class K>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
boundaries(frames_t<K> frames, int64_t spacing, int64_t count, int lanes, mergepath::split4* out) {
  mergepath::mergesort4_boundaries_body(frames, spacing, count, lanes, out, mergepath::less_t<K>());
}

template <class K>
__global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
tile_splits(frames_t<K> frames, int64_t spacing, int64_t tile, const mergepath::split4* coarse, int64_t count,
            int lanes, mergepath::split4* out) {
  mergepath::mergesort4_tile_splits_body(frames, spacing, tile, coarse, count, lanes, out, mergepath::less_t<K>());
}

// Runs of `run` sorted random keys: each run a running sum of random gaps spanning the key range.
template <class K> std::vector<K> sorted_runs(size_t n, size_t run, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<K> h(n);
  const double top = (double)(K)~(K)0;
  for (size_t begin = 0; begin < n; begin += run) {
    const size_t len = std::min(run, n - begin);
    const uint64_t gap = (uint64_t)(top / (double)(len + 1));  // len gaps sum to at most top
    uint64_t x = 0;
    for (size_t i = 0; i < len; ++i) {
      x += g() % (gap + 1);
      h[begin + i] = (K)x;
    }
  }
  return h;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Boundaries and tiles of a pass, counted as the kernels and the library count them.
static void counts(int64_t n, int64_t run, int64_t spacing, int64_t tile, int64_t& bounds, int64_t& tiles) {
  bounds = tiles = 0;
  for (int64_t begin = 0; begin < n; begin += 4 * run) {
    int64_t c[4], rest = n - begin;
    for (int r = 0; r < 4; ++r) { c[r] = rest < run ? rest : run; rest -= c[r]; }
    bounds += ceil_div(c[0] + c[1], spacing) + ceil_div(c[2] + c[3], spacing);
    tiles += ceil_div(c[0] + c[1] + c[2] + c[3], tile);
  }
}

static unsigned grid(int64_t threads) { return (unsigned)((threads + mergepath::PARTITION_THREADS - 1) / mergepath::PARTITION_THREADS); }

template <class K> void sweep(int vt, int max_log2) {
  const int64_t nv = 2 * 128 * vt;  // the four-way tile
  for (int log2n = 20; log2n <= max_log2; log2n += 2) {
    const int64_t n = int64_t(1) << log2n;
    K* keys;
    mergepath::split4 *coarse, *splits;
    CK(cudaMalloc(&keys, n * sizeof(K)));
    CK(cudaMalloc(&coarse, (4 * n / nv + 8) * sizeof(mergepath::split4)));
    CK(cudaMalloc(&splits, (2 * n / nv + 8) * sizeof(mergepath::split4)));
    for (int64_t run = nv; run < n; run *= 4) {
      std::vector<K> h = sorted_runs<K>(n, run, 7 + run);
      CK(cudaMemcpy(keys, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
      const frames_t<K> frames{keys, nullptr, n, run, nullptr, 0};
      std::vector<mergepath::split4> want_t;
      // Boundaries half a tile apart (the library's until this program), then a tile apart.
      for (int64_t spacing : {nv / 2, nv}) {
        int64_t nb, nt;
        counts(n, run, spacing, nv, nb, nt);
        std::vector<mergepath::split4> want_b(nb), got_b(nb), got_t(nt);
        for (int lanes = 1; lanes <= 32; lanes *= 2) {
          const auto launch = [&] { boundaries<K><<<grid(nb * lanes), mergepath::PARTITION_THREADS>>>(frames, spacing, nb, lanes, coarse); };
          const float ms = median_ms(launch, 20);
          CK(cudaMemcpy(got_b.data(), coarse, nb * sizeof(mergepath::split4), cudaMemcpyDeviceToHost));
          if (lanes == 1) want_b = got_b;
          const bool ok = memcmp(want_b.data(), got_b.data(), nb * sizeof(mergepath::split4)) == 0;
          printf("%zu\t%d\t%lld\tboundaries\t%lld\t%d\t%lld\t%.4f\t%d\n", sizeof(K), log2n, (long long)run, (long long)spacing, lanes, (long long)nb, ms, ok);
        }
        // The tiles' splits from the boundaries of one lane each (the last written: 32 lanes, the same).
        boundaries<K><<<grid(nb), mergepath::PARTITION_THREADS>>>(frames, spacing, nb, 1, coarse);
        for (int lanes : {4, 1, 2, 8, 16, 32}) {
          const auto launch = [&] { tile_splits<K><<<grid(nt * lanes), mergepath::PARTITION_THREADS>>>(frames, spacing, nv, coarse, nt, lanes, splits); };
          const float ms = median_ms(launch, 20);
          CK(cudaMemcpy(got_t.data(), splits, nt * sizeof(mergepath::split4), cudaMemcpyDeviceToHost));
          if (want_t.empty()) want_t = got_t;
          const bool ok = memcmp(want_t.data(), got_t.data(), nt * sizeof(mergepath::split4)) == 0;
          printf("%zu\t%d\t%lld\ttile_splits\t%lld\t%d\t%lld\t%.4f\t%d\n", sizeof(K), log2n, (long long)run, (long long)spacing, lanes, (long long)nt, ms, ok);
        }
      }
      fflush(stdout);
    }
    CK(cudaFree(keys));
    CK(cudaFree(coarse));
    CK(cudaFree(splits));
  }
}

int main(int argc, char** argv) {
  const int max_log2 = argc > 1 ? atoi(argv[1]) : 26;
  printf("key_bytes\tlog2_n\trun\tkernel\tspacing\tlanes\tsearches\tms\tok\n");
  sweep<uint32_t>(23, max_log2);
  sweep<uint64_t>(15, max_log2);
  return 0;
}

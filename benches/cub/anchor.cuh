// What the standalone anchor programs of benches/cub share: the error check, the timing
// (medians of event-timed calls after a warm-up), the TSV line in the anchors' format (op impl
// type n ms gkeys_s gbytes_s ok), and the tests' SplitMix64 (tests/common's Rng), so an anchor
// makes the same inputs as its bench.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

static float time_ms(std::function<void()> f, int reps = 10) {
  f(); CK(cudaDeviceSynchronize());
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

static void report(const char* op, const char* impl, const char* ty, size_t n, float ms, double bytes, bool ok) {
  printf("%s\t%s\t%s\t%zu\t%.4f\t%.3f\t%.1f\t%s\n", op, impl, ty, n, ms, n / ms / 1e6, bytes / ms / 1e6, ok ? "ok" : "WRONG");
  fflush(stdout);
}

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// The sizes from the command line (log2), or `defaults`; prints the device line and the header.
static std::vector<size_t> anchor_sizes(int argc, char** argv, std::vector<size_t> defaults) {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# device %s sms %d cc %d.%d cub %d\n", p.name, p.multiProcessorCount, p.major, p.minor, CUB_VERSION);
  printf("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s\tok\n");
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(size_t(1) << atoi(argv[i]));
  return sizes.empty() ? defaults : sizes;
}

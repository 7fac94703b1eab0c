// Host memcpy bandwidth with 1..16 threads, pageable -> pageable and pageable <-> pinned
// (cudaMallocHost), in parts of 4 MiB or 1/threads of the buffer: what the host-slice staging
// copies can reach on the GPU machine. Build and run there, from the repository root:
//   nvcc -O3 -std=c++17 benches/tune/host_memcpy.cu -o /tmp/host_memcpy && /tmp/host_memcpy
// Prints TSV: case threads GB/s (bytes copied once per second).
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

static double copy_gbs(char* dst, const char* src, size_t bytes, int threads) {
  auto run = [&] {
    std::vector<std::thread> t;
    size_t part = (bytes + threads - 1) / threads;
    for (int i = 0; i < threads; ++i) {
      size_t off = i * part, len = off < bytes ? std::min(part, bytes - off) : 0;
      t.emplace_back([=] { memcpy(dst + off, src + off, len); });
    }
    for (auto& x : t) x.join();
  };
  run();
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

int main() {
  size_t bytes = 256u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  char* pin;
  cudaMallocHost(&pin, bytes);
  memset(pin, 3, bytes);
  for (int threads : {1, 2, 4, 8, 16}) {
    printf("pageable_to_pageable\t%d\t%.1f\n", threads, copy_gbs(b.data(), a.data(), bytes, threads));
    printf("pageable_to_pinned\t%d\t%.1f\n", threads, copy_gbs(pin, a.data(), bytes, threads));
    printf("pinned_to_pageable\t%d\t%.1f\n", threads, copy_gbs(b.data(), pin, bytes, threads));
  }
  cudaFreeHost(pin);
}

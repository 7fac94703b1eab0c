// Shared by the tuning sweeps: error checks and event timing.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

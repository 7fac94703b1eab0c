// Entry layer: the comparator on every ordered pair of a few keys, so the CUDA functor can be
// checked against its Rust twin (mergepath::testing::check_comparator). Included by
// ../instantiate.cuh.
#pragma once
#include <stdint.h>

// out[i * count + j] = comp(keys[i], keys[j]) for i, j in [0, count).
extern "C" __global__ void mergepath_compare_all(const mergepath::compare_all_params<mergepath_key_t> p) {
  const int64_t pairs = p.count * p.count;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < pairs; t += (int64_t)gridDim.x * blockDim.x)
    p.out[t] = mergepath_comp_t()(p.keys[t / p.count], p.keys[t % p.count]) ? 1 : 0;
}

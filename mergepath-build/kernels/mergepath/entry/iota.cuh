// Entry layer: the `extern "C"` iota kernels. Included by ../instantiate.cuh.
#pragma once
#include <stdint.h>

// out[i] = first + i * step for i in [0, count): the values of an index sort (first: where a
// run of the keys starts), or records' device addresses (step: a record's bytes; unsigned
// arithmetic, as an address may have its top bit set).
#define MERGEPATH_IOTA(BYTES, WORD)                                                              \
  extern "C" __global__ void mergepath_iota_##BYTES(const mergepath::iota_params<WORD> p) {                  \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.count;                  \
         i += (int64_t)gridDim.x * blockDim.x)                                                   \
      p.out[i] = (WORD)((uint64_t)p.first + (uint64_t)i * (uint64_t)p.step);                                                                          \
  }
MERGEPATH_IOTA(4, uint32_t)
MERGEPATH_IOTA(8, uint64_t)
#undef MERGEPATH_IOTA

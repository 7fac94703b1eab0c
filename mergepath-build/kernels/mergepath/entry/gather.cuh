// Entry layer: the `extern "C"` gather kernels, which move values of any size by position
// after an algorithm has moved their positions, and the scatter of u64 words that inverts a
// gather. Included by ../instantiate.cuh.
#pragma once
#include <stdint.h>
#include "words.cuh"

namespace mergepath {
// Item i of out = the item at positions[i] of a (positions below split) or of b (at
// positions[i] - split), each item `words` words of W: thread t moves word t % words of item
// t / words, so a warp reads and writes whole items' consecutive words. 32-bit index arithmetic
// where the words in all fit it (a 64-bit division costs several times more).
template <typename W, typename P, typename I>
__device__ __forceinline__ void gather_words(const gather_params<P>& p, I total) {
  const W* a = reinterpret_cast<const W*>(p.a);
  const W* b = reinterpret_cast<const W*>(p.b);
  W* out = reinterpret_cast<W*>(p.out);
  const I words = (I)p.words;
  for (I t = (I)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (I)gridDim.x * blockDim.x) {
    const I i = t / words;
    const int64_t pos = (int64_t)p.positions[i];
    const W* src = pos < p.split ? a + pos * p.words : b + (pos - p.split) * p.words;
    out[t] = src[t - i * words];
  }
}
}  // namespace mergepath

#define MERGEPATH_GATHER(WBYTES, W, PBYTES, P)                                                  \
  extern "C" __global__ void mergepath_gather_##WBYTES##_##PBYTES(const mergepath::gather_params<P> p) { \
    const int64_t total = p.count * p.words;                                                    \
    if (total <= (int64_t)UINT32_MAX - (int64_t)gridDim.x * blockDim.x)                         \
      mergepath::gather_words<W, P, uint32_t>(p, (uint32_t)total);                              \
    else                                                                                        \
      mergepath::gather_words<W, P, int64_t>(p, total);                                         \
  }
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_GATHER)
#undef MERGEPATH_GATHER

// out[positions[i]] = values[i]: the positions are a permutation of 0..count.
#define MERGEPATH_SCATTER(PBYTES, P)                                                            \
  extern "C" __global__ void mergepath_scatter_##PBYTES(const mergepath::scatter_params<P> p) { \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += (int64_t)gridDim.x * blockDim.x) \
      p.out[p.positions[i]] = p.values[i];                                                      \
  }
MERGEPATH_SCATTER(4, uint32_t)
MERGEPATH_SCATTER(8, uint64_t)
#undef MERGEPATH_SCATTER

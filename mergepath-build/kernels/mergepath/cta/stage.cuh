// CTA layer: a tile's items staged from global into shared memory by one bulk copy (Hopper's
// cp.async.bulk, completing on an mbarrier), so no register holds them in flight and a CTA
// that then waits (a look-back) keeps only shared memory. Thread 0 starts the copy
// (stage_start), all threads finish it (stage_finish); where the copy engine cannot take the
// items (before sm_90, a source not 16-byte aligned) the threads load them all.
#pragma once
#include <stdint.h>

namespace mergepath {

// The items of T whose bytes are a whole number of 16-byte words (a bulk copy's unit).
template <class T>
__device__ __forceinline__ constexpr int stage_unit() {
  return sizeof(T) % 16 == 0 ? 1 : sizeof(T) % 8 == 0 ? 2 : sizeof(T) % 4 == 0 ? 4 : sizeof(T) % 2 == 0 ? 8 : 16;
}

// How many of `count` items from src to dst (16-byte aligned) the bulk copy takes: a whole
// number of units, none where the copy engine cannot.
template <class T>
__device__ __forceinline__ int stage_bulk_items(const T* src, int count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if ((reinterpret_cast<uintptr_t>(src) & 15) != 0) return 0;
  return count / stage_unit<T>() * stage_unit<T>();
#else
  (void)src;
  (void)count;
  return 0;
#endif
}

// Thread 0 only: readies the mbarrier `bar` (in shared memory) and starts the copy of
// stage_bulk_items(src, count) items of src[0 .. count) to dst (16-byte aligned shared memory).
template <class T>
__device__ __forceinline__ void stage_start(T* dst, const T* src, int count, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned bar_at = (unsigned)__cvta_generic_to_shared(bar);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_at) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned bytes = (unsigned)(stage_bulk_items(src, count) * sizeof(T));
  // One arrival, expecting the copy's bytes: the phase completes when they have landed.
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_at), "r"(bytes) : "memory");
  if (bytes)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     (unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(bytes), "r"(bar_at)
                 : "memory");
#else
  (void)dst;
  (void)src;
  (void)count;
  (void)bar;
#endif
}

// All NT threads, after a barrier that follows stage_start: load the items the copy does not
// take, wait for the copy, and a barrier: dst[0 .. count) is in place.
template <int NT, class T>
__device__ __forceinline__ void stage_finish(T* dst, const T* src, int count, uint64_t* bar) {
  for (int i = stage_bulk_items(src, count) + (int)threadIdx.x; i < count; i += NT) dst[i] = src[i];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned bar_at = (unsigned)__cvta_generic_to_shared(bar);
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar_at)
                 : "memory");
#else
  (void)bar;
#endif
  __syncthreads();
}

}  // namespace mergepath

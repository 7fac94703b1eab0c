// CTA layer: moving a tile between global memory, shared memory and registers, and merging a
// tile that sits in shared memory. Each function is called by all NT threads of the CTA.
// Indices inside a tile are `int`: a tile holds at most NT * VT items.
#pragma once
#include "serial.cuh"

namespace mergepath {

// The slice of A and B that tile `tile` merges, from the coarse partitions (`partitions[i]` is
// the A index where cross-diagonal i * nv meets the merge path).
struct merge_range {
  int64_t a_begin, a_end, b_begin, b_end;
  __device__ __forceinline__ int a_count() const { return (int)(a_end - a_begin); }
  __device__ __forceinline__ int b_count() const { return (int)(b_end - b_begin); }
  __device__ __forceinline__ int count() const { return a_count() + b_count(); }
};

__device__ __forceinline__ merge_range compute_merge_range(int64_t a_count, int64_t b_count,
                                                           int64_t tile, int nv,
                                                           const int64_t* partitions) {
  int64_t total = a_count + b_count;
  int64_t diag0 = tile * nv;
  int64_t diag1 = diag0 + nv < total ? diag0 + nv : total;
  merge_range r;
  r.a_begin = partitions[tile];
  r.a_end = partitions[tile + 1];
  r.b_begin = diag0 - r.a_begin;
  r.b_end = diag1 - r.a_end;
  return r;
}

// Loads A[0..a_count) followed by B[0..count - a_count) into shared[0..count), coalesced.
// All VT loads are issued before the first shared store so they are in flight together.
template <int NT, int VT, class T>
__device__ __forceinline__ void cta_load_two_ranges(const T* a, int a_count, const T* b, int count,
                                                    T* shared) {
  T x[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) x[i] = idx < a_count ? a[idx] : b[idx - a_count];
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) shared[idx] = x[i];
  }
}

// Stores VT values per thread, held in thread order (thread t holds items VT*t .. VT*t+VT-1),
// to out[0..count) with coalesced stores, transposing through `shared` (NT * VT slots).
// Starts with a barrier, so `shared` may still be in use by other threads when called.
template <int NT, int VT, class T>
__device__ __forceinline__ void cta_store_thread_order(const T (&values)[VT], T* shared, T* out,
                                                       int count) {
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) shared[VT * (int)threadIdx.x + i] = values[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) out[idx] = shared[idx];
  }
}

// Merges a tile already in shared memory (A in keys[0..a_count), B in keys[a_count..count)):
// one merge-path search per thread at diagonal VT * tid, then the serial merge of VT items.
// The caller must have synchronized after loading `keys`.
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void cta_merge_from_shared(const K* keys, int a_count, int count,
                                                      K (&results)[VT], int (&indices)[VT],
                                                      Comp comp) {
  int diag = VT * (int)threadIdx.x;
  if (diag > count) diag = count;
  int b_count = count - a_count;
  int mp = merge_path(keys, a_count, keys + a_count, b_count, diag, comp);
  serial_merge<VT>(keys, mp, a_count, a_count + diag - mp, count, results, indices, comp);
}

// Writes out[j] = (src[j] < a_count ? a[src[j]] : b[src[j] - a_count]) for j in [0, count):
// the values that follow the keys, gathered through the merge's source indices. `indices` is
// in thread order and goes through `shared_indices` (NT * VT ints) so the stores are coalesced.
template <int NT, int VT, class V>
__device__ __forceinline__ void cta_gather_values(const int (&indices)[VT], int* shared_indices,
                                                  const V* a, int a_count, const V* b, V* out,
                                                  int count) {
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) shared_indices[VT * (int)threadIdx.x + i] = indices[i];
  __syncthreads();
  V x[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) {
      int src = shared_indices[idx];
      x[i] = src < a_count ? a[src] : b[src - a_count];
    }
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) out[idx] = x[i];
  }
}

}  // namespace mergepath

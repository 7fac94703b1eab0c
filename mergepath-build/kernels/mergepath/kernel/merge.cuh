// Kernel layer: the bodies of the global merge kernels, as __device__ functions so a user's
// own __global__ wrapper (or a fused kernel) can call them. `instantiate.cuh` stamps the
// library's entry points from these.
#pragma once
#include "../cta/guard.cuh"
#include "../cta/tile.cuh"
#include <mergepath/contract.cuh>  // PARTITION_THREADS

namespace mergepath {

// Probes per round of the partitions' global-memory search (see `merge_path`): 0, the aligned
// binary search. The searches are bound by the DRAM sectors they fetch, not latency: 3 and 7
// probes and a 32-lane warp search were slower than binary search (benches/tune/merge_shapes.cu,
// partition_latency.cu), and the aligned search, whose top levels share A's sectors through L2,
// faster (benches/tune/partition_aligned.cu, BENCHMARKS.md).
constexpr int PARTITION_PROBES = 0;

// A partition kernel and the tiles that read its partitions run back to back; the host launches
// the tiles as a programmatic dependent of the partitions (Gpu::launch_dependent), so their
// CTAs are scheduled while the partitions finish instead of after a launch gap.
// let_dependents_start (in the partition kernel) lets the dependent grid be scheduled at once;
// wait_for_previous_kernel (in the tiles, before any read of what the partitions write)
// returns when the partition kernel has finished and its writes are visible. Both are no-ops in
// a kernel launched the ordinary way, and before sm_90.
__device__ __forceinline__ void let_dependents_start() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

__device__ __forceinline__ void wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// partitions[p] = A index where the merge path crosses diagonal min(p * spacing, a + b), for
// p in [0, num_partitions). A and B are pointers or anything indexable (counting_iterator).
// `Tie` as in merge_path, the same as the tiles' merges; `Probes` is the search's probes per
// round (benches/tune sweeps it).
template <tie Tie = tie::a_first, int Probes = PARTITION_PROBES, class KeysA, class KeysB, class Comp>
__device__ __forceinline__ void merge_path_partitions_body(KeysA a, int64_t a_count, KeysB b,
                                                           int64_t b_count, int64_t spacing,
                                                           int64_t num_partitions,
                                                           int64_t* partitions, Comp comp) {
  let_dependents_start();
  int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_partitions) return;
  int64_t total = a_count + b_count;
  int64_t diag = p * spacing < total ? p * spacing : total;
  partitions[p] = merge_path<Probes, Tie>(a, a_count, b, b_count, diag, comp);
}

template <int NV, class K> union merge_shared {
  K keys[NV];
  int indices[NV];
};

// Merges one tile: a_keys[r.a_begin, r.a_end) with b_keys[r.b_begin, r.b_end) into
// out_keys[0, r.count()). With `HasValues`, values follow their keys (V is then moved as an
// opaque word). Called by all NT threads; r.count() <= NT * VT. `out_keys` is a pointer or a
// decoding_writer. With `share_starts` (NT ints of shared memory, or null), returns whether
// this thread's share meets the next thread's (share_meets_next: always on sorted inputs);
// without, true.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysOut>
__device__ __forceinline__ bool merge_tile_range(const K* a_keys, const V* a_vals, const K* b_keys,
                                                 const V* b_vals, const merge_range& r, KeysOut out_keys,
                                                 V* out_vals, Comp comp, int* share_starts = nullptr) {
  constexpr int NV = NT * VT;
  __shared__ merge_shared<NV, K> shared;
  const int a_n = r.a_count(), count = r.count();
  K results[VT];
  int indices[VT];
  const merge_split split = cta_load_merge<NT, VT>(a_keys, b_keys, r, shared.keys, results, indices, comp);
  if (share_starts) share_starts[threadIdx.x] = split.a;
  // Its first barrier also makes the share starts visible.
  cta_store_thread_order<NT, VT>(results, shared.keys, out_keys, count);
  const bool meets = !share_starts || share_meets_next<VT>(share_starts, split.a_end, count);
  if constexpr (HasValues) {
    cta_gather_values<NT, VT>(indices, shared.indices,
                              two_ranges(a_vals + r.a_begin, a_n, b_vals + r.b_begin, count), out_vals,
                              count);
  }
  return meets;
}

// Whether tile `tile`'s two partitions are exact points of a merge path, as they are on sorted
// inputs: each inside its diagonal's bounds, and the tile's shares of A and of B not negative.
// Then the tile's range is theirs, unclamped, and meets its neighbours' ranges.
__device__ __forceinline__ bool merge_partitions_exact(int64_t a_count, int64_t b_count, int64_t tile, int nv,
                                                       const int64_t* partitions) {
  const int64_t total = a_count + b_count;
  const int64_t diag0 = tile * nv, diag1 = diag0 + nv < total ? diag0 + nv : total;
  const int64_t p0 = partitions[tile], p1 = partitions[tile + 1];
  const auto on_diagonal = [&](int64_t p, int64_t diag) {
    return p >= (diag - b_count > 0 ? diag - b_count : 0) && p <= (diag < a_count ? diag : a_count);
  };
  return on_diagonal(p0, diag0) && on_diagonal(p1, diag1) && p1 >= p0 && diag1 - p1 >= diag0 - p0;
}

// Merges tile blockIdx.x of the output (NT * VT items) given the coarse partitions (which may
// still be being written by the kernel before: see wait_for_previous_kernel). With a `guard`
// (cta/guard.cuh), a thread whose share does not meet the next one's, or a tile whose
// partitions are not exact (unsorted inputs), reports it for the fallback kernel after the
// tiles (kernel/unsorted.cuh).
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void merge_tile(const K* a_keys, const V* a_vals, int64_t a_count,
                                           const K* b_keys, const V* b_vals, int64_t b_count,
                                           const int64_t* partitions, K* out_keys, V* out_vals,
                                           Comp comp, merge_guard* guard = nullptr) {
  constexpr int NV = NT * VT;
  __shared__ int share_starts[NT];
  wait_for_previous_kernel();
  const int64_t tile = blockIdx.x;
  const merge_range r = compute_merge_range(a_count, b_count, tile, NV, partitions);
  const bool meets = merge_tile_range<NT, VT, HasValues>(a_keys, a_vals, b_keys, b_vals, r, out_keys + tile * NV,
                                                         HasValues ? out_vals + tile * NV : out_vals, comp,
                                                         guard ? share_starts : nullptr);
  if (!guard) return;
  if (!meets || (threadIdx.x == 0 && !merge_partitions_exact(a_count, b_count, tile, NV, partitions)))
    report_inexact(guard);
}

}  // namespace mergepath

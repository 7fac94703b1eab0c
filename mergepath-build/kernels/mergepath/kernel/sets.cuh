// Kernel layer: multiset operations (intersection, union, difference, symmetric difference) of
// two sorted inputs, on Balanced Path partitions (see balanced_path): coarse splits every
// NT * VT items of the balanced merge (a tile takes NT * VT items, one more where its end would
// cut a pair), then per-thread splits in shared memory and serial_set_op. Each tile's outputs
// are compacted by a CTA scan and placed by a single-pass scan of tile counts across the grid,
// so the inputs are read once and the result written once.
#pragma once
#include "merge.cuh"
#include "../cta/scan.cuh"

namespace mergepath {

// set_split (where a balanced-path split falls) is the contract's (contract.cuh).

// The end split of a tile starting at s0: s1 itself on sorted inputs; on unsorted ones (the
// balanced-path searches of two diagonals can cross) clamped so the tile holds 0 to NV + 1
// items within both inputs: unspecified results, never an out-of-bounds access.
template <int NV>
__device__ __forceinline__ set_split set_tile_end(set_split s0, set_split s1) {
  const int64_t a = s1.a < s0.a ? s0.a : (s1.a > s0.a + NV + 1 ? s0.a + NV + 1 : s1.a);
  const int64_t room = NV + 1 - (a - s0.a);
  const int64_t b = s1.b < s0.b ? s0.b : (s1.b > s0.b + room ? s0.b + room : s1.b);
  return {a, b};
}

// splits[p] = the balanced-path split at diagonal min(p * spacing, a_count + b_count), and
// tile_states[p] = 0, for p in [0, num_splits): the tiles' scan states and, in the last slot,
// the ticket counter of the set kernels.
template <class K, class Comp>
__device__ __forceinline__ void set_partitions_body(const K* a, int64_t a_count, const K* b, int64_t b_count,
                                                    int64_t spacing, int64_t num_splits, set_split* splits,
                                                    uint64_t* tile_states, Comp comp) {
  let_dependents_start();
  const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_splits) return;
  const int64_t total = a_count + b_count;
  const int64_t diag = p * spacing < total ? p * spacing : total;
  set_split s;
  balanced_path<PARTITION_PROBES>(a, a_count, b, b_count, diag, s.a, s.b, comp);
  splits[p] = s;
  tile_states[p] = 0;
}

template <int NT, int VT, class K> struct set_shared {
  union {
    K keys[NT * VT + 2];  // a tile holds up to NT * VT + 1 items; serial_set_op reads one past
    int indices[NT * VT];  // source positions of the outputs (at most NT * VT)
  };
  int a_starts[NT + 1], b_starts[NT + 1];
  scan_shared<NT> scan;
  int64_t tile;
};

// One tile of a multiset operation: which outputs it has, in thread order. The tile's items
// are loaded into shared.keys (A's slice then B's), each thread finds its balanced split in
// shared memory and runs serial_set_op to the next thread's split. `mask` bit i says whether
// results[i] (tile-local source position indices[i]) is output; shared.keys stays in use.
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ unsigned cta_set_op(const K* a_keys, const K* b_keys, const set_split& s0,
                                               const set_split& s1, int emit, set_shared<NT, VT, K>& shared,
                                               K (&results)[VT], int (&indices)[VT], Comp comp) {
  constexpr int NV = NT * VT;
  const int a_n = (int)(s1.a - s0.a), b_n = (int)(s1.b - s0.b), count = a_n + b_n;
  const tile_ranges<2, K> src = two_ranges(a_keys + s0.a, a_n, b_keys + s0.b, count);
  cta_load_ranges<NT, VT>(src, count, shared.keys);
  if (threadIdx.x == 0 && count > NV) shared.keys[NV] = src[NV];
  __syncthreads();
  const int tid = (int)threadIdx.x;
  const int diag = VT * tid < count ? VT * tid : count;
  int a0, b0;
  balanced_path(shared.keys, a_n, shared.keys + a_n, b_n, diag, a0, b0, comp);
  shared.a_starts[tid] = a0;
  shared.b_starts[tid] = b0;
  if (tid == 0) {
    shared.a_starts[NT] = a_n;
    shared.b_starts[NT] = b_n;
  }
  __syncthreads();
  return serial_set_op<VT>(shared.keys, a0, shared.a_starts[tid + 1], a_n + b0, a_n + shared.b_starts[tid + 1],
                           emit, results, indices, comp);
}

// The set kernels' tile: takes the next tile in launch order, computes its outputs, places
// them after those of all earlier tiles (cta_tile_offset) and writes them to out_keys (and
// their values from A's or B's values to out_vals), dropping those at or past `capacity`. The
// last tile writes the result's length to *out_count. splits: num_tiles + 1 from
// set_partitions_body with spacing NT * VT; tile_states: its num_tiles + 1 zeroed slots.
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void set_op_tile(const K* a_keys, const V* a_vals, const K* b_keys, const V* b_vals,
                                            const set_split* splits, int64_t num_tiles, int emit,
                                            uint64_t* tile_states, K* out_keys, V* out_vals, int64_t capacity,
                                            uint64_t* out_count, Comp comp) {
  __shared__ set_shared<NT, VT, K> shared;
  wait_for_previous_kernel();  // the splits and zeroed tile states (see merge.cuh)
  if (threadIdx.x == 0) shared.tile = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
  __syncthreads();
  const int64_t tile = shared.tile;
  const set_split s0 = splits[tile], s1 = set_tile_end<NT * VT>(s0, splits[tile + 1]);
  K results[VT];
  int indices[VT];
  const unsigned mask = cta_set_op<NT, VT>(a_keys, b_keys, s0, s1, emit, shared, results, indices, comp);
  int tile_count;
  const int first = cta_exclusive_scan<NT>(__popc(mask), tile_count, shared.scan);
  const int64_t offset = cta_tile_offset<NT>(tile, tile_count, tile_states, shared.scan);
  if (tile == num_tiles - 1 && threadIdx.x == 0) *out_count = (uint64_t)(offset + tile_count);
  const int64_t room = capacity - offset;
  const int stored = room <= 0 ? 0 : room < tile_count ? (int)room : tile_count;
  // The barriers in the scans separate every thread's reads of shared.keys from these writes.
  int k = first;
#pragma unroll
  for (int i = 0; i < VT; ++i)
    if (mask >> i & 1) shared.keys[k++] = results[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + (int)threadIdx.x;
    if (idx < stored) out_keys[offset + idx] = shared.keys[idx];
  }
  if constexpr (HasValues) {
    __syncthreads();
    k = first;
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (mask >> i & 1) shared.indices[k++] = indices[i];
    __syncthreads();
    const int a_n = (int)(s1.a - s0.a), count = a_n + (int)(s1.b - s0.b);
    cta_gather_shared<NT, VT>(shared.indices, two_ranges(a_vals + s0.a, a_n, b_vals + s0.b, count),
                              out_vals + offset, stored);
  }
}

// The length of a multiset operation's result without writing it: each tile adds its output
// count to *out_count (zeroed before the launch). Tile blockIdx.x of splits as for set_op_tile.
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void set_count_tile(const K* a_keys, const K* b_keys, const set_split* splits,
                                               int emit, unsigned long long* out_count, Comp comp) {
  __shared__ set_shared<NT, VT, K> shared;
  wait_for_previous_kernel();  // the splits (see merge.cuh)
  const int64_t tile = blockIdx.x;
  K results[VT];
  int indices[VT];
  const unsigned mask =
      cta_set_op<NT, VT>(a_keys, b_keys, splits[tile], set_tile_end<NT * VT>(splits[tile], splits[tile + 1]), emit, shared, results, indices, comp);
  int tile_count;
  cta_exclusive_scan<NT>(__popc(mask), tile_count, shared.scan);
  if (threadIdx.x == 0 && tile_count > 0) atomicAdd(out_count, (unsigned long long)tile_count);
}

}  // namespace mergepath

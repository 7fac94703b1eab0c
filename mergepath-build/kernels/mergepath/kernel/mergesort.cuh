// Kernel layer: the bodies of the mergesort kernels. A sort is one blocksort pass (every tile
// sorted on its own) and then merge passes over sorted runs of `run` items. A two-way pass
// merges pairs of runs ("frames" of 2 * run items) with one coarse merge-path partition per
// output tile, searched inside the tile's frame. Four-way passes: mergesort4.cuh.
#pragma once
#include "merge.cuh"
#include "../cta/lane_search.cuh"

namespace mergepath {

// The pair of runs that output position `diag` of a merge pass falls in: A is
// keys[begin, begin + a_count), B follows it with b_count items.
struct mergesort_frame {
  int64_t begin, a_count, b_count;
};

__device__ __forceinline__ mergesort_frame find_mergesort_frame(int64_t count, int64_t run, int64_t diag) {
  mergesort_frame f;
  f.begin = diag / (2 * run) * (2 * run);
  f.a_count = count - f.begin < run ? count - f.begin : run;
  const int64_t rest = count - f.begin - f.a_count;
  f.b_count = rest < run ? rest : run;
  return f;
}

// Where the merge path of diagonal `diag`'s frame crosses it, as an A index local to the frame.
template <class K, class Comp>
__device__ __forceinline__ int64_t mergesort_partition(const K* keys, int64_t count, int64_t run,
                                                       int64_t diag, Comp comp) {
  const mergesort_frame f = find_mergesort_frame(count, run, diag);
  const K* a = keys + f.begin;
  return merge_path<PARTITION_PROBES>(a, f.a_count, a + f.a_count, f.b_count, diag - f.begin, comp);
}

// partitions[p] = where the merge path of p's frame crosses p's diagonal, min(p * spacing,
// count), as an A index local to the frame. `run` must be a multiple of `spacing`, so no tile
// straddles two frames.
template <class K, class Comp>
__device__ __forceinline__ void mergesort_partitions_body(const K* keys, int64_t count, int64_t spacing,
                                                          int64_t run, int64_t num_partitions,
                                                          int64_t* partitions, Comp comp) {
  const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= num_partitions) return;
  const int64_t diag = p * spacing < count ? p * spacing : count;
  partitions[p] = mergesort_partition(keys, count, run, diag, comp);
}

// The slices of the input that output tile `tile` of a merge pass merges (global indices), from
// the tile's start and end partitions. A tile ending at its frame's end takes the frame's whole
// A run: the partition at that diagonal belongs to the next frame.
__device__ __forceinline__ merge_range mergesort_range(int64_t count, int64_t run, int64_t tile, int nv,
                                                       int64_t part0, int64_t part1) {
  const int64_t diag0 = tile * nv;
  const int64_t diag1 = diag0 + nv < count ? diag0 + nv : count;
  const mergesort_frame f = find_mergesort_frame(count, run, diag0);
  const int64_t end_local = diag1 - f.begin;
  const int64_t a1 = end_local == f.a_count + f.b_count ? f.a_count : part1;
  return merge_range_between(f.begin, f.a_count, f.begin + f.a_count, f.b_count, diag0 - f.begin, end_local, part0, a1);
}

// Sorts the n <= NT * VT keys keys_in[0..n) (and their values) into keys_out, which may be
// keys_in itself, through cta_blocksort: mergesort's first pass on one tile. Keys are read
// and written through pointers or through an encoding_reader / decoding_writer; values are
// read through a pointer or a reader (the multiway merge's tile of slices).
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysIn, class ValuesIn, class KeysOut>
__device__ __forceinline__ void cta_sort_tile(KeysIn keys_in, ValuesIn values_in, int n, KeysOut keys_out, V* values_out,
                                              K* shared_keys, int* shared_positions, Comp comp) {
  K keys[VT];
  int positions[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) positions[i] = VT * (int)threadIdx.x + i;
  cta_load_thread_order<NT, VT>(keys_in, n, shared_keys, keys);
  cta_blocksort<NT, VT, HasValues>(keys, positions, n, shared_keys, shared_positions, comp);
  cta_store_thread_order<NT, VT>(keys, shared_keys, keys_out, n);
  if constexpr (HasValues) {
    cta_gather_values<NT, VT, V, true>(positions, shared_positions, tile_ranges<1, V, ValuesIn>{{values_in}, {0, n}},
                                        values_out, n);
  }
}

// Sorts tile blockIdx.x of keys_in[0..count) (NT * VT items) into the same place of keys_out,
// which may be keys_in itself, staging it in `shared_keys` (and `shared_positions`), NT * VT
// slots each. With HasValues, values follow their keys: they are gathered once, through the
// sorted keys' source positions (values_out may be values_in too). Keys are read and written
// through pointers or an encoding_reader / decoding_writer.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysIn, class KeysOut>
__device__ __forceinline__ void blocksort_tile_in(KeysIn keys_in, const V* values_in, int64_t count,
                                                  KeysOut keys_out, V* values_out, K* shared_keys,
                                                  int* shared_positions, Comp comp) {
  constexpr int NV = NT * VT;
  const int64_t first = (int64_t)blockIdx.x * NV;
  const int n = count - first < NV ? (int)(count - first) : NV;
  cta_sort_tile<NT, VT, HasValues>(keys_in + first, HasValues ? values_in + first : values_in, n, keys_out + first,
                                   HasValues ? values_out + first : values_out, shared_keys, shared_positions, comp);
}

// blocksort_tile_in with the tile in static shared memory.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysIn, class KeysOut>
__device__ __forceinline__ void blocksort_tile(KeysIn keys_in, const V* values_in, int64_t count,
                                               KeysOut keys_out, V* values_out, Comp comp) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ int shared_positions[HasValues ? NV : 1];
  blocksort_tile_in<NT, VT, HasValues>(keys_in, values_in, count, keys_out, values_out, shared_keys,
                                       shared_positions, comp);
}

// One merge pass: output tile blockIdx.x of the pass that merges runs of `run` items. With
// `partitions` null, the CTA searches its own two partitions first, a warp each (one launch per
// pass instead of two: faster while the passes are small, see BENCHMARKS.md; a warp's 32
// probes a round make the search's chain of dependent loads, which the CTA waits on, a quarter
// as long as one thread's). Keys are written through a pointer or a decoding_writer.
template <int NT, int VT, bool HasValues, class K, class V, class Comp, class KeysOut>
__device__ __forceinline__ void mergesort_pass_tile(const K* keys_in, const V* values_in, int64_t count,
                                                    int64_t run, const int64_t* partitions, KeysOut keys_out,
                                                    V* values_out, Comp comp) {
  constexpr int NV = NT * VT;
  const int64_t tile = blockIdx.x;
  int64_t part0, part1;
  if (partitions) {
    part0 = partitions[tile];
    part1 = partitions[tile + 1];
  } else {
    static_assert(NT >= 64, "two warps search the tile's partitions");
    __shared__ int64_t searched[2];
    const int warp = (int)threadIdx.x / 32;
    if (warp < 2) {
      const int64_t end = (tile + warp) * NV;
      const int64_t diag = end < count ? end : count;
      const mergesort_frame f = find_mergesort_frame(count, run, diag);
      const K* a = keys_in + f.begin;
      const lane_group lanes(32);
      const int64_t at = group_merge_path(lanes, a, f.a_count, a + f.a_count, f.b_count, diag - f.begin, comp);
      if (lanes.lane == 0) searched[warp] = at;
    }
    __syncthreads();
    part0 = searched[0];
    part1 = searched[1];
  }
  const merge_range r = mergesort_range(count, run, tile, NV, part0, part1);
  merge_tile_range<NT, VT, HasValues>(keys_in, values_in, keys_in, values_in, r, keys_out + tile * NV,
                                      HasValues ? values_out + tile * NV : values_out, comp);
}

}  // namespace mergepath

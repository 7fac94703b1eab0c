// Kernel layer: vectorized sorted search. The sorted needles and the sorted haystack are merged
// virtually, tile by tile (merge-path partitions, the tile in shared memory, one serial merge per
// thread), and a needle's bound is the number of haystack items merged before it: its merged
// position minus its own index. O(needles + haystack) work, no search per needle. Lower bound:
// the needles are A, so a needle goes before the haystack items equal to it (ties go to A);
// upper bound: the haystack is A.
#pragma once
#include "merge.cuh"

namespace mergepath {

// What sorted_search_tile writes for needle j, given its bound b: b itself; with the needles'
// lower bounds `lower` from an earlier pass and b the upper bound, the count of haystack items
// equal to the needle (b - lower[j]); or whether there is one (b != lower[j]).
enum class search_output { bound, equal_count, contains };

// out[j] = what `Output` says for needles[j], for the needles of output tile blockIdx.x of the
// virtual merge (partitions as merge_path_partitions_body over A and B as above). `lower` is
// read only for equal_count and contains.
template <int NT, int VT, bool Upper, search_output Output, class K, class I, class O, class Comp>
__device__ __forceinline__ void sorted_search_tile(const K* needles, int64_t needle_count, const K* haystack,
                                                   int64_t haystack_count, const int64_t* partitions,
                                                   const I* lower, O* out, Comp comp) {
  constexpr int NV = NT * VT;
  const K* a = Upper ? haystack : needles;
  const K* b = Upper ? needles : haystack;
  const int64_t a_count = Upper ? haystack_count : needle_count;
  const int64_t b_count = Upper ? needle_count : haystack_count;
  const merge_range r = compute_merge_range(a_count, b_count, blockIdx.x, NV, partitions);
  __shared__ merge_shared<NV, K> shared;
  const int a_n = r.a_count(), count = r.count();
  K results[VT];
  int indices[VT];
  cta_load_merge<NT, VT>(a, b, r, shared.keys, results, indices, comp);
  __syncthreads();  // every thread is done with the keys: shared.indices is free
  // Needle k of the tile, merged at tile position p, has p - k haystack items of the tile
  // before it.
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int p = VT * (int)threadIdx.x + i;
    const int s = indices[i];
    if (p < count && (Upper ? s >= a_n : s < a_n)) {
      const int k = Upper ? s - a_n : s;
      shared.indices[k] = p - k;
    }
  }
  __syncthreads();
  const int needles_in_tile = Upper ? count - a_n : a_n;
  const int64_t needle_begin = Upper ? r.b_begin : r.a_begin;
  const int64_t haystack_begin = Upper ? r.a_begin : r.b_begin;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int k = NT * i + (int)threadIdx.x;
    if (k < needles_in_tile) {
      // Clamped to the tile's haystack items: on unsorted inputs (unspecified results, but
      // in range) the in-tile merge can skip a needle, leaving its slot unwritten.
      const int before = min(max(shared.indices[k], 0), count - needles_in_tile);
      const int64_t j = needle_begin + k, bound = haystack_begin + before;
      if constexpr (Output == search_output::bound) out[j] = (O)bound;
      else if constexpr (Output == search_output::equal_count) out[j] = (O)max(bound - (int64_t)lower[j], (int64_t)0);
      else out[j] = (O)(bound != (int64_t)lower[j]);
    }
  }
}

}  // namespace mergepath

// Kernel layer: vectorized sorted search. The sorted needles and the sorted haystack are merged
// virtually, tile by tile (merge-path partitions, the tile in shared memory, one serial merge per
// thread), and a needle's bound is the number of haystack items merged before it: its merged
// position minus its own index. O(needles + haystack) work, no search per needle. Lower bound:
// the needles are A, so a needle goes before the haystack items equal to it (ties go to A);
// upper bound: the haystack is A. Equal ranges, counts and match flags: the lower-bound merge,
// and the run of equal haystack items after each needle's bound.
#pragma once
#include "merge.cuh"

namespace mergepath {

// What sorted_search_tile writes for needle j: its bound (lower or upper); both bounds of the
// range of haystack items equal to it (lower to `out`, upper to `upper`); the count of equal
// haystack items (upper - lower); or whether there is one (upper != lower). All but `bound` are
// one pass of the lower-bound merge: a needle's equal items are the run of haystack items
// after its lower bound, found in the tile (equal_run_end over shared memory) and, where the
// run reaches the tile's end, finished in the global haystack (equal_run_end from the tile's
// end: only the run is read).
enum class search_output { bound, range, equal_count, contains };

// out[j] (and upper[j] for `range`) = what `Output` says for needles[j], for the needles of
// output tile blockIdx.x of the virtual merge (partitions as merge_path_partitions_body over A
// and B as above). Upper is true only for `bound`.
template <int NT, int VT, bool Upper, search_output Output, class K, class O, class Comp>
__device__ __forceinline__ void sorted_search_tile(const K* needles, int64_t needle_count, const K* haystack,
                                                   int64_t haystack_count, const int64_t* partitions, O* out,
                                                   O* upper, Comp comp) {
  constexpr int NV = NT * VT;
  constexpr bool equal_run = Output != search_output::bound;
  static_assert(!(Upper && equal_run), "equal ranges, counts and flags come from the lower-bound merge");
  // A needle's slot holds its tile-local lower bound and, for equal runs, the run's length
  // (both at most NV) in the high half.
  static_assert(!equal_run || NV < (1 << 15), "a search tile packs two tile positions into an int");
  const K* a = Upper ? haystack : needles;
  const K* b = Upper ? needles : haystack;
  const int64_t a_count = Upper ? haystack_count : needle_count;
  const int64_t b_count = Upper ? needle_count : haystack_count;
  const merge_range r = compute_merge_range(a_count, b_count, blockIdx.x, NV, partitions);
  __shared__ merge_shared<NV, K> shared;
  const int a_n = r.a_count(), count = r.count();
  const int needles_in_tile = Upper ? count - a_n : a_n;
  const int haystack_in_tile = count - needles_in_tile;
  K results[VT];
  int indices[VT];
  cta_load_merge<NT, VT>(a, b, r, shared.keys, results, indices, comp);
  // Needle k of the tile, merged at tile position p, has p - k haystack items of the tile
  // before it; for equal runs, those equal to it start there (ties go to the needles), and
  // run[i] is their number in the tile.
  int run[VT];
  if constexpr (equal_run) {
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int p = VT * (int)threadIdx.x + i, k = indices[i];
      if (p < count && k < a_n) run[i] = equal_run_end(shared.keys + a_n, p - k, haystack_in_tile, results[i], comp) - (p - k);
    }
  }
  __syncthreads();  // every thread is done with the keys: shared.indices is free
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int p = VT * (int)threadIdx.x + i;
    const int s = indices[i];
    if (p < count && (Upper ? s >= a_n : s < a_n)) {
      const int k = Upper ? s - a_n : s;
      if constexpr (equal_run) shared.indices[k] = (p - k) | (run[i] << 16);
      else shared.indices[k] = p - k;
    }
  }
  __syncthreads();
  const int64_t needle_begin = Upper ? r.b_begin : r.a_begin;
  const int64_t haystack_begin = Upper ? r.a_begin : r.b_begin;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int k = NT * i + (int)threadIdx.x;
    if (k < needles_in_tile) {
      // Clamped to the tile's haystack items: on unsorted inputs (unspecified results, but
      // in range) the in-tile merge can skip a needle, leaving its slot unwritten.
      const unsigned packed = (unsigned)shared.indices[k];
      const int before = equal_run ? min((int)(packed & 0xffff), haystack_in_tile)
                                   : min(max((int)packed, 0), haystack_in_tile);
      const int64_t j = needle_begin + k, lower = haystack_begin + before;
      if constexpr (!equal_run) {
        out[j] = (O)lower;
      } else {
        const int in_tile_end = min(before + (int)(packed >> 16), haystack_in_tile);
        // A run that reaches the tile's end may go on in the haystack beyond it.
        const int64_t end = in_tile_end < haystack_in_tile
                                ? haystack_begin + in_tile_end
                                : equal_run_end(haystack, r.b_end, haystack_count, needles[j], comp);
        if constexpr (Output == search_output::range) {
          out[j] = (O)lower;
          upper[j] = (O)end;
        } else if constexpr (Output == search_output::equal_count) {
          out[j] = (O)(end - lower);
        } else {
          out[j] = (O)(end != lower);
        }
      }
    }
  }
}

}  // namespace mergepath

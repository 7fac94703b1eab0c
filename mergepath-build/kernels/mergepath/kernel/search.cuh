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
// run goes on past the tile's end (the haystack's next item, loaded with the tile, equals the
// needle), finished in the global haystack (equal_run_end from the tile's end: only the run is
// read).
enum class search_output { bound, range, equal_count, contains };

// On unsorted inputs the coarse partitions can cross, and the clamped tile ranges
// (merge_range_between) then leave a gap between this tile's needles and the next tile's, which
// no tile merges. This tile writes those needles its last haystack position (an empty range,
// no match), so every output is written and in range. On sorted inputs the gap is empty.
// `next_a` is the next tile's raw partition; the gaps of all tiles are disjoint.
template <int NT, search_output Output, class O>
__device__ __forceinline__ void write_skipped_needles(const merge_range& r, int count, int needles_in_tile,
                                                      int64_t needle_begin, int64_t next_a, bool needles_are_b,
                                                      int64_t position, O* out, O* upper) {
  const int64_t diag_end = r.a_begin + r.b_begin + count;
  const int64_t next_needle_begin = needles_are_b ? diag_end - next_a : next_a;
  for (int64_t j = needle_begin + needles_in_tile + threadIdx.x; j < next_needle_begin; j += NT) {
    if constexpr (Output == search_output::bound || Output == search_output::range) out[j] = (O)position;
    else out[j] = (O)0;
    if constexpr (Output == search_output::range) upper[j] = (O)position;
  }
}

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
  // in the tile (both at most NV) in the high half and, in bit RUN_GOES_ON, whether the run
  // goes on past the tile.
  static_assert(!equal_run || NV < (1 << 15), "a search tile packs two tile positions into an int");
  constexpr unsigned RUN_GOES_ON = 1u << 15, POSITION_MASK = RUN_GOES_ON - 1;
  wait_for_previous_kernel();  // the partitions (see merge.cuh)
  const K* a = Upper ? haystack : needles;
  const K* b = Upper ? needles : haystack;
  const int64_t a_count = Upper ? haystack_count : needle_count;
  const int64_t b_count = Upper ? needle_count : haystack_count;
  const merge_range r = compute_merge_range(a_count, b_count, blockIdx.x, NV, partitions);
  __shared__ merge_shared<NV, K> shared;
  const int a_n = r.a_count(), count = r.count();
  const int needles_in_tile = Upper ? count - a_n : a_n;
  const int haystack_in_tile = count - needles_in_tile;
  // The haystack's item after the tile's, if any: a run of items equal to a needle that
  // reaches the tile's end goes on past it only if this one equals the needle too. Loaded
  // with the tile, so the common case (it does not) reads no more of the haystack later.
  K next_haystack{};
  const bool has_next = equal_run && r.b_end < haystack_count;
  if (has_next) next_haystack = haystack[r.b_end];
  K results[VT];
  int indices[VT];
  cta_load_merge<NT, VT>(a, b, r, shared.keys, results, indices, comp);
  // Needle k of the tile, merged at tile position p, has p - k haystack items of the tile
  // before it; for equal runs, those equal to it start there (ties go to the needles), and
  // run[i] holds their number in the tile and the RUN_GOES_ON bit.
  unsigned run[VT];
  if constexpr (equal_run) {
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int p = VT * (int)threadIdx.x + i, k = indices[i];
      if (p < count && k < a_n) {
        const int run_end = equal_run_end(shared.keys + a_n, p - k, haystack_in_tile, results[i], comp);
        const bool goes_on = run_end == haystack_in_tile && has_next && !comp(results[i], next_haystack);
        run[i] = (unsigned)(run_end - (p - k)) << 16 | (goes_on ? RUN_GOES_ON : 0u);
      }
    }
  }
  __syncthreads();  // every thread is done with the keys: shared.indices is free
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int p = VT * (int)threadIdx.x + i;
    const int s = indices[i];
    if (p < count && (Upper ? s >= a_n : s < a_n)) {
      const int k = Upper ? s - a_n : s;
      if constexpr (equal_run) shared.indices[k] = (int)((unsigned)(p - k) | run[i]);
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
      const int before = equal_run ? min((int)(packed & POSITION_MASK), haystack_in_tile)
                                   : min(max((int)packed, 0), haystack_in_tile);
      const int64_t j = needle_begin + k, lower = haystack_begin + before;
      if constexpr (!equal_run) {
        out[j] = (O)lower;
      } else {
        const int in_tile_end = min(before + (int)(packed >> 16), haystack_in_tile);
        const int64_t end = packed & RUN_GOES_ON ? equal_run_end(haystack, r.b_end, haystack_count, needles[j], comp)
                                                 : haystack_begin + in_tile_end;
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
  write_skipped_needles<NT, Output>(r, count, needles_in_tile, needle_begin, partitions[blockIdx.x + 1], Upper,
                                    haystack_begin + haystack_in_tile, out, upper);
}

}  // namespace mergepath

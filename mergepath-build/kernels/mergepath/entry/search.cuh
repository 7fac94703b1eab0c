// Entry layer: the `extern "C"` vectorized sorted search kernels.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/search.cuh"

// Vectorized sorted search, 4- or 8-byte indices: lower or upper bounds; both bounds (`out`:
// lower, `upper`: upper), counts of equal haystack items and match flags (bytes) in one pass.
// `upper` is written by the range kernels only. Partitions as mergepath_partitions over
// (needles, haystack), or (haystack, needles) for upper bounds.
#define MERGEPATH_SORTED_SEARCH(NAME, UPPER, OUTPUT, OUT)                                          \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SEARCH.nt)                     \
  mergepath_sorted_search_##NAME(const mergepath::sorted_search_params<mergepath_key_t, OUT> p) { \
    using namespace mergepath_instance;                                                          \
    mergepath::sorted_search_tile<SEARCH.nt, SEARCH.vt, UPPER, mergepath::search_output::OUTPUT,   \
                                  K, OUT>(p.needles, p.needle_count, p.haystack, p.haystack_count, \
                                          p.partitions, p.out, p.upper, Comp());                 \
  }
MERGEPATH_SORTED_SEARCH(lower_4, false, bound, uint32_t)
MERGEPATH_SORTED_SEARCH(lower_8, false, bound, uint64_t)
MERGEPATH_SORTED_SEARCH(upper_4, true, bound, uint32_t)
MERGEPATH_SORTED_SEARCH(upper_8, true, bound, uint64_t)
MERGEPATH_SORTED_SEARCH(range_4, false, range, uint32_t)
MERGEPATH_SORTED_SEARCH(range_8, false, range, uint64_t)
MERGEPATH_SORTED_SEARCH(count_4, false, equal_count, uint32_t)
MERGEPATH_SORTED_SEARCH(count_8, false, equal_count, uint64_t)
MERGEPATH_SORTED_SEARCH(contains, false, contains, uint8_t)
#undef MERGEPATH_SORTED_SEARCH

// Both bounds of a few needles (any order) in a long sorted input, by one binary search per
// bound and needle: reads O(needles · log count) keys where the vectorized search reads the
// whole input (mergepath::multi's splitter selection, a few thousand needles per round).
extern "C" __global__ void mergepath_key_bounds(const mergepath::key_bounds_params<mergepath_key_t> p) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.needle_count; i += (int64_t)gridDim.x * blockDim.x) {
    const mergepath_key_t key = p.needles[i];
    p.lower[i] = mergepath::sorted_bound<false>(p.keys, p.count, key, mergepath_comp_t());
    p.upper[i] = mergepath::sorted_bound<true>(p.keys, p.count, key, mergepath_comp_t());
  }
}

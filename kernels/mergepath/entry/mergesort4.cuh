// Entry layer: the `extern "C"` kernels of mergesort's four-way passes.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort4.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_sort4_boundaries(const mergepath_key_t* keys, int64_t count, int64_t spacing, int64_t run,
                           int64_t num_boundaries, mergepath::split4* splits) {
  mergepath::mergesort4_boundaries_body(keys, count, spacing, run, num_boundaries, splits,
                                        mergepath_comp_t());
}

// mergepath::TILE_SPLIT_LANES threads per output tile of a four-way pass (a tile is 2 * spacing items).
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_sort4_tile_splits(const mergepath_key_t* keys, int64_t count, int64_t spacing, int64_t run,
                            const mergepath::split4* coarse, int64_t num_tiles, mergepath::split4* splits) {
  mergepath::mergesort4_tile_splits_body(keys, count, spacing, run, coarse, num_tiles, splits, mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT.nt, 5)
mergepath_sort4_merge_keys(const mergepath_key_t* in, int64_t count, int64_t run,
                           const mergepath::split4* splits, mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::mergesort4_pass_tile<2 * SORT.nt, SORT.vt, false, K, K>(in, nullptr, count, run, splits,
                                                                     out, nullptr, Comp());
}

#define MERGEPATH_SORT4_PAIRS(BYTES, WORD)                                                         \
  extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT_PAIRS.nt, 2)           \
  mergepath_sort4_merge_pairs_##BYTES(const mergepath_key_t* in, const WORD* in_vals,              \
                                      int64_t count, int64_t run, const mergepath::split4* splits, \
                                      mergepath_key_t* out, WORD* out_vals) {                      \
    using namespace mergepath_instance;                                                            \
    mergepath::mergesort4_pass_tile<2 * SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(              \
        in, in_vals, count, run, splits, out, out_vals, Comp());                                   \
  }
MERGEPATH_SORT4_PAIRS(4, uint32_t)
MERGEPATH_SORT4_PAIRS(8, uint2)
MERGEPATH_SORT4_PAIRS(16, uint4)
#undef MERGEPATH_SORT4_PAIRS

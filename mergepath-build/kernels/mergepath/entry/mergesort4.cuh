// Entry layer: the `extern "C"` kernels of mergesort's four-way passes.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort4.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_sort4_boundaries(const mergepath::sort4_boundaries_params<mergepath_key_t> p) {
  mergepath::mergesort4_boundaries_body(p.keys, p.count, p.spacing, p.run, p.num_boundaries, p.splits,
                                        mergepath_comp_t());
}

// mergepath::TILE_SPLIT_LANES threads per output tile of a four-way pass (a tile is 2 * spacing items).
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_sort4_tile_splits(const mergepath::sort4_tile_splits_params<mergepath_key_t> p) {
  mergepath::mergesort4_tile_splits_body(p.keys, p.count, p.spacing, p.run, p.coarse, p.num_tiles, p.splits, mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT.nt, 5)
mergepath_sort4_merge_keys(const mergepath::sort_merge_keys_params<mergepath_key_t, mergepath::split4> p) {
  using namespace mergepath_instance;
  mergepath::mergesort4_pass_tile<2 * SORT.nt, SORT.vt, false, K, K>(p.input, nullptr, p.count, p.run, p.partitions,
                                                                     p.out, nullptr, Comp());
}

#define MERGEPATH_SORT4_PAIRS(BYTES, WORD)                                                         \
  extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT_PAIRS.nt, 2)           \
  mergepath_sort4_merge_pairs_##BYTES(const mergepath::sort_merge_pairs_params<mergepath_key_t, WORD, mergepath::split4> p) {                      \
    using namespace mergepath_instance;                                                            \
    mergepath::mergesort4_pass_tile<2 * SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(              \
        p.input, p.input_vals, p.count, p.run, p.partitions, p.out, p.out_vals, Comp());                                   \
  }
MERGEPATH_SORT4_PAIRS(4, uint32_t)
MERGEPATH_SORT4_PAIRS(8, uint2)
MERGEPATH_SORT4_PAIRS(16, uint4)
#undef MERGEPATH_SORT4_PAIRS

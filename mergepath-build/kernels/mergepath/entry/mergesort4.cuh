// Entry layer: the `extern "C"` kernels of mergesort's four-way passes.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort4.cuh"

// NAME: sort4 (the sort's passes: runs of p.run items) or multiway4 (the multiway merge's passes:
// a table of frames, TABLE). The coarse boundaries and each output tile's exact split, p.lanes
// threads each.
#define MERGEPATH_FOUR_WAY_SPLITS(NAME, TABLE)                                                          \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                           \
  mergepath_##NAME##_boundaries(const mergepath::sort4_boundaries_params<mergepath_key_t> p) {          \
    const mergepath::mergesort4_frames<mergepath_key_t, mergepath_key_t, TABLE> frames{                 \
        p.keys, nullptr, p.count, p.run, p.frames, p.num_frames};                                       \
    mergepath::mergesort4_boundaries_body(frames, p.spacing, p.num_boundaries, p.lanes, p.splits,     \
                                          mergepath_comp_t());                                          \
  }                                                                                                     \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                           \
  mergepath_##NAME##_tile_splits(const mergepath::sort4_tile_splits_params<mergepath_key_t> p) {        \
    const mergepath::mergesort4_frames<mergepath_key_t, mergepath_key_t, TABLE> frames{                 \
        p.keys, nullptr, p.count, p.run, p.frames, p.num_frames};                                       \
    mergepath::mergesort4_tile_splits_body(frames, p.spacing, p.tile, p.coarse, p.num_tiles, p.lanes,   \
                                           p.splits, mergepath_comp_t());                               \
  }
MERGEPATH_FOUR_WAY_SPLITS(sort4, false)
MERGEPATH_FOUR_WAY_SPLITS(multiway4, true)
#undef MERGEPATH_FOUR_WAY_SPLITS

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT.nt, 5)
mergepath_sort4_merge_keys(const mergepath::sort_merge_keys_params<mergepath_key_t, mergepath::split4> p) {
  using namespace mergepath_instance;
  const mergepath::mergesort4_frames<K, K, false> frames{p.input, nullptr, p.count, p.run, p.frames, p.num_frames};
  mergepath::mergesort4_pass_tile<2 * SORT.nt, SORT.vt, false, false>(frames, p.partitions, p.out, (K*)nullptr,
                                                                      nullptr, Comp());
}

// The multiway merge's four-way passes: the sort's tiles over a table of frames, guarded.
extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT.nt, 5)
mergepath_multiway4_merge_keys(const mergepath::sort_merge_keys_params<mergepath_key_t, mergepath::split4> p) {
  using namespace mergepath_instance;
  const mergepath::mergesort4_frames<K, K, true> frames{p.input, nullptr, p.count, p.run, p.frames, p.num_frames};
  mergepath::mergesort4_pass_tile<2 * SORT.nt, SORT.vt, false, true>(frames, p.partitions, p.out, (K*)nullptr, p.guard,
                                                                     Comp());
}

// NAME: sort4 (the sort's) or multiway4 (MULTIWAY: the multiway merge's, a table of frames, guarded).
#define MERGEPATH_SORT4_PAIRS(NAME, MULTIWAY, BYTES, WORD)                                              \
  extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT_PAIRS.nt, 2)               \
  mergepath_##NAME##_merge_pairs_##BYTES(                                                              \
      const mergepath::sort_merge_pairs_params<mergepath_key_t, WORD, mergepath::split4> p) {          \
    using namespace mergepath_instance;                                                                \
    const mergepath::mergesort4_frames<K, WORD, MULTIWAY> frames{p.input, p.input_vals, p.count, p.run, \
                                                       p.frames, p.num_frames};                        \
    mergepath::mergesort4_pass_tile<2 * SORT_PAIRS.nt, SORT_PAIRS.vt, true, MULTIWAY>(                 \
        frames, p.partitions, p.out, p.out_vals, MULTIWAY ? p.guard : nullptr, Comp());                 \
  }
MERGEPATH_SORT4_PAIRS(sort4, false, 4, uint32_t)
MERGEPATH_SORT4_PAIRS(sort4, false, 8, uint2)
MERGEPATH_SORT4_PAIRS(sort4, false, 16, uint4)
MERGEPATH_SORT4_PAIRS(multiway4, true, 4, uint32_t)
MERGEPATH_SORT4_PAIRS(multiway4, true, 8, uint2)
MERGEPATH_SORT4_PAIRS(multiway4, true, 16, uint4)
#undef MERGEPATH_SORT4_PAIRS

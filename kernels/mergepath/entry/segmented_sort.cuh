// Entry layer: the `extern "C"` segmented sort kernels.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/segmented_sort.cuh"

// Segmented sort over tiles of the merge passes' shape (SORT, or SORT_PAIRS with values, whose
// (key, segment) items fit shared memory), started every `stride` positions: the tile starts,
// each tile sorted in place (three launches, by tile kind), then the merge levels for the long
// segments crossing tiles (ping-ponging with a temporary buffer) and the copy back of those
// that ended there, in one launch.
extern "C" __global__ void mergepath_segmented_bounds(const int64_t* offsets, int64_t num_segments, int64_t count,
                                                      int64_t stride, int64_t small, int64_t num_tiles,
                                                      mergepath::segment_bound* bounds, int* max_levels,
                                                      mergepath::segmented_levels_progress* progress) {
  mergepath::segmented_bounds_body(offsets, num_segments, count, stride, small, num_tiles, bounds, max_levels,
                                   reinterpret_cast<unsigned int*>(progress),
                                   (int)(sizeof(mergepath::segmented_levels_progress) / sizeof(unsigned int)));
}

#define MERGEPATH_SEGMENTED_BLOCKSORT_KEYS(NAME, ONE)                                                  \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt, 6)                         \
  NAME(mergepath_key_t* keys, int64_t count, const int64_t* offsets, int64_t num_segments, int64_t stride, \
       const mergepath::segment_bound* bounds, unsigned char* kinds, mergepath::segment_tile_jobs* jobs,   \
       int* max_levels) {                                                                              \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_blocksort_tile<SORT.nt, SORT.vt, false, ONE, K, K>(                           \
        keys, nullptr, count, offsets, num_segments, stride, bounds, kinds, jobs, max_levels, Comp());  \
  }
MERGEPATH_SEGMENTED_BLOCKSORT_KEYS(mergepath_segmented_blocksort_one_keys, true)
MERGEPATH_SEGMENTED_BLOCKSORT_KEYS(mergepath_segmented_blocksort_keys, false)
#undef MERGEPATH_SEGMENTED_BLOCKSORT_KEYS
extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_segmented_blocksort_items_keys(mergepath_key_t* keys, int64_t count, const int64_t* offsets,
                                         int64_t num_segments, int64_t stride, const mergepath::segment_bound* bounds,
                                         unsigned char* kinds, mergepath::segment_tile_jobs* jobs, int* max_levels) {
  using namespace mergepath_instance;
  mergepath::segmented_blocksort_items_tile<SORT.nt, SORT.vt, false, K, K>(keys, nullptr, count, offsets, num_segments,
                                                                          stride, bounds, kinds, jobs, max_levels,
                                                                          Comp());
}

extern "C" __global__ void mergepath_segmented_level_splits(const mergepath_key_t* keys, int64_t count,
                                                             const int64_t* offsets, int64_t stride, int64_t small,
                                                             const mergepath::segment_tile_jobs* jobs,
                                                             const int* max_levels, int64_t level,
                                                             mergepath::segment_merge* merges) {
  using namespace mergepath_instance;
  mergepath::segmented_level_splits_body(keys, count, offsets, stride, small, jobs, max_levels, (int)level, merges,
                                         Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_segmented_merge_keys(const mergepath_key_t* keys_in, const int* max_levels, int64_t level,
                               const mergepath::segment_merge* merges, mergepath_key_t* keys_out) {
  using namespace mergepath_instance;
  mergepath::segmented_merge_level_tile<SORT.nt, SORT.vt, false, K, K>(keys_in, nullptr, (int)level, max_levels,
                                                                       merges, keys_out, nullptr, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_segmented_levels_keys(mergepath_key_t* keys, mergepath_key_t* tmp_keys, int64_t count,
                                const int64_t* offsets, int64_t stride, const mergepath::segment_tile_jobs* jobs,
                                const int* max_levels, int64_t first_level, mergepath::segment_merge* merges,
                                mergepath::segmented_levels_progress* progress) {
  using namespace mergepath_instance;
  mergepath::segmented_levels_body<SORT.nt, SORT.vt, false, K, K>(keys, nullptr, tmp_keys, nullptr, count, offsets,
                                                                  stride, jobs, max_levels, (int)first_level, merges,
                                                                  progress, Comp());
}

#define MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS(NAME, ONE, WORD)                                           \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  NAME(mergepath_key_t* keys, WORD* values, int64_t count, const int64_t* offsets, int64_t num_segments, \
       int64_t stride, const mergepath::segment_bound* bounds, unsigned char* kinds,                   \
       mergepath::segment_tile_jobs* jobs, int* max_levels) {                                          \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_blocksort_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, ONE, K, WORD>(             \
        keys, values, count, offsets, num_segments, stride, bounds, kinds, jobs, max_levels, Comp());  \
  }
#define MERGEPATH_SEGMENTED_PAIRS(BYTES, WORD)                                                         \
  MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS(mergepath_segmented_blocksort_one_pairs_##BYTES, true, WORD)      \
  MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS(mergepath_segmented_blocksort_pairs_##BYTES, false, WORD)        \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  mergepath_segmented_blocksort_items_pairs_##BYTES(                                                   \
      mergepath_key_t* keys, WORD* values, int64_t count, const int64_t* offsets, int64_t num_segments, \
      int64_t stride, const mergepath::segment_bound* bounds, unsigned char* kinds,                    \
      mergepath::segment_tile_jobs* jobs, int* max_levels) {                                           \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_blocksort_items_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(            \
        keys, values, count, offsets, num_segments, stride, bounds, kinds, jobs, max_levels, Comp());  \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  mergepath_segmented_merge_pairs_##BYTES(const mergepath_key_t* keys_in, const WORD* values_in,       \
                                          const int* max_levels, int64_t level,                        \
                                          const mergepath::segment_merge* merges,                      \
                                          mergepath_key_t* keys_out, WORD* values_out) {               \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_merge_level_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                \
        keys_in, values_in, (int)level, max_levels, merges, keys_out, values_out, Comp());             \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  mergepath_segmented_levels_pairs_##BYTES(mergepath_key_t* keys, WORD* values, mergepath_key_t* tmp_keys, \
                                           WORD* tmp_values, int64_t count, const int64_t* offsets,    \
                                           int64_t stride, const mergepath::segment_tile_jobs* jobs,   \
                                           const int* max_levels, int64_t first_level,                 \
                                           mergepath::segment_merge* merges,                           \
                                           mergepath::segmented_levels_progress* progress) {           \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_levels_body<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                     \
        keys, values, tmp_keys, tmp_values, count, offsets, stride, jobs, max_levels, (int)first_level, \
        merges, progress, Comp());                                                                     \
  }
MERGEPATH_SEGMENTED_PAIRS(4, uint32_t)
MERGEPATH_SEGMENTED_PAIRS(8, uint2)
MERGEPATH_SEGMENTED_PAIRS(16, uint4)
#undef MERGEPATH_SEGMENTED_PAIRS
#undef MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS

// Entry layer: the `extern "C"` segmented sort kernels.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/segmented_sort.cuh"
#include "zipped.cuh"  // the codec of keys that zip (ZipCodec)

// Segmented sort over tiles of the merge passes' shape (SORT, or SORT_PAIRS with values, whose
// (key, segment) items fit shared memory), started every `stride` positions: the tile starts,
// each tile sorted in place (three launches, by tile kind), then the merge levels for the long
// segments crossing tiles (ping-ponging with a temporary buffer) and the copy back of those
// that ended there, in one launch.
extern "C" __global__ void mergepath_segment_offsets_check(const mergepath::segment_offsets_check_params p) {
  mergepath::segment_offsets_check_body(p.offsets, p.num_offsets, p.count, p.stride, p.small, p.result);
}

extern "C" __global__ void mergepath_segmented_bounds(const mergepath::segmented_bounds_params p) {
  mergepath::segmented_bounds_body(p.offsets, p.num_segments, p.count, p.stride, p.small, p.num_tiles, p.bounds, p.max_levels,
                                   reinterpret_cast<unsigned int*>(p.progress),
                                   (int)(sizeof(mergepath::segmented_levels_progress) / sizeof(unsigned int)));
}

#define MERGEPATH_SEGMENTED_BLOCKSORT_KEYS(NAME, ONE)                                                  \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt, 6)                         \
  NAME(const mergepath::segmented_blocksort_keys_params<mergepath_key_t> p) {                                                                              \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_blocksort_tile<SORT.nt, SORT.vt, false, ONE, K, K>(                           \
        p.keys, nullptr, p.count, p.offsets, p.num_segments, p.stride, p.bounds, p.kinds, p.jobs, p.max_levels, Comp());  \
  }
MERGEPATH_SEGMENTED_BLOCKSORT_KEYS(mergepath_segmented_blocksort_one_keys, true)
MERGEPATH_SEGMENTED_BLOCKSORT_KEYS(mergepath_segmented_blocksort_keys, false)
#undef MERGEPATH_SEGMENTED_BLOCKSORT_KEYS
// Keys alone in tiles of several segments sort as (segment, key) u64 words where the module's
// keys zip (built-in keys of at most 4 bytes: entry/zipped.cuh's codec), else as segment items.
namespace mergepath_instance {
#ifdef MERGEPATH_ZIPPED_PAIRS
using SegmentWords = ZipCodec;
#else
using SegmentWords = void;
#endif
}  // namespace mergepath_instance
extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_segmented_blocksort_items_keys(const mergepath::segmented_blocksort_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::segmented_blocksort_items_tile<SORT.nt, SORT.vt, false, SegmentWords, K, K>(
      p.keys, nullptr, p.count, p.offsets, p.num_segments, p.stride, p.bounds, p.kinds, p.jobs, p.max_levels, Comp());
}

extern "C" __global__ void mergepath_segmented_level_splits(const mergepath::segmented_level_splits_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::segmented_level_splits_body(p.keys, p.count, p.offsets, p.stride, p.small, p.jobs, p.max_levels, (int)p.level, p.merges,
                                         Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_segmented_merge_keys(const mergepath::segmented_merge_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::segmented_merge_level_tile<SORT.nt, SORT.vt, false, K, K>(p.keys_in, nullptr, (int)p.level, p.max_levels,
                                                                       p.merges, p.keys_out, nullptr, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_segmented_levels_keys(const mergepath::segmented_levels_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::segmented_levels_body<SORT.nt, SORT.vt, false, K, K>(p.keys, nullptr, p.tmp_keys, nullptr, p.count, p.offsets,
                                                                  p.stride, p.jobs, p.max_levels, (int)p.first_level, p.merges,
                                                                  p.progress, Comp());
}

#define MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS(NAME, ONE, WORD)                                           \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  NAME(const mergepath::segmented_blocksort_pairs_params<mergepath_key_t, WORD> p) {                                          \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_blocksort_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, ONE, K, WORD>(             \
        p.keys, p.values, p.count, p.offsets, p.num_segments, p.stride, p.bounds, p.kinds, p.jobs, p.max_levels, Comp());  \
  }
#define MERGEPATH_SEGMENTED_PAIRS(BYTES, WORD)                                                         \
  MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS(mergepath_segmented_blocksort_one_pairs_##BYTES, true, WORD)      \
  MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS(mergepath_segmented_blocksort_pairs_##BYTES, false, WORD)        \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  mergepath_segmented_blocksort_items_pairs_##BYTES(const mergepath::segmented_blocksort_pairs_params<mergepath_key_t, WORD> p) {                                           \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_blocksort_items_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, void, K, WORD>(      \
        p.keys, p.values, p.count, p.offsets, p.num_segments, p.stride, p.bounds, p.kinds, p.jobs, p.max_levels, Comp());  \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  mergepath_segmented_merge_pairs_##BYTES(const mergepath::segmented_merge_pairs_params<mergepath_key_t, WORD> p) {               \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_merge_level_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                \
        p.keys_in, p.values_in, (int)p.level, p.max_levels, p.merges, p.keys_out, p.values_out, Comp());             \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                      \
  mergepath_segmented_levels_pairs_##BYTES(const mergepath::segmented_levels_pairs_params<mergepath_key_t, WORD> p) {           \
    using namespace mergepath_instance;                                                                \
    mergepath::segmented_levels_body<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                     \
        p.keys, p.values, p.tmp_keys, p.tmp_values, p.count, p.offsets, p.stride, p.jobs, p.max_levels, (int)p.first_level, \
        p.merges, p.progress, Comp());                                                                     \
  }
MERGEPATH_SEGMENTED_PAIRS(4, uint32_t)
MERGEPATH_SEGMENTED_PAIRS(8, uint2)
MERGEPATH_SEGMENTED_PAIRS(16, uint4)
#undef MERGEPATH_SEGMENTED_PAIRS
#undef MERGEPATH_SEGMENTED_BLOCKSORT_PAIRS

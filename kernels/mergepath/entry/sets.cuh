// Entry layer: the `extern "C"` multiset operation kernels.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/sets.cuh"

// Multiset operations: Balanced Path partitions (which also zero the tile states), then one
// kernel that writes the compacted result (keys, or keys and 4-, 8- or 16-byte values) and its
// length, or one that only counts. `emit` is a set of mergepath::set_emit flags.
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_set_partitions(const mergepath_key_t* a, int64_t a_count, const mergepath_key_t* b,
                         int64_t b_count, int64_t spacing, int64_t num_splits,
                         mergepath::set_split* splits, uint64_t* tile_states) {
  mergepath::set_partitions_body(a, a_count, b, b_count, spacing, num_splits, splits, tile_states,
                                 mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SETS.nt)
mergepath_set_keys(const mergepath_key_t* a, const mergepath_key_t* b, const mergepath::set_split* splits,
                   int64_t num_tiles, int emit, uint64_t* tile_states, mergepath_key_t* out, int64_t capacity,
                   uint64_t* out_count) {
  using namespace mergepath_instance;
  mergepath::set_op_tile<SETS.nt, SETS.vt, false, K, K>(a, nullptr, b, nullptr, splits, num_tiles, emit,
                                                        tile_states, out, nullptr, capacity, out_count, Comp());
}

#define MERGEPATH_SET_PAIRS(BYTES, WORD)                                                            \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SETS.nt)                         \
  mergepath_set_pairs_##BYTES(const mergepath_key_t* a, const WORD* a_vals, const mergepath_key_t* b, \
                              const WORD* b_vals, const mergepath::set_split* splits,               \
                              int64_t num_tiles, int emit, uint64_t* tile_states,                   \
                              mergepath_key_t* out, WORD* out_vals, int64_t capacity,               \
                              uint64_t* out_count) {                                                \
    using namespace mergepath_instance;                                                             \
    mergepath::set_op_tile<SETS.nt, SETS.vt, true, K, WORD>(a, a_vals, b, b_vals, splits, num_tiles,  \
                                                            emit, tile_states, out, out_vals,       \
                                                            capacity, out_count, Comp());           \
  }
MERGEPATH_SET_PAIRS(4, uint32_t)
MERGEPATH_SET_PAIRS(8, uint2)
MERGEPATH_SET_PAIRS(16, uint4)
#undef MERGEPATH_SET_PAIRS

extern "C" __global__ void __launch_bounds__(mergepath_instance::SETS.nt)
mergepath_set_count(const mergepath_key_t* a, const mergepath_key_t* b, const mergepath::set_split* splits,
                    int emit, unsigned long long* out_count) {
  using namespace mergepath_instance;
  mergepath::set_count_tile<SETS.nt, SETS.vt>(a, b, splits, emit, out_count, Comp());
}

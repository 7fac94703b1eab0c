// Entry layer: the `extern "C"` multiset operation kernels.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/sets.cuh"

// Multiset operations: Balanced Path partitions (which also zero the tile states), then one
// kernel that writes the compacted result (keys, or keys and 4-, 8- or 16-byte values) and its
// length, or one that only counts. `emit` is a set of the mergepath::SET_* flags.
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_set_partitions(const mergepath::set_partitions_params<mergepath_key_t> p) {
  mergepath::set_partitions_body(p.a, p.a_count, p.b, p.b_count, p.spacing, p.num_splits, p.splits, p.tile_states,
                                 mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SETS.nt)
mergepath_set_keys(const mergepath::set_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::set_op_tile<SETS.nt, SETS.vt, false, K, K>(p.a, nullptr, p.b, nullptr, p.splits, p.num_tiles, p.emit,
                                                        p.tile_states, p.out, nullptr, p.capacity, p.out_count, Comp());
}

#define MERGEPATH_SET_PAIRS(BYTES, WORD)                                                            \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SETS.nt)                         \
  mergepath_set_pairs_##BYTES(const mergepath::set_pairs_params<mergepath_key_t, WORD> p) {                                                \
    using namespace mergepath_instance;                                                             \
    mergepath::set_op_tile<SETS.nt, SETS.vt, true, K, WORD>(p.a, p.a_vals, p.b, p.b_vals, p.splits, p.num_tiles,  \
                                                            p.emit, p.tile_states, p.out, p.out_vals,       \
                                                            p.capacity, p.out_count, Comp());           \
  }
MERGEPATH_SET_PAIRS(4, uint32_t)
MERGEPATH_SET_PAIRS(8, uint2)
MERGEPATH_SET_PAIRS(16, uint4)
#undef MERGEPATH_SET_PAIRS

extern "C" __global__ void __launch_bounds__(mergepath_instance::SETS.nt)
mergepath_set_count(const mergepath::set_count_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::set_count_tile<SETS.nt, SETS.vt>(p.a, p.b, p.splits, p.emit, p.out_count, Comp());
}

// Entry layer: the `extern "C"` merge kernels (partitions, keys, pairs).
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/merge.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_partitions(const mergepath_key_t* a, int64_t a_count, const mergepath_key_t* b,
                     int64_t b_count, int64_t spacing, int64_t num_partitions,
                     int64_t* partitions) {
  mergepath::merge_path_partitions_body(a, a_count, b, b_count, spacing, num_partitions,
                                        partitions, mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::MERGE.nt)
mergepath_merge_keys(const mergepath_key_t* a, int64_t a_count, const mergepath_key_t* b,
                     int64_t b_count, const int64_t* partitions, mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::merge_tile<MERGE.nt, MERGE.vt, false, K, K>(a, nullptr, a_count, b, nullptr, b_count,
                                                         partitions, out, nullptr, Comp());
}

// Values are opaque words of 4, 8 or 16 bytes: one kernel per size, none per value type.
#define MERGEPATH_MERGE_PAIRS(BYTES, WORD)                                                       \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::MERGE.nt)                     \
  mergepath_merge_pairs_##BYTES(const mergepath_key_t* a, const WORD* a_vals, int64_t a_count,   \
                                const mergepath_key_t* b, const WORD* b_vals, int64_t b_count,   \
                                const int64_t* partitions, mergepath_key_t* out,                 \
                                WORD* out_vals) {                                                \
    using namespace mergepath_instance;                                                          \
    mergepath::merge_tile<MERGE.nt, MERGE.vt, true, K, WORD>(                                    \
        a, a_vals, a_count, b, b_vals, b_count, partitions, out, out_vals, Comp());              \
  }
MERGEPATH_MERGE_PAIRS(4, uint32_t)
MERGEPATH_MERGE_PAIRS(8, uint2)
MERGEPATH_MERGE_PAIRS(16, uint4)
#undef MERGEPATH_MERGE_PAIRS

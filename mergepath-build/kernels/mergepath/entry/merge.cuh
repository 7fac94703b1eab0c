// Entry layer: the `extern "C"` merge kernels (partitions, keys, pairs).
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/merge.cuh"
#include "../kernel/unsorted.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_partitions(const mergepath::partitions_params<mergepath_key_t> p) {
  mergepath::merge_path_partitions_body(p.a, p.a_count, p.b, p.b_count, p.spacing, p.num_partitions,
                                        p.partitions, mergepath_comp_t());
}

// The same partitions with B's items first on ties (Tie::BFirst of the host partitions).
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_partitions_b_first(const mergepath::partitions_params<mergepath_key_t> p) {
  mergepath::merge_path_partitions_body<mergepath::tie::b_first>(p.a, p.a_count, p.b, p.b_count, p.spacing,
                                                                p.num_partitions, p.partitions, mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::MERGE.nt)
mergepath_merge_keys(const mergepath::merge_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::merge_tile<MERGE.nt, MERGE.vt, false, K, K>(p.a, nullptr, p.a_count, p.b, nullptr, p.b_count,
                                                         p.partitions, p.out, nullptr, Comp(), p.guard);
}

// Values are opaque words of 4, 8 or 16 bytes: one kernel per size, none per value type.
#define MERGEPATH_MERGE_PAIRS(BYTES, WORD)                                                       \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::MERGE.nt)                     \
  mergepath_merge_pairs_##BYTES(const mergepath::merge_pairs_params<mergepath_key_t, WORD> p) {                                                \
    using namespace mergepath_instance;                                                          \
    mergepath::merge_tile<MERGE.nt, MERGE.vt, true, K, WORD>(                                    \
        p.a, p.a_vals, p.a_count, p.b, p.b_vals, p.b_count, p.partitions, p.out, p.out_vals, Comp(), p.guard);              \
  }
MERGEPATH_MERGE_PAIRS(4, uint32_t)
MERGEPATH_MERGE_PAIRS(8, uint2)
MERGEPATH_MERGE_PAIRS(16, uint4)
#undef MERGEPATH_MERGE_PAIRS

// The two-way merge's fallback for unsorted inputs (kernel/unsorted.cuh): A, then B.
extern "C" __global__ void __launch_bounds__(mergepath::MERGE_FALLBACK_THREADS)
mergepath_merge_fallback(const mergepath::merge_fallback_params p) {
  const auto input = [&](int64_t t) {
    return t == 0 ? mergepath::fallback_input{p.a, p.a_vals, p.a_count} : mergepath::fallback_input{p.b, p.b_vals, p.b_count};
  };
  mergepath::merge_fallback_body(p.guard, 2, input, p.key_bytes, p.value_bytes, p.out, p.out_vals);
}

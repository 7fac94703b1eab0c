// Entry layer: the `extern "C"` multiway merge kernels (boundaries, partitions, keys, pairs).
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes. Tiles take the sort passes' shapes
// (SORT for keys, SORT_PAIRS for pairs): a tile merges its slices by cta_merge_lists, as the
// partitions (SORT) merge their brackets.
#pragma once
#include "../kernel/multiway.cuh"
#include "../kernel/unsorted.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::MULTIWAY_PARTITION_THREADS)
mergepath_multiway_boundaries(const mergepath::multiway_boundaries_params<mergepath_key_t> p) {
  mergepath::multiway_boundaries_body<mergepath::MULTIWAY_PARTITION_THREADS>(
      p.inputs, p.counts, (int)p.ways, p.spacing, p.boundary_starts, p.num_boundaries, p.rows, p.ranks,
      mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_multiway_partitions(const mergepath::multiway_partitions_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::multiway_partitions_body<SORT.nt, SORT.vt>(
      p.inputs, p.counts, (int)p.ways, p.total, p.spacing, p.num_partitions, p.boundary_rows, p.boundary_ranks,
      p.num_boundaries, p.splits, mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_multiway_merge_keys(const mergepath::multiway_merge_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::multiway_merge_tile<SORT.nt, SORT.vt, false, K, K>(p.inputs, (const K* const*)nullptr, p.counts,
                                                                (int)p.ways, p.total, p.splits, p.out,
                                                                (K*)nullptr, Comp(), p.guard);
}

#define MERGEPATH_MULTIWAY_MERGE_PAIRS(BYTES, WORD)                                                  \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                    \
  mergepath_multiway_merge_pairs_##BYTES(const mergepath::multiway_merge_pairs_params<mergepath_key_t, WORD> p) { \
    using namespace mergepath_instance;                                                              \
    mergepath::multiway_merge_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                     \
        p.inputs, p.values, p.counts, (int)p.ways, p.total, p.splits, p.out, p.out_vals, Comp(), p.guard);    \
  }
MERGEPATH_MULTIWAY_MERGE_PAIRS(4, uint32_t)
MERGEPATH_MULTIWAY_MERGE_PAIRS(8, uint2)
MERGEPATH_MULTIWAY_MERGE_PAIRS(16, uint4)
#undef MERGEPATH_MULTIWAY_MERGE_PAIRS

// The multiway merge's fallback for unsorted inputs (kernel/unsorted.cuh): the inputs in order.
extern "C" __global__ void __launch_bounds__(mergepath::MERGE_FALLBACK_THREADS)
mergepath_multiway_fallback(const mergepath::multiway_fallback_params p) {
  const auto input = [&](int64_t t) {
    return mergepath::fallback_input{p.inputs[t], p.values ? p.values[t] : nullptr, p.counts[t]};
  };
  mergepath::merge_fallback_body(p.guard, p.ways, input, p.key_bytes, p.value_bytes, p.out, p.out_vals);
}

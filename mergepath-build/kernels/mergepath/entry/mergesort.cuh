// Entry layer: the `extern "C"` mergesort kernels (blocksort, two-way passes).
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort.cuh"

// Mergesort: blocksort of each tile, then merge passes over runs of `run` items.
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_sort_partitions(const mergepath::sort_partitions_params<mergepath_key_t> p) {
  mergepath::mergesort_partitions_body(p.keys, p.count, p.spacing, p.run, p.num_partitions, p.partitions,
                                       mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort_keys(const mergepath::blocksort_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile<BLOCKSORT.nt, BLOCKSORT.vt, false, K, K>(p.input, nullptr, p.count, p.out, nullptr, Comp());
}

// The blocksort on blocks of twice the tile (2 * BLOCKSORT.nt threads, the keys in dynamic shared
// memory: 2 * BLOCKSORT tile keys), so a key sort whose merge levels would be odd starts with
// one level fewer, all of them in four-way passes.
extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort2_keys(const mergepath::blocksort_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile_in<2 * BLOCKSORT.nt, BLOCKSORT.vt, false, K, K>(
      p.input, nullptr, p.count, p.out, nullptr, reinterpret_cast<K*>(mergepath_dynamic_shared), nullptr, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_sort_merge_keys(const mergepath::sort_merge_keys_params<mergepath_key_t, int64_t> p) {
  using namespace mergepath_instance;
  mergepath::mergesort_pass_tile<SORT.nt, SORT.vt, false, K, K>(p.input, nullptr, p.count, p.run, p.partitions,
                                                                p.out, nullptr, Comp());
}

#define MERGEPATH_SORT_PAIRS(BYTES, WORD)                                                          \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)                   \
  mergepath_blocksort_pairs_##BYTES(const mergepath::blocksort_pairs_params<mergepath_key_t, WORD> p) {         \
    using namespace mergepath_instance;                                                            \
    mergepath::blocksort_tile<BLOCKSORT.nt, BLOCKSORT.vt, true, K, WORD>(p.input, p.input_vals, p.count, p.out,  \
                                                                         p.out_vals, Comp());        \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                  \
  mergepath_sort_merge_pairs_##BYTES(const mergepath::sort_merge_pairs_params<mergepath_key_t, WORD, int64_t> p) {                       \
    using namespace mergepath_instance;                                                            \
    mergepath::mergesort_pass_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                   \
        p.input, p.input_vals, p.count, p.run, p.partitions, p.out, p.out_vals, Comp());                               \
  }
MERGEPATH_SORT_PAIRS(4, uint32_t)
MERGEPATH_SORT_PAIRS(8, uint2)
MERGEPATH_SORT_PAIRS(16, uint4)
#undef MERGEPATH_SORT_PAIRS

// Entry layer: the `extern "C"` mergesort kernels (blocksort, two-way passes).
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort.cuh"

// Mergesort: blocksort of each tile, then merge passes over runs of `run` items.
extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)
mergepath_sort_partitions(const mergepath_key_t* keys, int64_t count, int64_t spacing, int64_t run,
                          int64_t num_partitions, int64_t* partitions) {
  mergepath::mergesort_partitions_body(keys, count, spacing, run, num_partitions, partitions,
                                       mergepath_comp_t());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort_keys(const mergepath_key_t* in, int64_t count, mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile<BLOCKSORT.nt, BLOCKSORT.vt, false, K, K>(in, nullptr, count, out, nullptr, Comp());
}

// The blocksort on blocks of twice the tile (2 * BLOCKSORT.nt threads, the keys in dynamic shared
// memory: 2 * BLOCKSORT tile keys), so a key sort whose merge levels would be odd starts with
// one level fewer, all of them in four-way passes.
extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort2_keys(const mergepath_key_t* in, int64_t count, mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile_in<2 * BLOCKSORT.nt, BLOCKSORT.vt, false, K, K>(
      in, nullptr, count, out, nullptr, reinterpret_cast<K*>(mergepath_dynamic_shared), nullptr, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_sort_merge_keys(const mergepath_key_t* in, int64_t count, int64_t run,
                          const int64_t* partitions, mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::mergesort_pass_tile<SORT.nt, SORT.vt, false, K, K>(in, nullptr, count, run, partitions,
                                                                out, nullptr, Comp());
}

#define MERGEPATH_SORT_PAIRS(BYTES, WORD)                                                          \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)                   \
  mergepath_blocksort_pairs_##BYTES(const mergepath_key_t* in, const WORD* in_vals,                \
                                    int64_t count, mergepath_key_t* out, WORD* out_vals) {         \
    using namespace mergepath_instance;                                                            \
    mergepath::blocksort_tile<BLOCKSORT.nt, BLOCKSORT.vt, true, K, WORD>(in, in_vals, count, out,  \
                                                                         out_vals, Comp());        \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT_PAIRS.nt)                  \
  mergepath_sort_merge_pairs_##BYTES(const mergepath_key_t* in, const WORD* in_vals,               \
                                     int64_t count, int64_t run, const int64_t* partitions,        \
                                     mergepath_key_t* out, WORD* out_vals) {                       \
    using namespace mergepath_instance;                                                            \
    mergepath::mergesort_pass_tile<SORT_PAIRS.nt, SORT_PAIRS.vt, true, K, WORD>(                   \
        in, in_vals, count, run, partitions, out, out_vals, Comp());                               \
  }
MERGEPATH_SORT_PAIRS(4, uint32_t)
MERGEPATH_SORT_PAIRS(8, uint2)
MERGEPATH_SORT_PAIRS(16, uint4)
#undef MERGEPATH_SORT_PAIRS

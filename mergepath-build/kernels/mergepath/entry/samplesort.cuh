// Entry layer: the `extern "C"` sample sort kernels (samples, count, scan, scatter, finish).
// Included by ../instantiate.cuh. The samples and the finishing sorts take blocksort tiles
// (BLOCKSORT, the host's bucket limit), the distribution passes SAMPLESORT tiles.
#pragma once
#include "../kernel/samplesort.cuh"

extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)
mergepath_samplesort_samples(const mergepath::samplesort_samples_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::samplesort_samples_body<BLOCKSORT.nt, BLOCKSORT.vt>(p.keys, p.segments, p.num_segments, p.samples,
                                                                 p.sorted, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SAMPLESORT.nt)
mergepath_samplesort_count(const mergepath::samplesort_count_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::samplesort_count_body<SAMPLESORT.nt, SAMPLESORT.vt>(p, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath::SAMPLESORT_SCAN_THREADS)
mergepath_samplesort_scan(const mergepath::samplesort_scan_params p) {
  mergepath::samplesort_scan_body(p);
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SAMPLESORT.nt)
mergepath_samplesort_scatter_keys(const mergepath::samplesort_scatter_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::samplesort_scatter_body<SAMPLESORT.nt, SAMPLESORT.vt, false, K, K>(
      p.keys, (const K*)nullptr, p.sorted_samples, p.samples, p.segments, p.chunk_segments, p.num_chunks,
      p.chunk_items, p.offsets, p.bucket_starts, p.keys_out, (K*)nullptr, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)
mergepath_samplesort_finish_keys(const mergepath::samplesort_finish_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::samplesort_finish_body<BLOCKSORT.nt, BLOCKSORT.vt, false, K, K>(p.temp, (const K*)nullptr, p.out, (K*)nullptr,
                                                                   p.starts, p.jobs, p.num_jobs, Comp());
}

#define MERGEPATH_SAMPLESORT_PAIRS(BYTES, WORD)                                                        \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SAMPLESORT.nt)                      \
  mergepath_samplesort_scatter_pairs_##BYTES(                                                          \
      const mergepath::samplesort_scatter_pairs_params<mergepath_key_t, WORD> p) {                     \
    using namespace mergepath_instance;                                                                \
    mergepath::samplesort_scatter_body<SAMPLESORT.nt, SAMPLESORT.vt, true, K, WORD>(                   \
        p.keys, p.values, p.sorted_samples, p.samples, p.segments, p.chunk_segments, p.num_chunks,     \
        p.chunk_items, p.offsets, p.bucket_starts, p.keys_out, p.values_out, Comp());                  \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)                       \
  mergepath_samplesort_finish_pairs_##BYTES(                                                           \
      const mergepath::samplesort_finish_pairs_params<mergepath_key_t, WORD> p) {                      \
    using namespace mergepath_instance;                                                                \
    mergepath::samplesort_finish_body<BLOCKSORT.nt, BLOCKSORT.vt, true, K, WORD>(                    \
        p.temp, p.temp_values, p.out, p.out_values, p.starts, p.jobs, p.num_jobs, Comp());             \
  }
MERGEPATH_SAMPLESORT_PAIRS(4, uint32_t)
MERGEPATH_SAMPLESORT_PAIRS(8, uint2)
MERGEPATH_SAMPLESORT_PAIRS(16, uint4)
#undef MERGEPATH_SAMPLESORT_PAIRS

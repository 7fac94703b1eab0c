// Entry layer: the `extern "C"` kernels of runs of equal keys, for run positions of 4 or 8
// bytes: their starts and the deferred tiles' outputs (the module's keys and comparator), and
// their lengths (key-independent).
// Included by ../instantiate.cuh.
#pragma once
#include "../kernel/runs.cuh"

namespace mergepath_instance {
constexpr mergepath::launch_shape RUNS = mergepath::runs_shape(MERGEPATH_ARCH / 10, (int)sizeof(K));
// As many tiles an SM as its shared memory holds, asked of the register allocator.
constexpr int RUNS_CTAS = mergepath::run_starts_ctas_per_sm<RUNS.nt, RUNS.vt, K>(MERGEPATH_ARCH);

// The deferred tiles' slots and counts of a call's parameters.
template <class I>
__device__ __forceinline__ mergepath::run_deferral<K> run_deferral_of(const mergepath::runs_params<I>& p) {
  return {p.deferred_positions, reinterpret_cast<K*>(p.deferred_heads), p.deferred_counts,
          reinterpret_cast<unsigned long long*>(p.deferred_lasts)};
}
}  // namespace mergepath_instance

#define MERGEPATH_RUNS(BYTES, INDEX)                                                                     \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::RUNS.nt, mergepath_instance::RUNS_CTAS) \
  mergepath_run_starts_##BYTES(const mergepath::runs_params<INDEX> p) {                                  \
    using namespace mergepath_instance;                                                                  \
    mergepath::run_starts_tile<RUNS.nt, RUNS.vt>(reinterpret_cast<const K*>(p.keys), p.count, p.num_tiles, \
                                                    p.tile_states, p.starts, reinterpret_cast<K*>(p.heads),        \
                                                    mergepath::run_boundaries_out<INDEX>{p.boundary_bits, p.boundaries_before}, \
                                                    mergepath::run_lengths_out<INDEX>{p.lengths, p.tile_lasts}, \
                                                    mergepath_instance::run_deferral_of(p), mergepath::reported_count{p.runs, p.runs_host}, Comp());  \
  }                                                                                                      \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::RUNS.nt)                              \
  mergepath_run_deferred_##BYTES(const mergepath::runs_params<INDEX> p) {                                \
    using namespace mergepath_instance;                                                                  \
    mergepath::run_deferred_tiles<RUNS.nt, RUNS.vt>(p.count, p.num_tiles, p.tile_states, p.starts, reinterpret_cast<K*>(p.heads), \
                                                   mergepath::run_boundaries_out<INDEX>{p.boundary_bits, p.boundaries_before}, \
                                                   mergepath::run_lengths_out<INDEX>{p.lengths, p.tile_lasts}, run_deferral_of(p), mergepath::reported_count{p.runs, p.runs_host}); \
  }                                                                                                      \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                            \
  mergepath_run_lengths_##BYTES(const mergepath::runs_params<INDEX> p) {                                 \
    mergepath::run_lengths_body(p.starts, (int64_t)*p.runs, p.count, p.lengths);                         \
  }
MERGEPATH_RUNS(4, uint32_t)
MERGEPATH_RUNS(8, uint64_t)
#undef MERGEPATH_RUNS

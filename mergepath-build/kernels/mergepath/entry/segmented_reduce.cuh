// Entry layer: the `extern "C"` segmented reduction kernels of the module's key type: per
// reduction (sum where the key is a built-in number, min and max by the module's comparator),
// the tiles for starts of 4- or 8-byte indices, the tiles for runs by boundary words, and the
// spine. Included by ../instantiate.cuh.
#pragma once
#include <string.h>
#include "../kernel/segmented_reduce.cuh"

namespace mergepath_instance {
constexpr mergepath::launch_shape REDUCE = mergepath::reduce_shape(MERGEPATH_ARCH / 10, (int)sizeof(K));
constexpr mergepath::launch_shape REDUCE_RUNS = mergepath::reduce_runs_shape(MERGEPATH_ARCH / 10, (int)sizeof(K));
// The reduce-by-key tiles an SM holds, asked of the register allocator: all 2,048 threads for
// values of 4 bytes (32 registers a thread at 256 x 15, no spills; the compiler's own choice,
// 40, held 6 tiles and was 8 % slower on runs of up to 32 keys, BENCHMARKS.md).
constexpr int REDUCE_RUNS_CTAS = sizeof(K) <= 4 ? 2048 / REDUCE_RUNS.nt : 1;
static_assert(sizeof(K) <= sizeof(mergepath::segmented_reduce_params<uint32_t>::empty) &&
                  sizeof(mergepath::segmented_fold<K>) <= mergepath::REDUCE_PARTIAL_BYTES &&
                  sizeof(mergepath::spine_carry<K>) <= mergepath::REDUCE_SPINE_CARRY_BYTES,
              "segmented reduction: keys of at most 16 bytes");

template <class I>
__device__ __forceinline__ K reduce_empty(const mergepath::segmented_reduce_params<I>& p) {
  K empty;
  memcpy(&empty, p.empty, sizeof(K));
  return empty;
}

template <class I>
__device__ __forceinline__ mergepath::reduce_partials<K> reduce_partials_of(const mergepath::segmented_reduce_params<I>& p) {
  return {reinterpret_cast<mergepath::segmented_fold<K>*>(p.heads), reinterpret_cast<mergepath::segmented_fold<K>*>(p.tails)};
}

template <class I, class Op>
__device__ __forceinline__ void reduce_tile(const mergepath::segmented_reduce_params<I>& p, Op op) {
  mergepath::segmented_reduce_tile<REDUCE.nt, REDUCE.vt>(p.starts, p.segments, p.count, reinterpret_cast<const K*>(p.values),
                                                        p.partitions, reinterpret_cast<K*>(p.out), reduce_empty(p), op,
                                                        reduce_partials_of(p));
}

template <class I, class Op>
__device__ __forceinline__ void reduce_runs(const mergepath::segmented_reduce_params<I>& p, Op op) {
  const mergepath::run_boundaries<I> runs{p.boundary_bits, p.boundaries_before};
  mergepath::reduce_runs_tile<REDUCE_RUNS.nt, REDUCE_RUNS.vt>(runs, p.segments, p.count, reinterpret_cast<const K*>(p.values),
                                                            p.partitions, p.tiles, reinterpret_cast<K*>(p.out), op,
                                                            reduce_partials_of(p));
}

template <class Op>
__device__ __forceinline__ void reduce_spine(const mergepath::segmented_reduce_params<uint32_t>& p, Op op) {
  mergepath::segmented_reduce_spine<mergepath::REDUCE_SPINE_THREADS, mergepath::REDUCE_SPINE_TILES>(
      p.segments, p.tiles, p.partitions, reduce_partials_of(p), p.spine_states,
      reinterpret_cast<mergepath::spine_carry<K>*>(p.spine_carries), reinterpret_cast<K*>(p.out), reduce_empty(p), op);
}
}  // namespace mergepath_instance

#define MERGEPATH_SEGMENTED_REDUCE(NAME, OP)                                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::REDUCE.nt)                                  \
  mergepath_segmented_reduce_##NAME##_4(const mergepath::segmented_reduce_params<uint32_t> p) {                \
    mergepath_instance::reduce_tile(p, OP);                                                                     \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::REDUCE.nt)                                  \
  mergepath_segmented_reduce_##NAME##_8(const mergepath::segmented_reduce_params<uint64_t> p) {                \
    mergepath_instance::reduce_tile(p, OP);                                                                     \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::REDUCE_RUNS.nt, mergepath_instance::REDUCE_RUNS_CTAS) \
  mergepath_reduce_runs_##NAME##_4(const mergepath::segmented_reduce_params<uint32_t> p) {                     \
    mergepath_instance::reduce_runs(p, OP);                                                                     \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::REDUCE_RUNS.nt, mergepath_instance::REDUCE_RUNS_CTAS) \
  mergepath_reduce_runs_##NAME##_8(const mergepath::segmented_reduce_params<uint64_t> p) {                     \
    mergepath_instance::reduce_runs(p, OP);                                                                     \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(mergepath::REDUCE_SPINE_THREADS)                                \
  mergepath_segmented_reduce_spine_##NAME(const mergepath::segmented_reduce_params<uint32_t> p) {              \
    mergepath_instance::reduce_spine(p, OP);                                                                    \
  }
#ifdef MERGEPATH_ARITHMETIC_KEY
MERGEPATH_SEGMENTED_REDUCE(sum, mergepath::reduce_sum<mergepath_instance::K>())
#endif
MERGEPATH_SEGMENTED_REDUCE(min, (mergepath::reduce_min<mergepath_instance::K, mergepath_instance::Comp>{mergepath_instance::Comp()}))
MERGEPATH_SEGMENTED_REDUCE(max, (mergepath::reduce_max<mergepath_instance::K, mergepath_instance::Comp>{mergepath_instance::Comp()}))
#undef MERGEPATH_SEGMENTED_REDUCE

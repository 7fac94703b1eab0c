// Entry layer: the `extern "C"` load-balancing search kernels, for starts, segments and ranks
// of 4- or 8-byte indices. Key-independent: every module has them. Included by ../instantiate.cuh.
#pragma once
#include "../kernel/load_balancing.cuh"

namespace mergepath_instance {
// The tiles: the sorted search's shapes for keys of the index's width.
constexpr mergepath::launch_shape LOAD_BALANCING_4 = mergepath::search_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape LOAD_BALANCING_8 = mergepath::search_shape(MERGEPATH_ARCH / 10, 8);
}  // namespace mergepath_instance

#define MERGEPATH_LOAD_BALANCING(BYTES, INDEX)                                                       \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                        \
  mergepath_load_balancing_partitions_##BYTES(const mergepath::load_balancing_params<INDEX> p) {    \
    mergepath::load_balancing_partitions_body(p.starts, p.segments, p.count, p.spacing, p.num_partitions, \
                                              p.partitions);                                         \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::LOAD_BALANCING_##BYTES.nt)       \
  mergepath_load_balancing_##BYTES(const mergepath::load_balancing_params<INDEX> p) {               \
    using namespace mergepath_instance;                                                              \
    mergepath::load_balancing_tile<LOAD_BALANCING_##BYTES.nt, LOAD_BALANCING_##BYTES.vt>(            \
        p.starts, p.segments, p.count, p.partitions, p.segment_out, p.rank_out);                     \
  }
MERGEPATH_LOAD_BALANCING(4, uint32_t)
MERGEPATH_LOAD_BALANCING(8, uint64_t)
#undef MERGEPATH_LOAD_BALANCING

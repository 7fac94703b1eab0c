// Entry layer: the `extern "C"` load-balancing search kernels, for starts, segments and ranks
// of 4- or 8-byte indices. Key-independent: every module has the partitions (the segmented
// reductions use their own key's module); the search and interval expand are launched from the
// u32 / less module only, the one unit built with MERGEPATH_INDEX_ENTRIES (build.rs), so the
// other modules do not compile them. Included by ../instantiate.cuh.
#pragma once
#include "../kernel/load_balancing.cuh"
#include "words.cuh"

namespace mergepath_instance {
// The tiles, by the index's width (tuning.tsv's load_balancing rows).
constexpr mergepath::launch_shape LOAD_BALANCING_4 = mergepath::load_balancing_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape LOAD_BALANCING_8 = mergepath::load_balancing_shape(MERGEPATH_ARCH / 10, 8);
}  // namespace mergepath_instance

#define MERGEPATH_LOAD_BALANCING_PARTITIONS(BYTES, INDEX)                                            \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                        \
  mergepath_load_balancing_partitions_##BYTES(const mergepath::load_balancing_params<INDEX> p) {    \
    mergepath::load_balancing_partitions_body(p.starts, p.segments, p.count, p.spacing, p.num_partitions, \
                                              p.partitions);                                         \
  }
MERGEPATH_LOAD_BALANCING_PARTITIONS(4, uint32_t)
MERGEPATH_LOAD_BALANCING_PARTITIONS(8, uint64_t)
#undef MERGEPATH_LOAD_BALANCING_PARTITIONS

#ifdef MERGEPATH_INDEX_ENTRIES
#define MERGEPATH_LOAD_BALANCING(BYTES, INDEX)                                                       \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::LOAD_BALANCING_##BYTES.nt)       \
  mergepath_load_balancing_##BYTES(const mergepath::load_balancing_params<INDEX> p) {               \
    using namespace mergepath_instance;                                                              \
    const mergepath::load_balancing_outputs<INDEX, uint32_t> out{p.segment_out, p.rank_out, nullptr, nullptr, 0}; \
    mergepath::load_balancing_tile<LOAD_BALANCING_##BYTES.nt, LOAD_BALANCING_##BYTES.vt>(            \
        p.starts, p.segments, p.count, p.partitions, out);                                           \
  }
MERGEPATH_LOAD_BALANCING(4, uint32_t)
MERGEPATH_LOAD_BALANCING(8, uint64_t)
#undef MERGEPATH_LOAD_BALANCING

// Interval expand: each item's segment's value, `p.words` words of W a value (the widest word
// that divides the value and its addresses), in the search's tile (no segment written).
#define MERGEPATH_INTERVAL_EXPAND(WBYTES, W, BYTES, INDEX)                                             \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::LOAD_BALANCING_##BYTES.nt)         \
  mergepath_interval_expand_##WBYTES##_##BYTES(const mergepath::load_balancing_params<INDEX> p) {     \
    using namespace mergepath_instance;                                                                \
    const mergepath::load_balancing_outputs<INDEX, W> out{nullptr, nullptr, reinterpret_cast<const W*>(p.values), \
                                                          reinterpret_cast<W*>(p.value_out), (int)p.words}; \
    mergepath::load_balancing_tile<LOAD_BALANCING_##BYTES.nt, LOAD_BALANCING_##BYTES.vt>(              \
        p.starts, p.segments, p.count, p.partitions, out);                                             \
  }
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_INTERVAL_EXPAND)
#undef MERGEPATH_INTERVAL_EXPAND
#endif  // MERGEPATH_INDEX_ENTRIES

// Entry layer: the `extern "C"` bulk insert and remove kernels: the partitions for positions of
// 4 or 8 bytes, and the tiles, values moved as words of 1 to 16 bytes. Key-independent:
// compiled only into the u32 / less module (MERGEPATH_INDEX_ENTRIES), on tiles of the
// load-balancing search's kind in the sorted search's shapes (the load-balancing rows' 128 x 15
// made them 8-12 % slower at 2^26: BENCHMARKS.md). Included by ../instantiate.cuh.
#pragma once
#include "load_balancing.cuh"

namespace mergepath_instance {
constexpr mergepath::launch_shape BULK_4 = mergepath::search_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape BULK_8 = mergepath::search_shape(MERGEPATH_ARCH / 10, 8);
}  // namespace mergepath_instance

#ifdef MERGEPATH_INDEX_ENTRIES
#include "../kernel/bulk.cuh"

#define MERGEPATH_BULK_PARTITIONS(BYTES, INDEX)                                                        \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                          \
  mergepath_bulk_partitions_##BYTES(const mergepath::bulk_params<INDEX> p) {                           \
    mergepath::bulk_partitions_body(p.positions, p.count, p.n, p.spacing, p.num_partitions, p.partitions); \
  }
MERGEPATH_BULK_PARTITIONS(4, uint32_t)
MERGEPATH_BULK_PARTITIONS(8, uint64_t)
#undef MERGEPATH_BULK_PARTITIONS

#define MERGEPATH_BULK(OP, WBYTES, W, BYTES, INDEX)                                                    \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::BULK_##BYTES.nt)                   \
  mergepath_bulk_##OP##_##WBYTES##_##BYTES(const mergepath::bulk_params<INDEX> p) {                   \
    using namespace mergepath_instance;                                                                \
    const mergepath::bulk_values<W> v{reinterpret_cast<const W*>(p.array), reinterpret_cast<const W*>(p.values), \
                                      reinterpret_cast<W*>(p.out), p.out_len, (int)p.words};           \
    mergepath::bulk_##OP##_tile<BULK_##BYTES.nt, BULK_##BYTES.vt>(                                     \
        p.positions, p.count, p.n, p.partitions, v, p.guard);                                          \
  }
#define MERGEPATH_BULK_INSERT(WBYTES, W, BYTES, INDEX) MERGEPATH_BULK(insert, WBYTES, W, BYTES, INDEX)
#define MERGEPATH_BULK_REMOVE(WBYTES, W, BYTES, INDEX) MERGEPATH_BULK(remove, WBYTES, W, BYTES, INDEX)
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_BULK_INSERT)
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_BULK_REMOVE)
#undef MERGEPATH_BULK_REMOVE
#undef MERGEPATH_BULK_INSERT
#undef MERGEPATH_BULK
#endif  // MERGEPATH_INDEX_ENTRIES

// Entry layer: the `extern "C"` bulk insert kernels: the partitions for positions of 4 or 8
// bytes, and the tiles, values moved as words of 1 to 16 bytes. Key-independent: compiled only
// into the u32 / less module (MERGEPATH_INDEX_ENTRIES), on the load-balancing search's tile
// shapes. Included by ../instantiate.cuh.
#pragma once
#include "load_balancing.cuh"

#ifdef MERGEPATH_INDEX_ENTRIES
#include "../kernel/bulk.cuh"

#define MERGEPATH_BULK_INSERT_PARTITIONS(BYTES, INDEX)                                                \
  extern "C" __global__ void __launch_bounds__(mergepath::PARTITION_THREADS)                         \
  mergepath_bulk_insert_partitions_##BYTES(const mergepath::bulk_insert_params<INDEX> p) {           \
    mergepath::bulk_insert_partitions_body(p.positions, p.inserts, p.count, p.spacing, p.num_partitions, \
                                           p.partitions);                                             \
  }
MERGEPATH_BULK_INSERT_PARTITIONS(4, uint32_t)
MERGEPATH_BULK_INSERT_PARTITIONS(8, uint64_t)
#undef MERGEPATH_BULK_INSERT_PARTITIONS

#define MERGEPATH_BULK_INSERT(WBYTES, W, BYTES, INDEX)                                                 \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::LOAD_BALANCING_##BYTES.nt)         \
  mergepath_bulk_insert_##WBYTES##_##BYTES(const mergepath::bulk_insert_params<INDEX> p) {            \
    using namespace mergepath_instance;                                                                \
    const mergepath::bulk_insert_values<W> v{reinterpret_cast<const W*>(p.array), reinterpret_cast<const W*>(p.values), \
                                             reinterpret_cast<W*>(p.out), (int)p.words};               \
    mergepath::bulk_insert_tile<LOAD_BALANCING_##BYTES.nt, LOAD_BALANCING_##BYTES.vt>(                 \
        p.positions, p.inserts, p.count, p.partitions, v, p.guard);                                    \
  }
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_BULK_INSERT)
#undef MERGEPATH_BULK_INSERT
#endif  // MERGEPATH_INDEX_ENTRIES

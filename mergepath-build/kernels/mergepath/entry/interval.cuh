// Entry layer: the `extern "C"` interval move kernels (gather, scatter and move: null
// destinations or sources), values moved as words of 1 to 16 bytes by indices of 4 or 8.
// Key-independent: compiled only into the u32 / less module (MERGEPATH_INDEX_ENTRIES), on the
// load-balancing search's tiles in their own shape (tuning.tsv's interval rows). Included by
// ../instantiate.cuh.
#pragma once
#include "load_balancing.cuh"

#ifdef MERGEPATH_INDEX_ENTRIES
#include "../kernel/interval.cuh"

namespace mergepath_instance {
constexpr mergepath::launch_shape INTERVAL_4 = mergepath::interval_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape INTERVAL_8 = mergepath::interval_shape(MERGEPATH_ARCH / 10, 8);
}  // namespace mergepath_instance

#define MERGEPATH_INTERVAL_MOVE(WBYTES, W, BYTES, INDEX)                                                \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::INTERVAL_##BYTES.nt)          \
  mergepath_interval_move_##WBYTES##_##BYTES(const mergepath::interval_move_params<INDEX> p) {         \
    using namespace mergepath_instance;                                                                 \
    const mergepath::interval_moves<INDEX, W> moves{p.sources, p.destinations, reinterpret_cast<const W*>(p.input), \
                                                    p.input_len, reinterpret_cast<W*>(p.output), p.output_len, \
                                                    (int)p.words};                                      \
    mergepath::interval_move_tile<INTERVAL_##BYTES.nt, INTERVAL_##BYTES.vt>(               \
        p.starts, p.segments, p.count, p.partitions, moves);                                            \
  }
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_INTERVAL_MOVE)
#undef MERGEPATH_INTERVAL_MOVE
#endif  // MERGEPATH_INDEX_ENTRIES

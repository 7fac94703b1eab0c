// Entry layer: the `extern "C"` interval gather, scatter and move kernels, values moved as words
// of 1 to 16 bytes by indices of 4 or 8.
// Key-independent: compiled only into the u32 / less module (MERGEPATH_INDEX_ENTRIES), on the
// load-balancing search's tiles in shapes of their own (tuning.tsv's interval_gather,
// interval_scatter and interval_move rows). Included by ../instantiate.cuh.
#pragma once
#include "load_balancing.cuh"

#ifdef MERGEPATH_INDEX_ENTRIES
#include "../kernel/interval.cuh"

namespace mergepath_instance {
constexpr mergepath::launch_shape INTERVAL_GATHER_4 = mergepath::interval_gather_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape INTERVAL_GATHER_8 = mergepath::interval_gather_shape(MERGEPATH_ARCH / 10, 8);
constexpr mergepath::launch_shape INTERVAL_SCATTER_4 = mergepath::interval_scatter_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape INTERVAL_SCATTER_8 = mergepath::interval_scatter_shape(MERGEPATH_ARCH / 10, 8);
constexpr mergepath::launch_shape INTERVAL_MOVE_4 = mergepath::interval_move_shape(MERGEPATH_ARCH / 10, 4);
constexpr mergepath::launch_shape INTERVAL_MOVE_8 = mergepath::interval_move_shape(MERGEPATH_ARCH / 10, 8);
}  // namespace mergepath_instance

// mergepath_interval_{KIND}_{word}_{4,8}: KIND gather (sources), scatter (destinations) or
// move (both), each instantiated for its own arrays, in its SHAPE (tuning.tsv's rows), for
// values of one word; mergepath_interval_{KIND}_words_{word}_{4,8} for values of several (kept
// apart: one kernel for both held more registers). Each has room for 2048 threads an SM (32
// registers at 128 threads): the tile's occupancy hides its loads' latency better than the
// registers' extra values in flight would (BENCHMARKS.md).
#define MERGEPATH_INTERVAL_KIND(NAME, SHAPE, SOURCES, DESTINATIONS, ONE_WORD, WBYTES, W, BYTES, INDEX)  \
  extern "C" __global__ void __launch_bounds__(mergepath_instance::SHAPE##_##BYTES.nt, 2048 / mergepath_instance::SHAPE##_##BYTES.nt) \
  mergepath_interval_##NAME##_##WBYTES##_##BYTES(const mergepath::interval_move_params<INDEX> p) {      \
    using namespace mergepath_instance;                                                                 \
    const mergepath::interval_moves<INDEX, W> moves{p.sources, p.destinations, reinterpret_cast<const W*>(p.input), \
                                                    p.input_len, reinterpret_cast<W*>(p.output), p.output_len, \
                                                    (int)p.words};                                      \
    mergepath::interval_move_tile<SHAPE##_##BYTES.nt, SHAPE##_##BYTES.vt, SOURCES, DESTINATIONS, ONE_WORD>( \
        p.starts, p.segments, p.count, p.partitions, moves);                                            \
  }
#define MERGEPATH_INTERVAL_GATHER(...) MERGEPATH_INTERVAL_KIND(gather, INTERVAL_GATHER, true, false, true, __VA_ARGS__) \
  MERGEPATH_INTERVAL_KIND(gather_words, INTERVAL_GATHER, true, false, false, __VA_ARGS__)
#define MERGEPATH_INTERVAL_SCATTER(...) MERGEPATH_INTERVAL_KIND(scatter, INTERVAL_SCATTER, false, true, true, __VA_ARGS__) \
  MERGEPATH_INTERVAL_KIND(scatter_words, INTERVAL_SCATTER, false, true, false, __VA_ARGS__)
#define MERGEPATH_INTERVAL_MOVE(...) MERGEPATH_INTERVAL_KIND(move, INTERVAL_MOVE, true, true, true, __VA_ARGS__) \
  MERGEPATH_INTERVAL_KIND(move_words, INTERVAL_MOVE, true, true, false, __VA_ARGS__)
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_INTERVAL_GATHER)
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_INTERVAL_SCATTER)
MERGEPATH_EACH_WORD_AND_INDEX(MERGEPATH_INTERVAL_MOVE)
#undef MERGEPATH_INTERVAL_GATHER
#undef MERGEPATH_INTERVAL_SCATTER
#undef MERGEPATH_INTERVAL_MOVE
#undef MERGEPATH_INTERVAL_KIND
#endif  // MERGEPATH_INDEX_ENTRIES

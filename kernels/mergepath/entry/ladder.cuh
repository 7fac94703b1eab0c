// Entry layer: the `extern "C"` kernels of the co-rank merge ladder.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/ladder.cuh"

// The co-rank merge ladder (Kirk & Hwu): three strategies of merge_keys beside the two-phase
// merge, for comparing them (kernel/ladder.cuh).
extern "C" __global__ void __launch_bounds__(mergepath_instance::LADDER.nt)
mergepath_merge_basic(const mergepath_key_t* a, int64_t a_count, const mergepath_key_t* b, int64_t b_count,
                      mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::merge_basic_body<LADDER.nt, LADDER.vt>(a, a_count, b, b_count, out, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::LADDER.nt)
mergepath_merge_tiled(const mergepath_key_t* a, int64_t a_count, const mergepath_key_t* b, int64_t b_count,
                      mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::merge_tiled_body<LADDER.nt, LADDER_TILE, LADDER_BLOCK_TILES>(a, a_count, b, b_count, out, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::LADDER.nt)
mergepath_merge_circular(const mergepath_key_t* a, int64_t a_count, const mergepath_key_t* b, int64_t b_count,
                         mergepath_key_t* out) {
  using namespace mergepath_instance;
  mergepath::merge_circular_body<LADDER.nt, LADDER_TILE, LADDER_BLOCK_TILES>(a, a_count, b, b_count, out, Comp());
}

// Entry layer: the `extern "C"` kernels of the co-rank merge ladder.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/ladder.cuh"

// The co-rank merge ladder (Kirk & Hwu): three strategies of merge_keys beside the two-phase
// merge, for comparing them (kernel/ladder.cuh).
extern "C" __global__ void __launch_bounds__(mergepath_instance::LADDER.nt)
mergepath_merge_basic(const mergepath::merge_ladder_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::merge_basic_body<LADDER.nt, LADDER.vt>(p.a, p.a_count, p.b, p.b_count, p.out, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::LADDER.nt)
mergepath_merge_tiled(const mergepath::merge_ladder_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::merge_tiled_body<LADDER.nt, LADDER_TILE, mergepath::LADDER_BLOCK_TILES>(p.a, p.a_count, p.b, p.b_count, p.out, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::LADDER.nt)
mergepath_merge_circular(const mergepath::merge_ladder_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::merge_circular_body<LADDER.nt, LADDER_TILE, mergepath::LADDER_BLOCK_TILES>(p.a, p.a_count, p.b, p.b_count, p.out, Comp());
}

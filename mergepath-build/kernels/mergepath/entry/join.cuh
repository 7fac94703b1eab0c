// Entry layer: the `extern "C"` kernels of a sorted relational join's count scan and expansion.
// Key-independent (the rows' match ranges come from the key's sorted search): launched from the
// u32 / less module only, the one unit built with MERGEPATH_INDEX_ENTRIES (build.rs). Included
// by ../instantiate.cuh.
#pragma once
#include "load_balancing.cuh"  // the expansion's tiles: LOAD_BALANCING_8

#ifdef MERGEPATH_INDEX_ENTRIES
#include "../kernel/join.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::JOIN_THREADS) mergepath_join_scan(const mergepath::join_params p) {
  mergepath::join_scan_tile<mergepath::JOIN_THREADS, mergepath::JOIN_ITEMS>(p);
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::LOAD_BALANCING_8.nt) mergepath_join_expand(const mergepath::join_params p) {
  using namespace mergepath_instance;
  mergepath::join_expand_tile<LOAD_BALANCING_8.nt, LOAD_BALANCING_8.vt>(p);
}
#endif  // MERGEPATH_INDEX_ENTRIES

// Entry layer: the `extern "C"` kernels of a sorted relational join's count scan and expansion.
// Key-independent: every module has them (the rows' match ranges come from the module's sorted
// search). Included by ../instantiate.cuh.
#pragma once
#include "../kernel/join.cuh"

extern "C" __global__ void __launch_bounds__(mergepath::JOIN_THREADS) mergepath_join_scan(const mergepath::join_params p) {
  mergepath::join_scan_tile<mergepath::JOIN_THREADS, mergepath::JOIN_ITEMS>(p);
}

extern "C" __global__ void __launch_bounds__(mergepath::JOIN_THREADS) mergepath_join_expand(const mergepath::join_params p) {
  mergepath::join_expand_tile<mergepath::JOIN_THREADS, mergepath::JOIN_ITEMS>(p);
}

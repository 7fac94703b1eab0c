// Thread layer: the serial merge loop each thread runs on its share of a tile.
#pragma once
#include "search.cuh"

namespace mergepath {

// Merges exactly VT items from shared memory into registers, starting at (a, b) on the
// thread's merge path. A is keys[a..a_end), B is keys[b..b_end), both in one shared array
// (B placed after A). Reads stay inside [a, a_end) and [b, b_end); past the end of both
// ranges (the tail of a partial tile) the results are unspecified and must not be stored.
// Unrolled so `results` and `indices` stay in registers. `indices[i]` is the tile-local
// position the i-th result came from (< a_end: from A).
template <int VT, class K, class Comp>
__device__ __forceinline__ void serial_merge(const K* keys, int a, int a_end, int b, int b_end,
                                             K (&results)[VT], int (&indices)[VT], Comp comp) {
  K a_key = a < a_end ? keys[a] : keys[0];
  K b_key = b < b_end ? keys[b] : keys[0];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    bool take_a = (b >= b_end) || ((a < a_end) && a_goes_first(a_key, b_key, comp));
    results[i] = take_a ? a_key : b_key;
    indices[i] = take_a ? a : b;
    if (take_a) {
      if (++a < a_end) a_key = keys[a];
    } else {
      if (++b < b_end) b_key = keys[b];
    }
  }
}

// One thread's share of a merge held in shared memory: the VT items of the merge of
// keys[a_begin, a_end) with keys[a_end, b_end) from output position `diag` on (clamped to the
// merge's length), found by a merge-path search and merged serially. `indices` are positions
// in `keys`.
template <int VT, class K, class Comp>
__device__ __forceinline__ void serial_merge_at(const K* keys, int a_begin, int a_end, int b_end, int diag,
                                                K (&results)[VT], int (&indices)[VT], Comp comp) {
  if (diag > b_end - a_begin) diag = b_end - a_begin;
  const int mp = merge_path(keys + a_begin, a_end - a_begin, keys + a_end, b_end - a_end, diag, comp);
  serial_merge<VT>(keys, a_begin + mp, a_end, a_end + diag - mp, b_end, results, indices, comp);
}

}  // namespace mergepath

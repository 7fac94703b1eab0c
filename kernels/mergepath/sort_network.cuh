// Thread layer: sorting the VT items a thread holds in registers.
#pragma once
#include "search.cuh"

namespace mergepath {

// Stable odd-even transposition sort of VT keys (and, with HasValues, their values) in
// registers: VT rounds of compare-and-swap on neighbours, fully unrolled so every index is a
// compile-time constant and nothing leaves registers. Swaps only strictly out-of-order pairs,
// so equal keys keep their order.
template <int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void odd_even_transposition_sort(K (&keys)[VT], V (&values)[VT], Comp comp) {
#pragma unroll
  for (int round = 0; round < VT; ++round) {
#pragma unroll
    for (int i = round & 1; i + 1 < VT; i += 2) {
      if (comp(keys[i + 1], keys[i])) {
        K k = keys[i]; keys[i] = keys[i + 1]; keys[i + 1] = k;
        if constexpr (HasValues) {
          V v = values[i]; values[i] = values[i + 1]; values[i + 1] = v;
        }
      }
    }
  }
}

}  // namespace mergepath

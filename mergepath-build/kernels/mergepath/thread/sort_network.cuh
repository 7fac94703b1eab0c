// Thread layer: sorting the VT items a thread holds in registers.
#pragma once
#include <utility>
#include "keys.cuh"
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

// Orders in which keys that compare equal are the same bits (the built-in comparators: integers,
// and floats in the total order): sorting such keys alone needs no stability, since equal keys
// cannot be told apart.
template <class Comp> struct order_is_identity { static constexpr bool value = false; };
template <class K> struct order_is_identity<less_t<K>> { static constexpr bool value = true; };
template <class K> struct order_is_identity<greater_t<K>> { static constexpr bool value = true; };

// The comparators of Knuth's merge exchange (Batcher's sort for any n, TAOCP 5.2.2 M) on N
// items, in order: about N log^2 N / 4 of them against N^2 / 2 for transposition, so fewer
// compare-and-swaps, at the cost of stability.
template <int N>
struct merge_exchange_network {
  __host__ __device__ static constexpr int top() {
    int t = 0;
    while ((1 << t) < N) ++t;
    return t;
  }
  // Calls f(i, j) for each comparator, in order.
  template <class F>
  __host__ __device__ static constexpr void visit(F f) {
    for (int p = (1 << top()) >> 1; p > 0; p >>= 1) {
      int q = (1 << top()) >> 1, r = 0, d = p;
      while (d > 0) {
        for (int i = 0; i + d < N; ++i)
          if ((i & p) == r) f(i, i + d);
        d = q - p;
        q >>= 1;
        r = p;
      }
    }
  }
  __host__ __device__ static constexpr int count() {
    int c = 0;
    visit([&c](int, int) { ++c; });
    return c;
  }
  static constexpr int SIZE = count() > 0 ? count() : 1;
  int lo[SIZE], hi[SIZE];
  __host__ __device__ constexpr merge_exchange_network() : lo(), hi() {
    int c = 0;
    visit([&](int i, int j) {
      lo[c] = i;
      hi[c] = j;
      ++c;
    });
  }
};

template <int VT, class K, class Comp, int... C>
__device__ __forceinline__ void merge_exchange_steps(K (&keys)[VT], Comp comp, std::integer_sequence<int, C...>) {
  constexpr merge_exchange_network<VT> net{};
  auto compare_swap = [&](int i, int j) {
    const K a = keys[i], b = keys[j];
    const bool swap = comp(b, a);
    keys[i] = swap ? b : a;
    keys[j] = swap ? a : b;
  };
  (compare_swap(net.lo[C], net.hi[C]), ...);
}

// Sorts VT keys in registers by merge exchange (not stable: for orders where equal keys are
// the same bits). Every comparator's indices are compile-time constants.
template <int VT, class K, class Comp>
__device__ __forceinline__ void merge_exchange_sort(K (&keys)[VT], Comp comp) {
  merge_exchange_steps<VT>(keys, comp, std::make_integer_sequence<int, merge_exchange_network<VT>::count()>{});
}

}  // namespace mergepath

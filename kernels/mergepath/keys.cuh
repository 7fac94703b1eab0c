// Thread layer: key orderings.
//
// Comparators are functors `bool operator()(K a, K b)` that answer "a goes strictly before b"
// and must be strict weak orders. Floating-point keys use the IEEE total order (Rust's
// `f32::total_cmp`): -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, so NaN keys sort
// deterministically and -0.0 sorts before +0.0.
#pragma once
#include <stdint.h>

namespace mergepath {

// Maps a float's bits to a signed integer whose `<` is the total order.
__device__ __forceinline__ int32_t total_order_bits(float x) {
  int32_t i = __float_as_int(x);
  return i ^ (int32_t)((uint32_t)(i >> 31) >> 1);
}
__device__ __forceinline__ int64_t total_order_bits(double x) {
  int64_t i = __double_as_longlong(x);
  return i ^ (int64_t)((uint64_t)(i >> 63) >> 1);
}

template <class K> struct order_key { __device__ __forceinline__ static K get(K k) { return k; } };
template <> struct order_key<float> { __device__ __forceinline__ static int32_t get(float k) { return total_order_bits(k); } };
template <> struct order_key<double> { __device__ __forceinline__ static int64_t get(double k) { return total_order_bits(k); } };

template <class K> struct less_t {
  __device__ __forceinline__ bool operator()(K a, K b) const {
    return order_key<K>::get(a) < order_key<K>::get(b);
  }
};
template <class K> struct greater_t {
  __device__ __forceinline__ bool operator()(K a, K b) const {
    return order_key<K>::get(b) < order_key<K>::get(a);
  }
};

}  // namespace mergepath

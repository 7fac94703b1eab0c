// Thread layer: key orderings.
//
// Comparators are functors `bool operator()(K a, K b)` that answer "a goes strictly before b"
// and must be strict weak orders. Floating-point keys use the IEEE total order (Rust's
// `f32::total_cmp`): -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, so NaN keys sort
// deterministically and -0.0 sorts before +0.0.
#pragma once
#include <stdint.h>
#include <mergepath/contract.cuh>  // RECORD_ADDRESS_REVERSED_BIT, generated from mergepath-build's contract

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

// A key's bits as an unsigned integer of its width whose `<` is the key's order (the total
// order for floats): signed integers and floats with the sign bit flipped; `key` maps it back.
// `ones`: all bits set (a descending field is complemented). Derived keys pack their fields'
// order_bits into one integer where they fit 64 bits.
__device__ __forceinline__ float float_from_order_bits(uint32_t u) {
  const int32_t t = (int32_t)(u ^ 0x80000000u);  // total_order_bits is its own inverse
  return __int_as_float(t ^ (int32_t)((uint32_t)(t >> 31) >> 1));
}
__device__ __forceinline__ double double_from_order_bits(uint64_t u) {
  const int64_t t = (int64_t)(u ^ 0x8000000000000000ull);
  return __longlong_as_double(t ^ (int64_t)((uint64_t)(t >> 63) >> 1));
}
template <class K> struct order_bits;
#define MERGEPATH_ORDER_BITS(K, U, GET, KEY)                                          \
  template <> struct order_bits<K> {                                                  \
    static constexpr U ones = (U)~(U)0;                                               \
    __device__ __forceinline__ static U get(K k) { return GET; }                      \
    __device__ __forceinline__ static K key(U u) { return KEY; }                      \
  };
MERGEPATH_ORDER_BITS(uint8_t, uint8_t, k, u)
MERGEPATH_ORDER_BITS(uint16_t, uint16_t, k, u)
MERGEPATH_ORDER_BITS(uint32_t, uint32_t, k, u)
MERGEPATH_ORDER_BITS(uint64_t, uint64_t, k, u)
MERGEPATH_ORDER_BITS(int8_t, uint8_t, (uint8_t)((uint8_t)k ^ 0x80u), (int8_t)(uint8_t)(u ^ 0x80u))
MERGEPATH_ORDER_BITS(int16_t, uint16_t, (uint16_t)((uint16_t)k ^ 0x8000u), (int16_t)(uint16_t)(u ^ 0x8000u))
MERGEPATH_ORDER_BITS(int32_t, uint32_t, (uint32_t)k ^ 0x80000000u, (int32_t)(u ^ 0x80000000u))
MERGEPATH_ORDER_BITS(int64_t, uint64_t, (uint64_t)k ^ 0x8000000000000000ull, (int64_t)(u ^ 0x8000000000000000ull))
MERGEPATH_ORDER_BITS(float, uint32_t, (uint32_t)total_order_bits(k) ^ 0x80000000u, float_from_order_bits(u))
MERGEPATH_ORDER_BITS(double, uint64_t, (uint64_t)total_order_bits(k) ^ 0x8000000000000000ull, double_from_order_bits(u))
#undef MERGEPATH_ORDER_BITS

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

// The order of a small key zipped with its value into a u64 (thread/codec.cuh's zip_codec):
// that of the words' high halves, the keys' order bits.
struct zipped_key_less {
  __device__ __forceinline__ bool operator()(uint64_t a, uint64_t b) const {
    return (uint32_t)(a >> 32) < (uint32_t)(b >> 32);
  }
};

// Records wider than the key tiles under a custom comparator `Comp` on the record type `R`:
// the keys are the records' device addresses, compared as the records they point to, so the
// sort and merge kernels order records they never move. Every address of a call has bit
// RECORD_ADDRESS_REVERSED_BIT set where the call wants the order reversed.
template <class R, class Comp> struct by_address {
  __device__ __forceinline__ bool operator()(uint64_t a, uint64_t b) const {
    constexpr uint64_t reversed = 1ull << RECORD_ADDRESS_REVERSED_BIT;
    const R& x = *reinterpret_cast<const R*>(a & ~reversed);
    const R& y = *reinterpret_cast<const R*>(b & ~reversed);
    return a & reversed ? Comp()(y, x) : Comp()(x, y);
  }
};

}  // namespace mergepath

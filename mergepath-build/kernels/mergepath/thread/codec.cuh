// Thread layer: the key codec, for keys stored in global memory in another form than the one a
// kernel compares: encoding_reader and decoding_writer, the sources and destinations of the CTA
// layer's loads and stores for such keys, and zip_reader and unzip_writer for small keys that
// travel zipped with their values.
#pragma once
#include <stdint.h>
#include <string.h>
#include "keys.cuh"

namespace mergepath {

// Keys stored in global memory in another form than the one a kernel compares: `Codec` has
// static `encode(const Stored&)` (the compared form) and `decode` (back). A sort of derived keys
// whose order is a packed u64's reads them through encoding_reader in its first pass and writes
// them through decoding_writer in its last, so no pass of its own converts them. An 8-byte
// Stored (a struct of narrower fields) moves as one 8-byte word, so `p` must be 8-byte aligned.
template <class Stored>
__device__ __forceinline__ Stored load_stored(const Stored* at) {
  if constexpr (sizeof(Stored) == 8) {
    const uint64_t word = *reinterpret_cast<const uint64_t*>(at);
    Stored s;
    memcpy(&s, &word, 8);
    return s;
  } else {
    return *at;
  }
}
template <class Stored>
__device__ __forceinline__ void store_stored(Stored* at, const Stored& s) {
  if constexpr (sizeof(Stored) == 8) {
    uint64_t word;
    memcpy(&word, &s, 8);
    *reinterpret_cast<uint64_t*>(at) = word;
  } else {
    *at = s;
  }
}
template <class Stored, class Codec>
struct encoding_reader {
  const Stored* p;
  __device__ __forceinline__ auto operator[](int64_t i) const { return Codec::encode(load_stored(p + i)); }
  __device__ __forceinline__ encoding_reader operator+(int64_t i) const { return {p + i}; }
};
template <class Stored, class Codec>
struct decoding_writer {
  Stored* p;
  struct slot {
    Stored* at;
    template <class T>
    __device__ __forceinline__ void operator=(const T& key) const { store_stored(at, Codec::decode(key)); }
  };
  __device__ __forceinline__ slot operator[](int64_t i) const { return {p + i}; }
  __device__ __forceinline__ decoding_writer operator+(int64_t i) const { return {p + i}; }
};


// A key of at most 4 bytes and a 4-byte value zipped into one u64: the key's order bits in
// the high half (complemented for a descending order, so the high halves' ascending order is
// the key's), the value's bits in the low half. A sort of such pairs sorts the words by their
// high halves alone (zipped_key_less; the sort is stable, so equal keys keep their values'
// order), moving 8 bytes an item through each pass as a u64 key sort does: its first pass reads
// the keys and values through zip_reader, its last writes them through unzip_writer.
template <class K, bool Descending>
struct zip_codec {
  static_assert(sizeof(K) <= 4, "zipped keys are at most 4 bytes");
  using Bits = decltype(order_bits<K>::get(K()));
  __device__ __forceinline__ static uint64_t zip(K key, uint32_t value) {
    const Bits bits = Descending ? (Bits)(order_bits<K>::get(key) ^ order_bits<K>::ones) : order_bits<K>::get(key);
    return (uint64_t)bits << 32 | value;
  }
  __device__ __forceinline__ static K key(uint64_t word) {
    const Bits bits = (Bits)(word >> 32);
    return order_bits<K>::key(Descending ? (Bits)(bits ^ order_bits<K>::ones) : bits);
  }
  __device__ __forceinline__ static uint32_t value(uint64_t word) { return (uint32_t)word; }
};

// Whether a comparator is the descending order of its key: defined for the built-in
// comparators only, the ones a zipped sort takes.
template <class Comp> struct zip_descending;
template <class K> struct zip_descending<less_t<K>> { static constexpr bool value = false; };
template <class K> struct zip_descending<greater_t<K>> { static constexpr bool value = true; };

template <class K, class Codec>
struct zip_reader {
  const K* keys;
  const uint32_t* values;
  __device__ __forceinline__ uint64_t operator[](int64_t i) const { return Codec::zip(keys[i], values[i]); }
  __device__ __forceinline__ zip_reader operator+(int64_t i) const { return {keys + i, values + i}; }
};

template <class K, class Codec>
struct unzip_writer {
  K* keys;
  uint32_t* values;
  struct slot {
    K* key;
    uint32_t* value;
    __device__ __forceinline__ void operator=(uint64_t word) const {
      *key = Codec::key(word);
      *value = Codec::value(word);
    }
  };
  __device__ __forceinline__ slot operator[](int64_t i) const { return {keys + i, values + i}; }
  __device__ __forceinline__ unzip_writer operator+(int64_t i) const { return {keys + i, values + i}; }
};

}  // namespace mergepath

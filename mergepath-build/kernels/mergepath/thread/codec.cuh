// Thread layer: the key codec, for keys stored in global memory in another form than the one a
// kernel compares: encoding_reader and decoding_writer, the sources and destinations of the CTA
// layer's loads and stores for such keys.
#pragma once
#include <stdint.h>
#include <string.h>

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

}  // namespace mergepath

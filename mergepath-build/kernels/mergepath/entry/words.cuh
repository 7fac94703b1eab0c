// Entry layer: the (word, index) pairs the value-moving key-independent kernels are stamped
// for: values moved as words of 1, 2, 4, 8 or 16 bytes, by indices of 4 or 8 bytes.
// `STAMP(WBYTES, W, IBYTES, I)` is called once per pair.
#pragma once
#include <stdint.h>

#define MERGEPATH_EACH_WORD_AND_INDEX(STAMP) \
  STAMP(1, uint8_t, 4, uint32_t)             \
  STAMP(2, uint16_t, 4, uint32_t)            \
  STAMP(4, uint32_t, 4, uint32_t)            \
  STAMP(8, uint2, 4, uint32_t)               \
  STAMP(16, uint4, 4, uint32_t)              \
  STAMP(1, uint8_t, 8, uint64_t)             \
  STAMP(2, uint16_t, 8, uint64_t)            \
  STAMP(4, uint32_t, 8, uint64_t)            \
  STAMP(8, uint2, 8, uint64_t)               \
  STAMP(16, uint4, 8, uint64_t)

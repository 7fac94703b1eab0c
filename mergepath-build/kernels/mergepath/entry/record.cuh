// Entry layer: the `extern "C"` kernels of the sorts of packed orders (records wider than the
// key tiles, and keys wider than 8 bytes whose order packs: `Comparator::SORT_BY_WORDS`): the
// order's words packed beside each item's position, the (word, position) pairs sorted as u64
// keys by the first word, then each later word inside the runs of items tied on the words
// before it (the tie kernels), and the items gathered by position. Key-independent (the items
// are bytes and the order's layout a parameter) but for mergepath_comparator_heads, the tie
// kernel's comparator twin. Included by ../instantiate.cuh.
#pragma once
#include <stdint.h>
#include "../kernel/record_ties.cuh"

namespace mergepath {
// The bits of one order element of `record` (element word `field`: the RECORD_ constants),
// as an unsigned integer of its size whose `<` is its order, complemented where descending,
// shifted to its place in the packed order.
__device__ __forceinline__ uint64_t record_order_element(const unsigned char* record, int64_t field) {
  const int64_t offset = field & 0xffffffffll;
  const int kind = (int)((field >> RECORD_FIELD_KIND_SHIFT) & 0xff);
  const int shift = (int)((field >> RECORD_FIELD_BITS_SHIFT) & 0xff);
  const int bytes = kind & 15;
  const unsigned char* at = record + offset;
  uint64_t bits;
  switch (bytes) {
    case 1: bits = *at; break;
    case 2: bits = *reinterpret_cast<const uint16_t*>(at); break;
    case 4: bits = *reinterpret_cast<const uint32_t*>(at); break;
    default: bits = *reinterpret_cast<const uint64_t*>(at); break;
  }
  const uint64_t ones = bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
  const uint64_t sign = 1ull << (8 * bytes - 1);
  if (kind & RECORD_KIND_FLOAT) {
    // total_order_bits: negative floats' magnitude bits reversed; then the sign flipped.
    const uint64_t magnitude = bits & sign ? (ones >> 1) : 0;
    bits = (bits ^ magnitude) ^ sign;
  } else if (kind & RECORD_KIND_SIGNED) {
    bits ^= sign;
  }
  if ((field >> RECORD_FIELD_DESCENDING_BIT) & 1) bits ^= ones;
  return bits << shift;
}

// Word `word` of the packed order of `record`: its elements' bits (those of that word).
__device__ __forceinline__ uint64_t record_order_word(const unsigned char* record, const int64_t* fields, int64_t num_fields,
                                                      int64_t word) {
  uint64_t order = 0;
  for (int f = 0; f < num_fields; ++f)
    if (((fields[f] >> RECORD_FIELD_WORD_SHIFT) & 0xff) == word) order |= record_order_element(record, fields[f]);
  return order;
}
}  // namespace mergepath

#define MERGEPATH_RECORD_ORDER(PBYTES, P)                                                              \
  extern "C" __global__ void mergepath_record_order_##PBYTES(const mergepath::record_order_params<P> p) { \
    if (p.runs != nullptr && p.runs[0] == (uint64_t)p.count) return; /* no ties: the word orders nothing */ \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += (int64_t)gridDim.x * blockDim.x) { \
      const int64_t r = p.gather ? (int64_t)p.positions[i] : i;                                        \
      p.order[i] = mergepath::record_order_word(p.records + r * p.record_bytes, p.fields, p.num_fields, p.word); \
      if (!p.gather) p.positions[i] = (P)i;                                                            \
    }                                                                                                  \
  }
MERGEPATH_RECORD_ORDER(4, uint32_t)
MERGEPATH_RECORD_ORDER(8, uint64_t)
#undef MERGEPATH_RECORD_ORDER

extern "C" __global__ void __launch_bounds__(mergepath::RECORD_TIES_THREADS)
    mergepath_record_heads(const mergepath::record_heads_params p) {
  mergepath::record_heads_body<mergepath::RECORD_TIES_THREADS>(p);
}

// The runs of keys equal under the module's comparator (the ranks of records under a custom
// comparator, whose module's keys are their addresses).
extern "C" __global__ void __launch_bounds__(mergepath::RECORD_TIES_THREADS)
    mergepath_comparator_heads(const mergepath::comparator_heads_params p) {
  using namespace mergepath_instance;
  mergepath::comparator_heads_body<mergepath::RECORD_TIES_THREADS, K>(p, Comp());
}

extern "C" __global__ void __launch_bounds__(mergepath::RECORD_TIES_THREADS)
    mergepath_record_segments(const mergepath::record_segments_params p) {
  mergepath::record_segments_body<mergepath::RECORD_TIES_THREADS>(p);
}

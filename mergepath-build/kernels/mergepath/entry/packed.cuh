// Entry layer: the `extern "C"` kernels of sorts of keys packed into u64s: derived keys whose
// order is a packed u64's, and pairs whose keys' order fits 32 bits, packed with their positions.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort.cuh"
#include "../kernel/mergesort4.cuh"

// Keys whose order is that of a packed u64 (`Comparator::PACKED_U64`: the comparator defines
// MERGEPATH_PACKED_U64 and names the packing `Comp::packed_codec` and the u64 order
// `Comp::packed_order`): a key sort runs the u64 sort's passes (the u64 module's kernels), but
// its first pass reads the keys packed (`mergepath_blocksort_pack`) and its last writes them
// unpacked (one of the `_unpack` merges, or `mergepath_blocksort_pack_unpack` for a sort of one
// block), so no pass of its own converts them. Shapes are the u64 ones: the key is 8 bytes.
#ifdef MERGEPATH_PACKED_U64
// The parameter structs are the key kernels' (keys and packed u64 are both 8 bytes): the u64
// side of a pass is its key pointer reinterpreted.
namespace mergepath_instance {
static_assert(sizeof(K) == 8, "packed keys are 8 bytes");
using Packed = mergepath::encoding_reader<K, Comp::packed_codec>;
using Unpacked = mergepath::decoding_writer<K, Comp::packed_codec>;
using PackedOrder = Comp::packed_order;
}  // namespace mergepath_instance

extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort_pack(const mergepath::blocksort_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile<BLOCKSORT.nt, BLOCKSORT.vt, false, uint64_t, uint64_t>(Packed{p.input}, nullptr, p.count, reinterpret_cast<uint64_t*>(p.out),
                                                                                   nullptr, PackedOrder());
}

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort2_pack(const mergepath::blocksort_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile_in<2 * BLOCKSORT.nt, BLOCKSORT.vt, false, uint64_t, uint64_t>(
      Packed{p.input}, nullptr, p.count, reinterpret_cast<uint64_t*>(p.out), nullptr, reinterpret_cast<uint64_t*>(mergepath_dynamic_shared), nullptr,
      PackedOrder());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::BLOCKSORT.nt)
mergepath_blocksort_pack_unpack(const mergepath::blocksort_keys_params<mergepath_key_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile<BLOCKSORT.nt, BLOCKSORT.vt, false, uint64_t, uint64_t>(Packed{p.input}, nullptr, p.count,
                                                                                   Unpacked{p.out}, nullptr, PackedOrder());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::SORT.nt)
mergepath_sort_merge_unpack(const mergepath::sort_merge_keys_params<mergepath_key_t, int64_t> p) {
  using namespace mergepath_instance;
  mergepath::mergesort_pass_tile<SORT.nt, SORT.vt, false, uint64_t, uint64_t>(reinterpret_cast<const uint64_t*>(p.input), nullptr, p.count, p.run, p.partitions,
                                                                              Unpacked{p.out}, nullptr, PackedOrder());
}

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::SORT.nt, 5)
mergepath_sort4_merge_unpack(const mergepath::sort_merge_keys_params<mergepath_key_t, mergepath::split4> p) {
  using namespace mergepath_instance;
  mergepath::mergesort4_pass_tile<2 * SORT.nt, SORT.vt, false, uint64_t, uint64_t>(reinterpret_cast<const uint64_t*>(p.input), nullptr, p.count, p.run, p.partitions,
                                                                                   Unpacked{p.out}, nullptr, PackedOrder());
}
#endif

// Sorts of pairs (and indices) whose keys' order fits 32 bits (built-in keys of at most 4
// bytes with less_t or greater_t: `Comparator::POSITION_PACKED`): each key's order bits and its
// position packed into one u64 (`mergepath_pack_positions`) and sorted as u64 keys alone — the
// positions break ties, so that order is the stable one — then the keys unpacked and the values
// gathered by position (`mergepath_unpack_positions_{4,8,16}`): the values move once instead of
// in every pass. Other modules get empty kernels (the host never launches them).
namespace mergepath {
template <class Comp> struct position_packing {
  static constexpr bool supported = false;
};
template <class K> struct position_packing<less_t<K>> {
  static constexpr bool supported = sizeof(K) <= 4, descending = false;
};
template <class K> struct position_packing<greater_t<K>> {
  static constexpr bool supported = sizeof(K) <= 4, descending = true;
};

template <class K, class Comp>
__device__ __forceinline__ void pack_positions_body(const position_pack_params<K>& p) {
  using P = position_packing<Comp>;
  if constexpr (P::supported) {
    using B = order_bits<K>;
    using U = decltype(B::get(K()));
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += (int64_t)gridDim.x * blockDim.x) {
      const U bits = P::descending ? (U)(B::ones ^ B::get(p.keys[i])) : B::get(p.keys[i]);
      p.packed[i] = (uint64_t)bits << 32 | (uint64_t)i;
    }
  }
}

template <class K, class Comp, class V>
__device__ __forceinline__ void unpack_positions_body(const position_unpack_params<K, V>& p) {
  using P = position_packing<Comp>;
  if constexpr (P::supported) {
    using B = order_bits<K>;
    using U = decltype(B::get(K()));
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += (int64_t)gridDim.x * blockDim.x) {
      const uint64_t packed = p.packed[i];
      const U bits = (U)(packed >> 32);
      p.keys_out[i] = B::key(P::descending ? (U)(B::ones ^ bits) : bits);
      p.values_out[i] = p.values[(uint32_t)packed];
    }
  }
}
}  // namespace mergepath

extern "C" __global__ void mergepath_pack_positions(const mergepath::position_pack_params<mergepath_key_t> p) {
  mergepath::pack_positions_body<mergepath_key_t, mergepath_comp_t>(p);
}

#define MERGEPATH_UNPACK_POSITIONS(BYTES, WORD)                                                        \
  extern "C" __global__ void mergepath_unpack_positions_##BYTES(                                       \
      const mergepath::position_unpack_params<mergepath_key_t, WORD> p) {                              \
    mergepath::unpack_positions_body<mergepath_key_t, mergepath_comp_t, WORD>(p);                      \
  }
MERGEPATH_UNPACK_POSITIONS(4, uint32_t)
MERGEPATH_UNPACK_POSITIONS(8, uint2)
MERGEPATH_UNPACK_POSITIONS(16, uint4)
#undef MERGEPATH_UNPACK_POSITIONS

// Entry layer: the `extern "C"` kernels of a sort of keys packed into u64s.
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
  // A sort's pass: uniform frames, no guard.
  const mergepath::mergesort4_frames<uint64_t, uint64_t, false> frames{reinterpret_cast<const uint64_t*>(p.input), nullptr,
                                                                p.count, p.run, nullptr, 0};
  mergepath::mergesort4_pass_tile<2 * SORT.nt, SORT.vt, false, false>(frames, p.partitions, Unpacked{p.out},
                                                                      (uint64_t*)nullptr, nullptr, PackedOrder());
}
#endif

// Entry layer: the `extern "C"` kernels of a pair sort of small keys zipped with 4-byte values.
// Included by ../instantiate.cuh, after the translation unit's mergepath_key_t /
// mergepath_comp_t and the `mergepath_instance` shapes.
#pragma once
#include "../kernel/mergesort.cuh"
#include "../kernel/mergesort4.cuh"

// Built-in keys of at most 4 bytes under `Less` or `Greater` (build.rs defines
// MERGEPATH_ZIPPED_PAIRS for their modules) with 4-byte values (or positions): each pair travels
// zipped into one u64 (thread/codec.cuh's zip_codec), and the sort runs the passes of the
// zipped module (u64 words under zipped_key_less), whose shapes are the u64 ones. Its first
// pass reads the keys and values zipped (`mergepath_blocksort_zip`, or `mergepath_blocksort2_zip`
// on doubled blocks) and its last writes them unzipped (one of the `_unzip` merges, or
// `mergepath_blocksort_zip_unzip` for a sort of one block), so no pass of its own converts them.
// The parameter structs are the pair kernels' with 4-byte values; the zipped side of a pass is
// its key pointer reinterpreted as u64 words.
#ifdef MERGEPATH_ZIPPED_PAIRS
namespace mergepath_instance {
using ZipCodec = mergepath::zip_codec<K, mergepath::zip_descending<Comp>::value>;
using Zipped = mergepath::zip_reader<K, ZipCodec>;
using Unzipped = mergepath::unzip_writer<K, ZipCodec>;
constexpr mergepath::launch_shape ZIP_SORT = mergepath::sort_shape(MERGEPATH_ARCH / 10, 8);
constexpr mergepath::launch_shape ZIP_BLOCKSORT = mergepath::blocksort_shape(MERGEPATH_ARCH / 10, 8);
}  // namespace mergepath_instance

extern "C" __global__ void __launch_bounds__(mergepath_instance::ZIP_BLOCKSORT.nt)
mergepath_blocksort_zip(const mergepath::blocksort_pairs_params<mergepath_key_t, uint32_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile<ZIP_BLOCKSORT.nt, ZIP_BLOCKSORT.vt, false, uint64_t, uint64_t>(
      Zipped{p.input, p.input_vals}, nullptr, p.count, reinterpret_cast<uint64_t*>(p.out), nullptr,
      mergepath::zipped_key_less());
}

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::ZIP_BLOCKSORT.nt)
mergepath_blocksort2_zip(const mergepath::blocksort_pairs_params<mergepath_key_t, uint32_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile_in<2 * ZIP_BLOCKSORT.nt, ZIP_BLOCKSORT.vt, false, uint64_t, uint64_t>(
      Zipped{p.input, p.input_vals}, nullptr, p.count, reinterpret_cast<uint64_t*>(p.out), nullptr,
      reinterpret_cast<uint64_t*>(mergepath_dynamic_shared), nullptr, mergepath::zipped_key_less());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::ZIP_BLOCKSORT.nt)
mergepath_blocksort_zip_unzip(const mergepath::blocksort_pairs_params<mergepath_key_t, uint32_t> p) {
  using namespace mergepath_instance;
  mergepath::blocksort_tile<ZIP_BLOCKSORT.nt, ZIP_BLOCKSORT.vt, false, uint64_t, uint64_t>(
      Zipped{p.input, p.input_vals}, nullptr, p.count, Unzipped{p.out, p.out_vals}, nullptr,
      mergepath::zipped_key_less());
}

extern "C" __global__ void __launch_bounds__(mergepath_instance::ZIP_SORT.nt)
mergepath_sort_merge_unzip(const mergepath::sort_merge_pairs_params<mergepath_key_t, uint32_t, int64_t> p) {
  using namespace mergepath_instance;
  mergepath::mergesort_pass_tile<ZIP_SORT.nt, ZIP_SORT.vt, false, uint64_t, uint64_t>(
      reinterpret_cast<const uint64_t*>(p.input), nullptr, p.count, p.run, p.partitions, Unzipped{p.out, p.out_vals},
      nullptr, mergepath::zipped_key_less());
}

extern "C" __global__ void __launch_bounds__(2 * mergepath_instance::ZIP_SORT.nt, 5)
mergepath_sort4_merge_unzip(const mergepath::sort_merge_pairs_params<mergepath_key_t, uint32_t, mergepath::split4> p) {
  using namespace mergepath_instance;
  // A sort's pass: uniform frames, no guard.
  const mergepath::mergesort4_frames<uint64_t, uint64_t, false> frames{reinterpret_cast<const uint64_t*>(p.input),
                                                                       nullptr, p.count, p.run, nullptr, 0};
  mergepath::mergesort4_pass_tile<2 * ZIP_SORT.nt, ZIP_SORT.vt, false, false>(
      frames, p.partitions, Unzipped{p.out, p.out_vals}, (uint64_t*)nullptr, nullptr, mergepath::zipped_key_less());
}
#endif

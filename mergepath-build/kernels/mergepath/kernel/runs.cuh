// Kernel layer: the runs of equal keys in a sequence (equal by the comparator: neither orders
// before the other), found in one pass: each run's first position, compacted in order. The base
// of unique, run-length encoding and reduce-by-key (the runs as the segments of a segmented
// reduction).
#pragma once
#include "../cta/scan.cuh"
#include "../thread/keys.cuh"

namespace mergepath {

// One tile of NT * VT keys: the positions of the tile's run heads (a key unequal to the one
// before it, and key 0) written to starts[] (where not null) after those of all earlier tiles
// (cta_tile_offset), and where `heads_out` is not null the head keys to heads_out[] alike; by the last tile the run
// count to *runs. Both go out through shared memory, in coalesced stores. Tiles take their
// indices from a ticket (tile_states[num_tiles]); tile_states: num_tiles + 1 zeroed slots.
template <int NT, int VT, class I, class K, class Comp>
__device__ __forceinline__ void run_starts_tile(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states,
                                                I* starts, K* heads_out, uint64_t* runs, Comp comp) {
  static_assert(VT <= 32, "a thread's heads are one 32-bit mask");
  constexpr int NV = NT * VT;
  __shared__ K tile_keys[NV + 1];  // the key before the tile's first (tile 0: unused), then the tile's
  __shared__ int head_positions[NV];
  __shared__ scan_shared<NT> scan;
  __shared__ int64_t tile_index;
  if (threadIdx.x == 0) tile_index = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
  __syncthreads();
  const int64_t tile = tile_index, base = tile * NV;
  const int n = count - base < NV ? (int)(count - base) : NV;
  for (int i = (int)threadIdx.x; i <= n; i += NT)
    if (i > 0 || base > 0) tile_keys[i] = keys[base + i - 1];
  __syncthreads();
  const int first = VT * (int)threadIdx.x;
  unsigned heads = 0;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int j = first + i;
    if (j < n) {
      const K& before = tile_keys[j];
      const K& key = tile_keys[j + 1];
      if ((base == 0 && j == 0) || comp(before, key) || comp(key, before)) heads |= 1u << i;
    }
  }
  int tile_count;
  int at = cta_exclusive_scan<NT>(__popc(heads), tile_count, scan);
#pragma unroll
  for (int i = 0; i < VT; ++i)
    if (heads >> i & 1) head_positions[at++] = first + i;
  const int64_t offset = cta_tile_offset<NT>(tile, tile_count, tile_states, scan);  // barriers around
  for (int k = (int)threadIdx.x; k < tile_count; k += NT) {
    const int position = head_positions[k];
    if (starts) starts[offset + k] = (I)(base + position);
    if (heads_out) heads_out[offset + k] = tile_keys[position + 1];
  }
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(offset + tile_count);
}

// lengths[j] = the length of run j (`runs` runs over `count` keys, starts from run_starts_tile),
// one thread each.
template <class I>
__device__ __forceinline__ void run_lengths_body(const I* starts, int64_t runs, int64_t count, I* lengths) {
  const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < runs) lengths[j] = (I)((j + 1 < runs ? (int64_t)starts[j + 1] : count) - (int64_t)starts[j]);
}

}  // namespace mergepath

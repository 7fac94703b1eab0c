// CTA layer: scans. A CTA-wide exclusive scan of one count per thread, and the single-pass
// scan of per-tile counts across a grid (decoupled look-back, Merrill & Garland 2016) that lets
// a kernel whose tiles output variable numbers of items write them compacted in one pass.
#pragma once
#include <stdint.h>

namespace mergepath {

constexpr int WARP_THREADS = 32;

// Shared memory of cta_exclusive_scan and cta_tile_offset.
template <int NT> struct scan_shared {
  int64_t warp_totals[NT / WARP_THREADS];
  int64_t tile_offset;
};

// Exclusive prefix sum of `value` (int or int64_t) over the CTA's threads in thread order;
// `total` gets the sum of all. Called by all NT threads (a multiple of 32); starts and ends
// with a barrier, so `shared` may be reused right before and after.
template <int NT, class T>
__device__ __forceinline__ T cta_exclusive_scan(T value, T& total, scan_shared<NT>& shared) {
  static_assert(NT % WARP_THREADS == 0 && NT / WARP_THREADS <= WARP_THREADS, "NT: 32 to 1024 threads, whole warps");
  constexpr int WARPS = NT / WARP_THREADS;
  const int lane = (int)threadIdx.x % WARP_THREADS, warp = (int)threadIdx.x / WARP_THREADS;
  T inclusive = value;
#pragma unroll
  for (int d = 1; d < WARP_THREADS; d *= 2) {
    const T x = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += x;
  }
  __syncthreads();
  if (lane == WARP_THREADS - 1) shared.warp_totals[warp] = inclusive;
  __syncthreads();
  T warp_offset = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    const T t = (T)shared.warp_totals[w];
    if (w < warp) warp_offset += t;
    total += t;
  }
  __syncthreads();
  return warp_offset + inclusive - value;
}

// The state of one tile in a single-pass scan of tile counts: 0 while unknown, else a flag in
// the top two bits and a count below (counts < 2^62).
// (Enumerators, not variables: usable in device code without a device definition.)
enum tile_state : uint64_t {
  TILE_AGGREGATE = 1ull << 62,  // the tile's own count is known
  TILE_PREFIX = 2ull << 62,     // the sum of counts of tiles 0..tile is known
  TILE_COUNT_MASK = (1ull << 62) - 1,
};

// The sum of the counts of tiles 0 .. tile - 1, returned to every thread of the CTA, given this
// tile's `count` (the same in every thread). `states[0 .. tiles)` must be zero before the
// kernel starts, and tiles must take their indices in launch order (a ticket from an atomic
// counter, not blockIdx), so every tile waited on is running or done. The first warp publishes
// the tile's count, then looks back 32 tiles at a time, summing counts until a tile with a
// known prefix, and publishes the tile's inclusive prefix. Starts and ends with a barrier.
// (Measured with benches/tune/sets_shapes.cu: wider windows, 64 to 256 tiles per round, and
// sleeping between polls were no faster; the time goes to waiting for the nearest tiles.)
template <int NT>
__device__ __forceinline__ int64_t cta_tile_offset(int64_t tile, int64_t count, uint64_t* states,
                                                   scan_shared<NT>& shared) {
  volatile uint64_t* vstates = states;
  __syncthreads();
  if (threadIdx.x < WARP_THREADS) {
    const int lane = (int)threadIdx.x;
    if (lane == 0) vstates[tile] = (tile == 0 ? TILE_PREFIX : TILE_AGGREGATE) | (uint64_t)count;
    int64_t prefix = 0;
    for (int64_t last = tile - 1; last >= 0; last -= WARP_THREADS) {
      const int64_t pred = last - lane;
      // Past tile 0 there is nothing to add: a known prefix of 0.
      uint64_t s = pred >= 0 ? vstates[pred] : (uint64_t)TILE_PREFIX;
      while (__any_sync(0xffffffffu, s == 0)) {
        if (s == 0) s = vstates[pred];
      }
      const unsigned known = __ballot_sync(0xffffffffu, (s & TILE_PREFIX) != 0);
      // Sum from the nearest tile with a known prefix (lowest such lane) up to tile - 1.
      const int stop = known ? __ffs(known) - 1 : WARP_THREADS - 1;
      int64_t sum = lane <= stop ? (int64_t)(s & TILE_COUNT_MASK) : 0;
#pragma unroll
      for (int d = WARP_THREADS / 2; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
      prefix += sum;
      if (known) break;
    }
    if (lane == 0) {
      if (tile > 0) vstates[tile] = TILE_PREFIX | (uint64_t)(prefix + count);
      shared.tile_offset = prefix;
    }
  }
  __syncthreads();
  return shared.tile_offset;
}

}  // namespace mergepath

// CTA layer: scans. A CTA-wide exclusive scan of one count per thread, a CTA-wide segmented
// fold of one partial fold per thread, and the single-pass scan of per-tile counts across a
// grid (decoupled look-back, Merrill & Garland 2016) that lets a kernel whose tiles output
// variable numbers of items write them compacted in one pass.
#pragma once
#include <stdint.h>
#include <string.h>

namespace mergepath {

constexpr int WARP_THREADS = 32;

// __shfl_sync / __shfl_up_sync of a value of any trivially copyable type, a 32-bit word at a time.
template <bool Up, class T>
__device__ __forceinline__ T warp_shuffle(const T& value, int lane_or_delta) {
  constexpr int WORDS = (int)((sizeof(T) + 3) / 4);
  unsigned words[WORDS] = {};
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < WORDS; ++i)
    words[i] = Up ? __shfl_up_sync(0xffffffffu, words[i], lane_or_delta) : __shfl_sync(0xffffffffu, words[i], lane_or_delta);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

// Shared memory of cta_exclusive_scan and cta_tile_offset.
template <int NT> struct scan_shared {
  int64_t warp_totals[NT / WARP_THREADS];
  int64_t tile_offset;
  int64_t last_before;  // cta_tile_offset with last positions: the last one before the tile
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

// The fold of a run of items by an associative operation: `any` where the run has an item,
// then `value` is their fold.
template <class K>
struct segmented_fold {
  K value;
  bool any;
  // This run's fold followed by item v.
  template <class Op>
  __device__ __forceinline__ void add(const K& v, Op op) {
    value = any ? op(value, v) : v;
    any = true;
  }
  // The fold of this run followed by the run `next`.
  template <class Op>
  __device__ __forceinline__ segmented_fold then(const segmented_fold& next, Op op) const {
    if (!next.any) return *this;
    if (!any) return next;
    return segmented_fold{op(value, next.value), true};
  }
};

// An element of a segmented fold over threads: a thread's fold since its last segment start,
// and whether it has one (then the fold of the threads before it does not reach past it).
template <class K>
struct segmented_scan_item {
  segmented_fold<K> fold;
  bool resets;
  template <class Op>
  __device__ __forceinline__ segmented_scan_item then(const segmented_scan_item& next, Op op) const {
    return segmented_scan_item{next.resets ? next.fold : fold.then(next.fold, op), resets || next.resets};
  }
};

// Shared memory of cta_segmented_fold.
template <int NT, class K> struct segmented_fold_shared {
  segmented_scan_item<K> items[NT];
};

// The segmented fold over the CTA's threads in thread order of (`own`, `resets`): returns the
// elements of the threads before this one combined (their fold since the last that resets, and
// whether one does), `total` gets all of them combined. Called by all NT threads; starts and
// ends with a barrier, so `shared` may be reused right before and after. (Hillis-Steele in
// shared memory: log2 NT rounds, for any K.)
template <int NT, class K, class Op>
__device__ __forceinline__ segmented_scan_item<K> cta_segmented_fold(segmented_fold<K> own, bool resets,
                                                                     segmented_scan_item<K>& total,
                                                                     segmented_fold_shared<NT, K>& shared, Op op) {
  const int t = (int)threadIdx.x;
  segmented_scan_item<K> x{own, resets};
  __syncthreads();
  shared.items[t] = x;
  __syncthreads();
  for (int d = 1; d < NT; d *= 2) {
    segmented_scan_item<K> before;
    if (t >= d) before = shared.items[t - d];
    __syncthreads();
    if (t >= d) {
      x = before.then(x, op);
      shared.items[t] = x;
    }
    __syncthreads();
  }
  total = shared.items[NT - 1];
  const segmented_scan_item<K> exclusive = t > 0 ? shared.items[t - 1] : segmented_scan_item<K>{segmented_fold<K>{}, false};
  __syncthreads();
  return exclusive;
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
//
// Where `carried` is given, the look-back also carries a position: the last of the items the
// tiles count (run-length encoding: the last run head before the tile, whose length the tile
// can then write). carried->lasts has a slot a tile; carried->own, in shared memory, is this
// tile's last position (read after the first barrier; unused where `count` is 0). A tile's slot
// holds its own last position once its state says its count (when that is not 0), and the
// last of tiles 0..tile once its state says its prefix; shared.last_before gets the last
// position before this tile (-1: none).
struct carried_last {
  int64_t* lasts;
  const int64_t* own;
};

// One thread: publishes a tile's `count` (a known prefix for tile 0), its last position first
// where `carried` is given (cta_tile_offset's).
__device__ __forceinline__ void publish_tile_count(int64_t tile, int64_t count, uint64_t* states, const carried_last* carried) {
  if (carried && count > 0) {
    static_cast<volatile int64_t*>(carried->lasts)[tile] = *carried->own;
    __threadfence();  // the slot before the state that says it holds
  }
  static_cast<volatile uint64_t*>(states)[tile] = (tile == 0 ? TILE_PREFIX : TILE_AGGREGATE) | (uint64_t)count;
}

template <int NT>
__device__ __forceinline__ int64_t cta_tile_offset(int64_t tile, int64_t count, uint64_t* states,
                                                   scan_shared<NT>& shared, const carried_last* carried = nullptr) {
  volatile uint64_t* vstates = states;
  __syncthreads();
  if (threadIdx.x < WARP_THREADS) {
    const int lane = (int)threadIdx.x;
    volatile int64_t* vlasts = carried ? carried->lasts : nullptr;
    if (lane == 0) publish_tile_count(tile, count, states, carried);
    int64_t prefix = 0, last_before = -1;
    bool last_known = !vlasts;
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
      if (!last_known) {
        // The nearest tile up to `stop` that counts an item holds the last position.
        const unsigned holds = __ballot_sync(0xffffffffu, lane <= stop && (s & TILE_COUNT_MASK) != 0);
        if (holds) {
          __threadfence();  // the slot read after the state that says it holds
          const int nearest = __ffs(holds) - 1;
          last_before = __shfl_sync(0xffffffffu, lane == nearest ? (int64_t)vlasts[pred] : (int64_t)0, nearest);
          last_known = true;
        }
      }
      int64_t sum = lane <= stop ? (int64_t)(s & TILE_COUNT_MASK) : 0;
#pragma unroll
      for (int d = WARP_THREADS / 2; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
      prefix += sum;
      if (known) break;
    }
    if (lane == 0) {
      if (tile > 0) {
        if (vlasts && count == 0) {
          vlasts[tile] = last_before;
          __threadfence();
        }
        vstates[tile] = TILE_PREFIX | (uint64_t)(prefix + count);
      }
      shared.tile_offset = prefix;
      shared.last_before = last_before;
    }
  }
  __syncthreads();
  return shared.tile_offset;
}

}  // namespace mergepath

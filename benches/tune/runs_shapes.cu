// The runs-finding kernel (unique, run-length encoding, reduce-by-key) measured alone: the
// library's tile (`library`: keys bulk-copied into shared memory, each thread's VT keys in a
// row, launch bounds for as many tiles an SM as shared memory holds, tiles of few heads
// deferred to a second kernel; `library_waiting` without that) against tiles that keep
// their keys in registers, warp-striped (lane l of a warp holds items i * 32 + l of the warp's
// 32 * VT keys): a key's predecessor comes by a warp shuffle, a warp's heads by ballots, and
// each store instruction writes its lanes' heads to consecutive addresses, so no shared memory
// holds keys. `striped` takes tiles by ticket, `by_block` by block index, `pipelined` runs
// persistent CTAs that load their next tile before the current one's look-back, `bulk`
// persistent CTAs whose next tiles' keys arrive in shared memory by bulk copies (and
// `bulk_floor` the same with no look-back); `two_pass` and `two_pass_sparse` count each tile's
// heads in a first pass and compact them after a scan of the counts, with no look-back;
// `overlapped` looks back in a warp of its own beside the loads; `striped_shared` reads the
// library's staged keys warp-striped; `unpositioned` and `worded` keep its heads without a
// positions array; `timed` and `overlapped_timed` stamp each tile's phases
// (RUNS_SHAPES_LOOKBACK=1 runs only these, with the library's tile in several shapes);
// `deferred` gives up its look-back after some polls, or at once (RUNS_SHAPES_DEFERRED=1 runs
// only these and the library's, also on runs of mixed lengths); `readback` times the library's
// call with its run count read back several ways (RUNS_SHAPES_READBACK=1 runs only these). CUB's
// DeviceSelect::Unique in the same program. BENCHMARKS.md ("Tried and dropped: the
// runs-finding kernel with its keys in registers", "The runs-finding tile fed by bulk
// copies", "The runs-finding tile staged in shared memory") has the figures. Build and run
// on the GPU machine, from the repository root, with the generated headers in .gpu/include
// (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/runs_shapes.cu -o /tmp/runs_shapes && /tmp/runs_shapes [log2_n ...]
// Inputs: n sorted u32 keys in runs of 1 to 32 or of 1 or 2 (benches/cub/runs.cu's). Prints
// TSV: variant op nt vt n ms pct_of_copy ok, where op is `unique` (the runs' first keys) or
// `starts` (their first keys and positions, as run-length encoding and reduce-by-key keep
// them), ms the kernel alone (the states' memset included, no count read back; the two-pass
// variants' three launches, with the first pass alone after `counted`), pct the copy of the
// same bytes (keys read, outputs written) as a share of this time.
#include <cub/cub.cuh>
#include <functional>
#include <string>
#include <thrust/iterator/transform_iterator.h>
#include <mergepath/kernel/runs.cuh>
#include "timing.cuh"

using K = uint32_t;
using Comp = mergepath::less_t<K>;

// The library's tiles (run_starts_tile; then where `deferral` has slots, run_deferred_tiles
// over the tiles that left their heads there).
template <int NT, int VT>
__global__ void __launch_bounds__(NT, mergepath::run_starts_ctas_per_sm<NT, VT, K>(900))
library_tile(const K* keys, int64_t count, int64_t tiles, uint64_t* states, uint32_t* starts, K* heads, uint64_t* runs,
             mergepath::run_deferral<K> deferral, uint64_t* runs_host) {
  mergepath::run_starts_tile<NT, VT>(keys, count, tiles, states, starts, heads, mergepath::run_boundaries_out<uint32_t>{nullptr, nullptr},
                                     mergepath::run_lengths_out<uint32_t>{nullptr, nullptr}, deferral, mergepath::reported_count{runs, runs_host},
                                     Comp());
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT)
library_deferred(int64_t count, int64_t tiles, const uint64_t* states, uint32_t* starts, K* heads, uint64_t* runs,
                 mergepath::run_deferral<K> deferral, uint64_t* runs_host) {
  mergepath::run_deferred_tiles<NT, VT>(count, tiles, states, starts, heads, mergepath::run_boundaries_out<uint32_t>{nullptr, nullptr},
                                        mergepath::run_lengths_out<uint32_t>{nullptr, nullptr}, deferral,
                                        mergepath::reported_count{runs, runs_host});
}

// `key` shuffled word by word by `shuffle(word)` (every lane calls).
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_key(const T& key, Shuffle shuffle) {
  constexpr int WORDS = (sizeof(T) + 3) / 4;
  union { T key; unsigned w[WORDS]; } u;
  u.key = key;
#pragma unroll
  for (int i = 0; i < WORDS; ++i) u.w[i] = shuffle(u.w[i]);
  return u.key;
}

// `key` of lane `src` of the warp.
template <class T>
__device__ __forceinline__ T shfl_key(const T& key, int src) {
  return shuffle_key(key, [&](unsigned w) { return __shfl_sync(0xffffffffu, w, src); });
}

// `key` of the lane `delta` below (a lane below delta gets its own).
template <class T>
__device__ __forceinline__ T shfl_up_key(const T& key, int delta) {
  return shuffle_key(key, [&](unsigned w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}

// Loads a warp-striped tile's keys (those below `count`; `first`: the warp's first key's
// index) and the key before the warp's first.
template <int VT, class T>
__device__ __forceinline__ void striped_load(const T* keys, int64_t first, int64_t count, T (&k)[VT], T& before) {
  const int lane = (int)threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int64_t j = first + i * 32 + lane;
    if (j < count) k[i] = keys[j];
  }
  before = k[0];
  if (lane == 0 && first > 0 && first <= count) before = keys[first - 1];
}

// The boundary words of a warp's striped keys, row i's handed to on_row(i, mask) (a head: a
// key unequal to the one before it, and key 0); returns the warp's heads.
template <int VT, class T, class C, class OnRow>
__device__ __forceinline__ int striped_rows(const T (&k)[VT], const T& before, int64_t first, int64_t count, C comp, OnRow on_row) {
  const int lane = (int)threadIdx.x % 32;
  int warp_count = 0;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    T prev = shfl_up_key(k[i], 1);
    const T last = shfl_key(i > 0 ? k[i - 1] : before, i > 0 ? 31 : 0);
    if (lane == 0) prev = last;
    const int64_t j = first + i * 32 + lane;
    const bool head = j < count && (j == 0 || comp(prev, k[i]) || comp(k[i], prev));
    const unsigned mask = __ballot_sync(0xffffffffu, head);
    on_row(i, mask);
    warp_count += __popc(mask);
  }
  return warp_count;
}

// striped_rows' words in masks[i].
template <int VT, class T, class C>
__device__ __forceinline__ int striped_masks(const T (&k)[VT], const T& before, int64_t first, int64_t count, C comp,
                                             unsigned (&masks)[VT]) {
  return striped_rows<VT>(k, before, first, count, comp, [&](int i, unsigned mask) { masks[i] = mask; });
}

// striped_rows' heads as the lane's bits in h (bit i: its key of row i).
template <int VT, class T, class C>
__device__ __forceinline__ int striped_head_bits(const T (&k)[VT], const T& before, int64_t first, int64_t count, C comp, unsigned& h) {
  const int lane = (int)threadIdx.x % 32;
  h = 0;
  return striped_rows<VT>(k, before, first, count, comp, [&](int i, unsigned mask) { h |= (mask >> lane & 1u) << i; });
}

// The CTA's heads from each warp's count (through shared memory, a barrier between);
// warp_offset gets the warps' before this one.
template <int NT>
__device__ __forceinline__ int cta_count(int warp_count, int* warp_counts, int& warp_offset) {
  const int warp = (int)threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) warp_counts[warp] = warp_count;
  __syncthreads();
  int total = 0;
  warp_offset = 0;
#pragma unroll
  for (int w = 0; w < NT / 32; ++w) {
    const int c = warp_counts[w];
    warp_offset += w < warp ? c : 0;
    total += c;
  }
  return total;
}

// A warp's heads (striped_masks) stored from output index `at` on: their keys, and their
// positions where `starts` is not null; each store instruction to consecutive addresses.
template <int VT, class I, class T>
__device__ __forceinline__ void store_striped_heads(const unsigned (&masks)[VT], const T (&k)[VT], int64_t at, int64_t first,
                                                    T* heads, I* starts) {
  const int lane = (int)threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (masks[i] >> lane & 1) {
      const int64_t o = at + __popc(masks[i] & below);
      heads[o] = k[i];
      if (starts) starts[o] = (I)(first + i * 32 + lane);
    }
    at += __popc(masks[i]);
  }
}

// store_striped_heads from the lanes' head bits, each head's key loaded again (from L1 or L2:
// the tile read it moments before), so no key stays in a register across the look-back.
template <int VT, class I, class T>
__device__ __forceinline__ void store_reloaded_heads(unsigned h, const T* keys, int64_t at, int64_t first, T* heads, I* starts) {
  const int lane = (int)threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const unsigned mask = __ballot_sync(0xffffffffu, h >> i & 1u);
    if (h >> i & 1u) {
      const int64_t o = at + __popc(mask & below), j = first + i * 32 + lane;
      heads[o] = keys[j];
      if (starts) starts[o] = (I)j;
    }
    at += __popc(mask);
  }
}

// A warp-striped tile's steps on keys in registers: heads found by shuffles and ballots, the
// warps' counts summed through shared memory, `between()` called (after a barrier), the
// earlier tiles' counts summed (cta_tile_offset, barriers around), the heads' keys (and
// positions, where `starts` is not null) stored. Returns the run count up to the tile's end.
template <int NT, int VT, class I, class T, class C, class Between>
__device__ __forceinline__ int64_t striped_heads(const T (&k)[VT], const T& before, int64_t first, int64_t count, int64_t tile,
                                                 uint64_t* tile_states, I* starts, T* heads, int* warp_counts,
                                                 mergepath::scan_shared<NT>& scan, C comp, Between between) {
  unsigned masks[VT];
  const int warp_count = striped_masks<VT>(k, before, first, count, comp, masks);
  int warp_offset;
  const int tile_count = cta_count<NT>(warp_count, warp_counts, warp_offset);
  between();
  const int64_t tile_offset = mergepath::cta_tile_offset<NT>(tile, tile_count, tile_states, scan);
  store_striped_heads<VT>(masks, k, tile_offset + warp_offset, first, heads, starts);
  return tile_offset + tile_count;
}

// One CTA per tile of NT * VT keys, tiles taken by ticket (`Ticket`), else by blockIdx.x
// (CTAs start in index order, so every tile's predecessors are running or done).
template <int NT, int VT, bool Ticket = true>
__global__ void __launch_bounds__(NT)
striped(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ int warp_counts[NT / 32];
  __shared__ int64_t tile_index;
  if (Ticket) {
    if (threadIdx.x == 0) tile_index = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
    __syncthreads();
  }
  const int64_t tile = Ticket ? tile_index : (int64_t)blockIdx.x, first = tile * NT * VT + (int64_t)threadIdx.x / 32 * 32 * VT;
  K k[VT], before;
  striped_load<VT>(keys, first, count, k, before);
  const int64_t end = striped_heads<NT, VT>(k, before, first, count, tile, tile_states, starts, heads, warp_counts, scan, Comp(), [] {});
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)end;
}

// Where a look-back tile's time goes, and a tile whose look-back runs beside its loads.
// `timed` is `striped` (by ticket) with its look-back written out (`exclusive_prefix`,
// cta_tile_offset's loop, W states a lane a window); `overlapped` adds a warp to the CTA that
// looks back from the tile's start, while the other warps load their keys and count their
// heads: they publish the tile's count (an aggregate, or its inclusive prefix where the look-back
// is already done) as soon as they know it, and the tile's prefix once both are done. With
// records, each tile's phases are stamped (clock64: start, ticket taken, count known, offset
// known, stores issued) with its look-back's windows, polls of a state still unknown, and how
// far back the prefix it found was.
struct tile_record {
  long long clocks[5];
  unsigned long long start_ns;
  int windows, polls, distance;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The sum of the counts of tiles 0 .. tile - 1, by one warp (every lane gets it), without
// publishing anything: windows of 32 * W tiles back from tile - 1 (lane l reads tiles
// last - l - 32 j), each read until no state is unknown, summed down to the nearest known
// prefix; with `patience` not -1, -1 once a window has been polled that many times.
template <int W>
__device__ __forceinline__ int64_t exclusive_prefix(int64_t tile, const uint64_t* states, tile_record* record, int patience = -1) {
  using namespace mergepath;
  const volatile uint64_t* vstates = states;
  const int lane = (int)threadIdx.x % 32;
  int64_t prefix = 0, distance = 0;
  int windows = 0, polls = 0;
  for (int64_t last = tile - 1; last >= 0; last -= 32 * W) {
    uint64_t s[W];
    bool unknown = false;
#pragma unroll
    for (int j = 0; j < W; ++j) {
      const int64_t pred = last - lane - 32 * j;
      s[j] = pred >= 0 ? vstates[pred] : (uint64_t)TILE_PREFIX;  // past tile 0: a known prefix of 0
    }
    ++windows;
    for (int window_polls = 0;; ++window_polls) {
#pragma unroll
      for (int j = 0; j < W; ++j) unknown |= s[j] == 0;
      if (!__any_sync(0xffffffffu, unknown)) break;
      if (window_polls == patience) return -1;
      ++polls;
      unknown = false;
#pragma unroll
      for (int j = 0; j < W; ++j)
        if (s[j] == 0) s[j] = vstates[last - lane - 32 * j];
    }
    // The nearest known prefix: the lowest (row j, lane) with one; sum from it up to tile - 1.
    int stop_row = W, stop_lane = 31;
#pragma unroll
    for (int j = W - 1; j >= 0; --j) {
      const unsigned known = __ballot_sync(0xffffffffu, (s[j] & TILE_PREFIX) != 0);
      if (known) stop_row = j, stop_lane = __ffs(known) - 1;
    }
    int64_t sum = 0;
#pragma unroll
    for (int j = 0; j < W; ++j)
      if (j < stop_row || (j == stop_row && lane <= stop_lane)) sum += (int64_t)(s[j] & TILE_COUNT_MASK);
#pragma unroll
    for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
    prefix += sum;
    if (stop_row < W) {
      distance = tile - (last - stop_lane - 32 * stop_row);
      break;
    }
  }
  if (record && lane == 0) {
    record->windows = windows;
    record->polls = polls;
    record->distance = (int)distance;
  }
  return prefix;
}

// cta_tile_offset by exclusive_prefix<W> (warp 0 looks back after publishing the count).
template <int NT, int W>
__device__ __forceinline__ int64_t timed_tile_offset(int64_t tile, int64_t count, uint64_t* states, mergepath::scan_shared<NT>& shared,
                                                     tile_record* record) {
  using namespace mergepath;
  volatile uint64_t* vstates = states;
  __syncthreads();
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) vstates[tile] = (tile == 0 ? TILE_PREFIX : TILE_AGGREGATE) | (uint64_t)count;
    const int64_t prefix = exclusive_prefix<W>(tile, states, record);
    if (threadIdx.x == 0) {
      if (tile > 0) vstates[tile] = TILE_PREFIX | (uint64_t)(prefix + count);
      shared.tile_offset = prefix;
    }
  }
  __syncthreads();
  return shared.tile_offset;
}

template <int NT, int VT, int W>
__device__ __forceinline__ void timed_tile(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts,
                                           K* heads, uint64_t* runs, tile_record* records) {
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ int warp_counts[NT / 32];
  __shared__ int64_t tile_index;
  long long clocks[5];
  clocks[0] = clock64();
  const unsigned long long start_ns = global_ns();
  if (threadIdx.x == 0) tile_index = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
  __syncthreads();
  clocks[1] = clock64();
  const int64_t tile = tile_index, first = tile * NT * VT + (int64_t)threadIdx.x / 32 * 32 * VT;
  K k[VT], before;
  striped_load<VT>(keys, first, count, k, before);
  unsigned masks[VT];
  const int warp_count = striped_masks<VT>(k, before, first, count, Comp(), masks);
  int warp_offset;
  const int tile_count = cta_count<NT>(warp_count, warp_counts, warp_offset);
  clocks[2] = clock64();
  tile_record* record = records && threadIdx.x == 0 ? records + tile : nullptr;
  const int64_t tile_offset = timed_tile_offset<NT, W>(tile, tile_count, tile_states, scan, record);
  clocks[3] = clock64();
  store_striped_heads<VT>(masks, k, tile_offset + warp_offset, first, heads, starts);
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(tile_offset + tile_count);
  clocks[4] = clock64();
  if (record) {
    for (int i = 0; i < 5; ++i) record->clocks[i] = clocks[i];
    record->start_ns = start_ns;
  }
}

// The NT counting threads' barrier (named barrier 1; the look-back warp is not in it).
template <int NT>
__device__ __forceinline__ void counting_barrier() {
  asm volatile("bar.sync 1, %0;" ::"r"(NT) : "memory");
}

// NT counting threads and one look-back warp (the last): blockDim.x = NT + 32.
template <int NT, int VT, int W, bool Ticket>
__device__ __forceinline__ void overlapped_tile(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts,
                                                K* heads, uint64_t* runs, tile_record* records) {
  using namespace mergepath;
  __shared__ int warp_counts[NT / 32];
  __shared__ int64_t tile_index;
  __shared__ volatile int64_t tile_prefix;  // read by thread 0 once prefix_known says it holds
  __shared__ volatile int prefix_known;
  volatile uint64_t* vstates = tile_states;
  long long clocks[5];
  clocks[0] = clock64();
  const unsigned long long start_ns = global_ns();
  if (threadIdx.x == 0) {
    prefix_known = 0;
    if (Ticket) tile_index = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
  }
  __syncthreads();
  clocks[1] = clock64();
  const int64_t tile = Ticket ? tile_index : (int64_t)blockIdx.x;
  tile_record* record = records && (threadIdx.x == 0 || threadIdx.x == NT) ? records + tile : nullptr;
  unsigned h = 0;
  int warp_offset = 0, tile_count = 0;
  bool published_prefix = false;
  const int64_t first = tile * NT * VT + (int64_t)threadIdx.x / 32 * 32 * VT;
  if (threadIdx.x >= NT) {
    const int64_t prefix = exclusive_prefix<W>(tile, tile_states, record);
    if (threadIdx.x == NT) {
      tile_prefix = prefix;
      __threadfence_block();
      prefix_known = 1;
    }
  } else {
    K k[VT], before;
    striped_load<VT>(keys, first, count, k, before);
    const int warp_count = striped_head_bits<VT>(k, before, first, count, Comp(), h);
    if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32] = warp_count;
    counting_barrier<NT>();
#pragma unroll
    for (int w = 0; w < NT / 32; ++w) {
      const int c = warp_counts[w];
      warp_offset += w < (int)threadIdx.x / 32 ? c : 0;
      tile_count += c;
    }
    if (threadIdx.x == 0) {
      published_prefix = tile == 0 || prefix_known;
      vstates[tile] = (published_prefix ? TILE_PREFIX : TILE_AGGREGATE) | (uint64_t)(tile_count + (published_prefix ? tile_prefix : 0));
    }
    clocks[2] = clock64();
  }
  __syncthreads();
  const int64_t tile_offset = tile_prefix;
  if (threadIdx.x == 0 && !published_prefix) vstates[tile] = TILE_PREFIX | (uint64_t)(tile_offset + tile_count);
  clocks[3] = clock64();
  if (threadIdx.x < NT) store_reloaded_heads<VT>(h, keys, tile_offset + warp_offset, first, heads, starts);
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(tile_offset + tile_count);
  clocks[4] = clock64();
  if (record && threadIdx.x == 0) {
    for (int i = 0; i < 5; ++i) record->clocks[i] = clocks[i];
    record->start_ns = start_ns;
  }
}

// MB: CTAs an SM the registers must allow (launch bounds).
template <int NT, int VT, int W, bool Ticket, int MB>
__global__ void __launch_bounds__(NT + 32, MB)
overlapped_timed(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs,
                 tile_record* records) {
  overlapped_tile<NT, VT, W, Ticket>(keys, count, num_tiles, tile_states, starts, heads, runs, records);
}

template <int NT, int VT, int W, bool Ticket, int MB>
__global__ void __launch_bounds__(NT + 32, MB)
overlapped(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  overlapped_tile<NT, VT, W, Ticket>(keys, count, num_tiles, tile_states, starts, heads, runs, nullptr);
}

template <int NT, int VT, int W>
__global__ void __launch_bounds__(NT)
timed(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs,
      tile_record* records) {
  timed_tile<NT, VT, W>(keys, count, num_tiles, tile_states, starts, heads, runs, records);
}

template <int NT, int VT, int W>
__global__ void __launch_bounds__(NT)
looked_back(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  timed_tile<NT, VT, W>(keys, count, num_tiles, tile_states, starts, heads, runs, nullptr);
}

// Persistent CTAs (as many as are resident), each taking tiles by ticket until none is left
// and loading its next tile's keys before the current one's look-back, so the loads are in
// flight while it waits.
template <int NT, int VT>
__global__ void __launch_bounds__(NT)
pipelined(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ int warp_counts[NT / 32];
  __shared__ int64_t tickets[2];
  const int64_t warp_first = (int64_t)threadIdx.x / 32 * 32 * VT;
  auto take = [&](int slot) {
    if (threadIdx.x == 0) tickets[slot] = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
  };
  take(0);
  __syncthreads();
  int64_t tile = tickets[0];
  K k[VT], before;
  if (tile < num_tiles) striped_load<VT>(keys, tile * NT * VT + warp_first, count, k, before);
  for (int slot = 1; tile < num_tiles; slot ^= 1) {
    take(slot);  // read after striped_heads' first barrier; written again two rounds on
    K next[VT], next_before;
    int64_t following = 0;
    const int64_t first = tile * NT * VT + warp_first;
    const int64_t end = striped_heads<NT, VT>(k, before, first, count, tile, tile_states, starts, heads, warp_counts, scan, Comp(), [&] {
      following = tickets[slot];
      if (following < num_tiles) striped_load<VT>(keys, following * NT * VT + warp_first, count, next, next_before);
    });
    if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)end;
#pragma unroll
    for (int i = 0; i < VT; ++i) k[i] = next[i];
    before = next_before;
    tile = following;
  }
}

// Two passes and no look-back. `counted`: each tile's keys warp-striped in registers, their
// heads by ballots (row i of a warp's ballots is the boundary word of its keys 32i .. 32i + 31),
// the words stored and the tile's head count; no tile waits on another. The counts are then
// scanned (CUB's DeviceScan, a few microseconds), and `compacted` stores each tile's heads at its
// offset: `Sparse` from the words, loading only the heads' keys, else from the keys read again.
template <int NT, int VT>
__global__ void __launch_bounds__(NT) counted(const K* keys, int64_t count, unsigned* bits, uint32_t* tile_counts) {
  __shared__ int warp_counts[NT / 32];
  const int lane = (int)threadIdx.x % 32;
  const int64_t first = (int64_t)blockIdx.x * NT * VT + (int64_t)threadIdx.x / 32 * 32 * VT;
  K k[VT], before;
  striped_load<VT>(keys, first, count, k, before);
  unsigned masks[VT];
  const int warp_count = striped_masks<VT>(k, before, first, count, Comp(), masks);
#pragma unroll
  for (int i = 0; i < VT; ++i)
    if (lane == i && first + i * 32 < count) bits[first / 32 + i] = masks[i];
  int warp_offset;
  const int total = cta_count<NT>(warp_count, warp_counts, warp_offset);
  if (threadIdx.x == 0) tile_counts[blockIdx.x] = (uint32_t)total;
}

template <int NT, int VT, bool Sparse>
__global__ void __launch_bounds__(NT) compacted(const K* keys, int64_t count, const unsigned* bits, const uint32_t* offsets,
                                                int64_t num_tiles, uint32_t* starts, K* heads, uint64_t* runs) {
  __shared__ int warp_counts[NT / 32];
  const int lane = (int)threadIdx.x % 32;
  const int64_t first = (int64_t)blockIdx.x * NT * VT + (int64_t)threadIdx.x / 32 * 32 * VT;
  unsigned masks[VT];
  K k[VT];
  int warp_count = 0;
  if constexpr (Sparse) {
    const unsigned word = lane < VT && first + lane * 32 < count ? bits[first / 32 + lane] : 0u;
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      masks[i] = __shfl_sync(0xffffffffu, word, i);
      warp_count += __popc(masks[i]);
      if (masks[i] >> lane & 1) k[i] = keys[first + i * 32 + lane];
    }
  } else {
    K before;
    striped_load<VT>(keys, first, count, k, before);
    warp_count = striped_masks<VT>(k, before, first, count, Comp(), masks);
  }
  int warp_offset;
  const int total = cta_count<NT>(warp_count, warp_counts, warp_offset);
  store_striped_heads<VT>(masks, k, (int64_t)offsets[blockIdx.x] + warp_offset, first, heads, starts);
  if (blockIdx.x == num_tiles - 1 && threadIdx.x == 0) *runs = offsets[blockIdx.x] + total;
}

// Hopper's bulk copies (cp.async.bulk from global to shared memory, completing on an mbarrier).
__device__ __forceinline__ unsigned shared_address(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void barrier_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
}

// The barrier's one arrival, expecting `bytes` of copies before its phase completes.
__device__ __forceinline__ void barrier_expect(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(shared_address(dst)),
               "l"(src), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}

__device__ __forceinline__ void barrier_wait(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(shared_address(bar)), "r"(parity)
                 : "memory");
}

// Persistent CTAs whose tiles' keys arrive by bulk copies S stages ahead: thread 0 takes a
// tile's ticket and starts its copy into a free stage, so the keys of the CTA's next tiles are
// in flight (in shared memory, not registers) while it looks back. The keys are read from the
// stage warp-striped (conflict-free) and handled as `striped`'s. `LookBack` false: each tile's
// heads stored at its own slot (tile * NV) with no look-back, the pipeline's floor (its output
// is not the runs').
template <int NT, int VT, int S, bool LookBack = true>
__global__ void __launch_bounds__(NT)
bulk_staged(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  constexpr int NV = NT * VT;
  extern __shared__ __align__(128) unsigned char dynamic_shared[];
  K(*stage_keys)[NV] = reinterpret_cast<K(*)[NV]>(dynamic_shared);
  __shared__ uint64_t full[S];
  __shared__ int64_t tickets[S];
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ int warp_counts[NT / 32];
  auto refill = [&](int s) {
    const int64_t tile = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull);
    tickets[s] = tile;
    const unsigned bytes = tile < num_tiles ? (unsigned)((count - tile * NV < NV ? count - tile * NV : (int64_t)NV) * sizeof(K)) / 16 * 16 : 0u;
    barrier_expect(&full[s], bytes);
    if (bytes) bulk_load(stage_keys[s], keys + tile * NV, bytes, &full[s]);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) barrier_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < S; ++s) refill(s);
  }
  __syncthreads();
  const int lane = (int)threadIdx.x % 32, warp_first = (int)threadIdx.x / 32 * 32 * VT;
  for (int round = 0;; ++round) {
    const int s = round % S;
    barrier_wait(&full[s], (unsigned)(round / S) & 1u);
    const int64_t tile = tickets[s];
    if (tile >= num_tiles) break;
    const int64_t base = tile * NV;
    const int n = (int)(count - base < NV ? count - base : (int64_t)NV);
    const int copied = (int)(n * sizeof(K) / 16 * 16 / sizeof(K));
    auto key_at = [&](int j) { return j < copied ? stage_keys[s][j] : keys[base + j]; };
    K k[VT], before = K();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int j = warp_first + i * 32 + lane;
      if (j < n) k[i] = key_at(j);
    }
    if (lane == 0 && warp_first < n) before = warp_first > 0 ? key_at(warp_first - 1) : base > 0 ? keys[base - 1] : K();
    unsigned masks[VT];
    const int warp_count = striped_masks<VT>(k, before, base + warp_first, count, Comp(), masks);
    int warp_offset;
    const int tile_count = cta_count<NT>(warp_count, warp_counts, warp_offset);  // every thread is done with stage s
    if (threadIdx.x == 0) refill(s);
    const int64_t tile_offset = LookBack ? mergepath::cta_tile_offset<NT>(tile, tile_count, tile_states, scan) : base;
    if (!LookBack) __syncthreads();  // warp_counts read before the next round writes them
    store_striped_heads<VT>(masks, k, tile_offset + warp_offset, base + warp_first, heads, starts);
    if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(tile_offset + tile_count);
  }
}

// The heads of a warp's VT boundary words (its keys, words[w * VT ..] for warp w, at `base` in
// all keys) stored from output index `at` on, each word's by consecutive lanes to consecutive
// addresses.
template <int VT>
__device__ __forceinline__ void store_word_heads(const unsigned* words, const K* tile_keys, int64_t at, int64_t base, K* heads,
                                                 uint32_t* starts) {
  const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
  const unsigned below = (1u << lane) - 1;
#pragma unroll 4
  for (int i = 0; i < VT; ++i) {
    const int word = warp * VT + i;
    const unsigned mask = words[word];
    if (mask >> lane & 1) {
      const int64_t o = at + __popc(mask & below);
      const int j = word * 32 + lane;
      heads[o] = tile_keys[j];
      if (starts) starts[o] = (uint32_t)(base + j);
    }
    at += __popc(mask);
  }
}

// The library's tile (keys bulk-copied into shared memory) with its keys read warp-striped (lane l of warp w, row
// i: key w * 32 * VT + 32 i + l; its predecessor the key before it in shared memory), so each
// row's ballot is a boundary word: the words kept in shared memory (one a row, NV / 32 in all)
// are all the heads' record, and the stores go row by row, each head at the warp's offset plus
// the heads before it in its rows, consecutive lanes to consecutive addresses. No positions
// array: shared memory holds little but the keys.
template <int NT, int VT, int MB>
__global__ void __launch_bounds__(NT, MB)
striped_shared(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  constexpr int NV = NT * VT, WARPS = NT / 32;
  __shared__ __align__(16) K shared_keys[4 + NV];
  __shared__ unsigned row_masks[NV / 32];
  __shared__ int warp_counts[WARPS];
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ uint64_t staged;
  __shared__ int64_t tile_index;
  K* const tile_keys = shared_keys + 4;
  if (threadIdx.x == 0) tile_index = mergepath::take_run_tile<NV>(keys, count, num_tiles, tile_states, tile_keys, &staged);
  __syncthreads();
  const int64_t tile = tile_index, base = tile * NV;
  const int n = mergepath::finish_run_tile<NT, NV>(keys, count, base, tile_keys, &staged);
  const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32, warp_first = warp * 32 * VT;
  int warp_count = 0;
#pragma unroll 4
  for (int i = 0; i < VT; ++i) {
    const int j = warp_first + i * 32 + lane;
    bool head = false;
    if (j < n) {
      const K before = tile_keys[j - 1], key = tile_keys[j];
      head = (base == 0 && j == 0) || Comp()(before, key) || Comp()(key, before);
    }
    const unsigned mask = __ballot_sync(0xffffffffu, head);
    if (lane == 0) row_masks[warp_first / 32 + i] = mask;
    warp_count += __popc(mask);
  }
  if (lane == 0) warp_counts[warp] = warp_count;
  __syncthreads();
  int tile_count = 0, warp_offset = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    const int c = warp_counts[w];
    warp_offset += w < warp ? c : 0;
    tile_count += c;
  }
  const int64_t offset = mergepath::cta_tile_offset<NT>(tile, tile_count, tile_states, scan);  // barriers around
  store_word_heads<VT>(row_masks, tile_keys, offset + warp_offset, base, heads, starts);
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(offset + tile_count);
}

// The library's tile without its positions array, so shared memory holds little but the keys
// (more tiles an SM): `Select` false: after the look-back each thread stores its own heads
// (its row's keys, from its exclusive count on); true: the heads' boundary words and each
// word's count before it kept in shared memory, and output k's position found by a binary
// search of those counts and __fns, consecutive threads storing consecutive outputs.
template <int NT, int VT, int MB, bool Select>
__global__ void __launch_bounds__(NT, MB)
unpositioned(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  constexpr int NV = NT * VT, WORDS = NV / 32;
  static_assert(NV % 32 == 0 && WORDS <= NT, "whole words, a thread's worth");
  __shared__ __align__(16) K shared_keys[4 + NV];
  __shared__ unsigned head_words[Select ? WORDS : 1];
  __shared__ uint16_t words_before[Select ? WORDS : 1];
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ uint64_t staged;
  __shared__ int64_t tile_index;
  K* const tile_keys = shared_keys + 4;
  if (threadIdx.x == 0) tile_index = mergepath::take_run_tile<NV>(keys, count, num_tiles, tile_states, tile_keys, &staged);
  if (Select)
    for (int w = (int)threadIdx.x; w < WORDS; w += NT) head_words[w] = 0;
  __syncthreads();
  const int64_t tile = tile_index, base = tile * NV;
  const int n = mergepath::finish_run_tile<NT, NV>(keys, count, base, tile_keys, &staged);
  const int first = VT * (int)threadIdx.x;
  const unsigned head_bits = mergepath::row_heads<VT>(tile_keys, first, n, base == 0, Comp());
  int tile_count;
  const int heads_before = mergepath::cta_exclusive_scan<NT>(__popc(head_bits), tile_count, scan);
  if (Select) {
    if (head_bits) {
      atomicOr(&head_words[first / 32], head_bits << first % 32);
      if (first % 32 + VT > 32) atomicOr(&head_words[first / 32 + 1], head_bits >> (32 - first % 32));
    }
    __syncthreads();
    int words_total;
    const int before = mergepath::cta_exclusive_scan<NT>((int)threadIdx.x < WORDS ? __popc(head_words[threadIdx.x]) : 0, words_total, scan);
    if ((int)threadIdx.x < WORDS) words_before[threadIdx.x] = (uint16_t)before;
  }
  const int64_t offset = mergepath::cta_tile_offset<NT>(tile, tile_count, tile_states, scan);  // barriers around
  if (Select) {
    for (int k = (int)threadIdx.x; k < tile_count; k += NT) {
      int lo = 0, hi = WORDS - 1;  // the last word with words_before <= k
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (words_before[mid] <= k) lo = mid; else hi = mid - 1;
      }
      const int position = lo * 32 + (int)__fns(head_words[lo], 0, k - words_before[lo] + 1);
      heads[offset + k] = tile_keys[position];
      if (starts) starts[offset + k] = (uint32_t)(base + position);
    }
  } else {
    int64_t at = offset + heads_before;
    for (unsigned h = head_bits; h; h &= h - 1, ++at) {
      const int position = first + __ffs(h) - 1;
      heads[at] = tile_keys[position];
      if (starts) starts[at] = (uint32_t)(base + position);
    }
  }
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(offset + tile_count);
}

// The library's tile with its heads kept as boundary words instead of positions: found row
// by row as the library's (a thread's VT keys in a row), or'd into the tile's words, and
// stored warp by warp over the warp's own VT words (its keys), each word's heads by
// consecutive lanes to consecutive addresses. Shared memory: the keys and a bit a key.
template <int NT, int VT, int MB>
__global__ void __launch_bounds__(NT, MB)
worded(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads, uint64_t* runs) {
  constexpr int NV = NT * VT, WORDS = NV / 32;
  static_assert(NV % 32 == 0, "whole words");
  __shared__ __align__(16) K shared_keys[4 + NV];
  __shared__ unsigned head_words[WORDS];
  __shared__ mergepath::scan_shared<NT> scan;
  __shared__ uint64_t staged;
  __shared__ int64_t tile_index;
  K* const tile_keys = shared_keys + 4;
  if (threadIdx.x == 0) tile_index = mergepath::take_run_tile<NV>(keys, count, num_tiles, tile_states, tile_keys, &staged);
  for (int w = (int)threadIdx.x; w < WORDS; w += NT) head_words[w] = 0;
  __syncthreads();
  const int64_t tile = tile_index, base = tile * NV;
  const int n = mergepath::finish_run_tile<NT, NV>(keys, count, base, tile_keys, &staged);
  const int first = VT * (int)threadIdx.x;
  const unsigned head_bits = mergepath::row_heads<VT>(tile_keys, first, n, base == 0, Comp());
  if (head_bits) {
    atomicOr(&head_words[first / 32], head_bits << first % 32);
    if (first % 32 + VT > 32) atomicOr(&head_words[first / 32 + 1], head_bits >> (32 - first % 32));
  }
  int tile_count;
  const int heads_before = mergepath::cta_exclusive_scan<NT>(__popc(head_bits), tile_count, scan);  // barriers around
  const int warp_before = __shfl_sync(0xffffffffu, heads_before, 0);
  const int64_t offset = mergepath::cta_tile_offset<NT>(tile, tile_count, tile_states, scan);  // barriers around
  store_word_heads<VT>(head_words, tile_keys, offset + warp_before, base, heads, starts);
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)(offset + tile_count);
}

// Tiles that need not wait on their look-back. `deferred` is the library's tile whose look-back
// gives up after `Patience` polls of a state still unknown, where the tile has at most NV /
// Sparse heads: such a tile keeps its count an aggregate and leaves its heads (keys and u16
// positions) at its own slot of a scratch buffer (tile * NV / Sparse), its count and a flag in
// tile_counts; after the kernel a scan of the counts (CUB's) gives each tile's offset and
// `deferred_moves` moves the deferred tiles' heads into place. Dense tiles wait as before: their
// scratch would cost as much traffic again as their output. `Patience` -1: a sparse tile never
// looks back (all sparse tiles deferred, a two-pass kernel without a second read of the keys).
constexpr uint32_t DEFERRED = 1u << 31;

// cta_tile_offset without the carried positions, by exclusive_prefix, giving up (-1) after
// `patience` polls of a window where `may_defer` (at once where `patience` is -1); the count goes
// to tile_counts[tile] (with DEFERRED where the tile gave up).
template <int NT>
__device__ __forceinline__ int64_t deferring_tile_offset(int64_t tile, int64_t count, uint64_t* states, uint32_t* tile_counts,
                                                         mergepath::scan_shared<NT>& shared, bool may_defer, int patience) {
  using namespace mergepath;
  __syncthreads();
  if (threadIdx.x < WARP_THREADS) {
    if (threadIdx.x == 0) publish_tile_count(tile, count, states, nullptr);
    const bool skip = may_defer && patience < 0 && tile > 0;
    const int64_t prefix = skip ? -1 : exclusive_prefix<1>(tile, states, nullptr, may_defer ? patience : -1);
    if (threadIdx.x == 0) {
      if (prefix >= 0 && tile > 0) static_cast<volatile uint64_t*>(states)[tile] = TILE_PREFIX | (uint64_t)(prefix + count);
      tile_counts[tile] = (uint32_t)count | (prefix < 0 ? DEFERRED : 0u);
      shared.tile_offset = prefix;
    }
  }
  __syncthreads();
  return shared.tile_offset;
}

template <int NT, int VT, int Sparse, int Patience>
__global__ void __launch_bounds__(NT, mergepath::run_starts_ctas_per_sm<NT, VT, K>(900))
deferred(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, uint32_t* starts, K* heads_out, uint64_t* runs,
         uint32_t* tile_counts, K* scratch_keys, uint16_t* scratch_positions) {
  using namespace mergepath;
  using Shared = run_starts_shared<NT, VT, K>;
  constexpr int NV = Shared::NV, LEAD = Shared::LEAD, ROOM = NV / Sparse;
  __shared__ Shared shared;
  K* const tile_keys = shared.keys + LEAD;
  if (threadIdx.x == 0) shared.tile_index = take_run_tile<NV>(keys, count, num_tiles, tile_states, tile_keys, &shared.staged);
  __syncthreads();
  const int64_t tile = shared.tile_index, base = tile * NV;
  const int n = finish_run_tile<NT, NV>(keys, count, base, tile_keys, &shared.staged);
  const int first = VT * (int)threadIdx.x;
  const unsigned heads = row_heads<VT>(tile_keys, first, n, base == 0, Comp());
  int tile_count;
  const int heads_before = cta_exclusive_scan<NT>(__popc(heads), tile_count, shared.scan);
  int at = heads_before;
  for (unsigned h = heads; h; h &= h - 1) shared.head_positions[at++] = (uint16_t)(first + __ffs(h) - 1);
  const int64_t offset = deferring_tile_offset<NT>(tile, tile_count, tile_states, tile_counts, shared.scan, tile_count <= ROOM, Patience);
  if (offset < 0) {
    for (int k = (int)threadIdx.x; k < tile_count; k += NT) {
      const int position = shared.head_positions[k];
      if (starts) scratch_positions[tile * ROOM + k] = (uint16_t)position;
      scratch_keys[tile * ROOM + k] = tile_keys[position];
    }
    return;
  }
  for (int k = (int)threadIdx.x; k < tile_count; k += NT) {
    const int position = shared.head_positions[k];
    if (starts) starts[offset + k] = (uint32_t)(base + position);
    heads_out[offset + k] = tile_keys[position];
  }
}

// The deferred tiles' heads moved to their offsets (offsets: the exclusive scan of the counts
// without their flags), a CTA a tile; the last tile's CTA writes the run count.
template <int NT, int NV, int Sparse>
__global__ void __launch_bounds__(NT) deferred_moves(int64_t num_tiles, const uint32_t* tile_counts, const uint32_t* offsets, uint32_t* starts,
                                                     K* heads_out, uint64_t* runs, const K* scratch_keys, const uint16_t* scratch_positions) {
  constexpr int ROOM = NV / Sparse;
  const int64_t tile = blockIdx.x;
  const uint32_t c = tile_counts[tile];
  const int n = (int)(c & ~DEFERRED);
  const uint32_t offset = offsets[tile];
  if (tile == num_tiles - 1 && threadIdx.x == 0) *runs = (uint64_t)offset + (uint64_t)n;
  if (!(c & DEFERRED)) return;
  for (int k = (int)threadIdx.x; k < n; k += NT) {
    if (starts) starts[offset + k] = (uint32_t)(tile * NV + scratch_positions[tile * ROOM + k]);
    heads_out[offset + k] = scratch_keys[tile * ROOM + k];
  }
}

// A scan's input: each tile's count without its flag.
struct unflagged {
  __host__ __device__ uint32_t operator()(uint32_t c) const { return c & ~DEFERRED; }
};

struct Input {
  size_t n, runs;
  K *keys, *heads;
  uint32_t* starts;
  uint64_t* states;
  std::vector<K> want_heads;
  std::vector<uint32_t> want_starts;
  float copy_ms;
  // Runs of 1 to `longest` keys; `longest` 0: stretches of 2^20 keys in runs of up to 32, then
  // of up to 2, in turn (tiles that defer their heads between tiles that do not).
  Input(size_t n_, uint64_t longest) : n(n_) {
    std::vector<K> h(n);
    std::vector<size_t> at_starts = run_starts(n, longest ? longest : 32);
    if (!longest) {
      const std::vector<size_t> short_starts = run_starts(n, 2);
      constexpr size_t STRETCH = size_t(1) << 20;
      std::vector<size_t> mixed;
      for (size_t at : at_starts) if (at / STRETCH % 2 == 0) mixed.push_back(at);
      for (size_t at : short_starts) if (at / STRETCH % 2 == 1) mixed.push_back(at);
      for (size_t stretch = STRETCH; stretch < n; stretch += STRETCH) mixed.push_back(stretch);
      std::sort(mixed.begin(), mixed.end());
      mixed.erase(std::unique(mixed.begin(), mixed.end()), mixed.end());
      at_starts = mixed;
    }
    for (size_t at : at_starts) {
      want_starts.push_back((uint32_t)at);
      want_heads.push_back((K)want_heads.size());
    }
    for (size_t r = 0; r < want_starts.size(); ++r) {
      const size_t end = r + 1 < want_starts.size() ? want_starts[r + 1] : n;
      std::fill(h.begin() + want_starts[r], h.begin() + end, want_heads[r]);
    }
    runs = want_heads.size();
    CK(cudaMalloc(&keys, n * sizeof(K)));
    CK(cudaMalloc(&heads, n * sizeof(K)));
    CK(cudaMalloc(&starts, n * sizeof(uint32_t)));
    CK(cudaMalloc(&states, (n / 256 + 4) * sizeof(uint64_t)));
    CK(cudaMemcpy(keys, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    copy_ms = median_ms([&] { CK(cudaMemcpyAsync(heads, keys, n * sizeof(K), cudaMemcpyDeviceToDevice)); }, 50);
  }
  // Checks the runs' count, keys and (with `positions`) starts.
  bool check(bool positions) const {
    uint64_t found = 0;
    CK(cudaMemcpy(&found, states + (n / 256 + 3), 8, cudaMemcpyDeviceToHost));
    if (found != runs) return false;
    std::vector<K> got(runs);
    CK(cudaMemcpy(got.data(), heads, runs * sizeof(K), cudaMemcpyDeviceToHost));
    if (got != want_heads) return false;
    if (!positions) return true;
    std::vector<uint32_t> got_starts(runs);
    CK(cudaMemcpy(got_starts.data(), starts, runs * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return got_starts == want_starts;
  }
};

// One TSV line: a variant's time `ms` for the runs' first keys, and their positions where
// `positions`, its output checked, then `note`.
void report(const char* variant, const Input& in, const char* runs_name, int nt, int vt, bool positions, float ms, const char* note) {
  const double bytes = 4.0 * (in.n + in.runs * (positions ? 2 : 1));
  const float copy = in.copy_ms * (float)(bytes / (8.0 * in.n));
  printf("%s\t%s_%s\t%d\t%d\t%zu\t%.4f\t%.1f\t%s\t%s\n", variant, positions ? "starts" : "unique", runs_name, nt, vt, in.n, ms,
         100.0 * copy / ms, in.check(positions) ? "ok" : "WRONG", note);
  fflush(stdout);
}

template <int NT, int VT, class Kernel>
void measure(const char* variant, const Input& in, const char* runs_name, Kernel kernel, bool persistent = false, int smem = 0,
             int block = NT) {
  const int64_t tiles = (int64_t)((in.n + NT * VT - 1) / (NT * VT));
  unsigned grid = (unsigned)tiles;
  if (smem) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  if (persistent) {
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    grid = std::min<unsigned>(grid, (unsigned)(per_sm * sms));
  }
  uint64_t* found = in.states + (in.n / 256 + 3);
  for (bool positions : {false, true}) {
    uint32_t* starts = positions ? in.starts : nullptr;
    const float ms = median_ms([&] {
      CK(cudaMemsetAsync(in.states, 0, (tiles + 1) * sizeof(uint64_t)));
      kernel<<<grid, block, smem>>>(in.keys, (int64_t)in.n, tiles, in.states, starts, in.heads, found);
    });
    CK(cudaGetLastError());
    char note[32];
    snprintf(note, sizeof note, "grid %u", grid);
    report(variant, in, runs_name, NT, VT, positions, ms, note);
  }
}

// The library's call on `in` as runs_shapes times it: its temporaries (the tiles' counts after
// their states and ticket; with `deferred`, the deferred tiles' slots), and its launches: the
// states' memset, run_starts_tile, and with `deferred` run_deferred_tiles as its programmatic
// dependent.
template <int NT, int VT>
struct library_call {
  static constexpr int NV = NT * VT, ROOM = NV / mergepath::RUNS_DEFERRED_SHARE;
  const Input& in;
  bool deferred;
  int64_t tiles, counted;  // counted: u64 slots of the tiles', groups' and spans' u32 counts
  mergepath::run_deferral<K> deferral;
  uint64_t* found;
  library_call(const Input& in_, bool deferred_)
      : in(in_), deferred(deferred_), tiles((int64_t)((in_.n + NV - 1) / NV)),
        deferral{nullptr, nullptr, reinterpret_cast<unsigned*>(in_.states + tiles + 1), nullptr},
        found(in_.states + (in_.n / 256 + 3)) {
    const mergepath::run_count_slots at{tiles, (tiles + mergepath::RUNS_GROUP_TILES - 1) / mergepath::RUNS_GROUP_TILES};
    counted = (tiles + at.groups + at.groups / mergepath::RUNS_GROUP_TILES + 1 + 1) / 2;
    if (deferred) {
      CK(cudaMalloc(&deferral.positions, tiles * ROOM * 2));
      CK(cudaMalloc(&deferral.heads, tiles * ROOM * sizeof(K)));
    }
  }
  ~library_call() {
    CK(cudaFree(deferral.positions));
    CK(cudaFree(deferral.heads));
  }
  // Enqueues the call, the run count also to `runs_host` where not null.
  void launch(uint32_t* starts, uint64_t* runs_host) const {
    CK(cudaMemsetAsync(in.states, 0, (tiles + 1 + counted) * sizeof(uint64_t)));
    library_tile<NT, VT><<<(unsigned)tiles, NT>>>(in.keys, (int64_t)in.n, tiles, in.states, starts, in.heads, found, deferral, runs_host);
    if (deferred)
      launch_dependent(library_deferred<NT, VT>, dim3((unsigned)((tiles + NT / 32 - 1) / (NT / 32))), dim3(NT), (int64_t)in.n, tiles,
                       in.states, starts, in.heads, found, deferral, runs_host);
  }
};

// The library's tiles as its calls launch them, timed with and without the heads' positions.
template <int NT, int VT>
void measure_library(const char* variant, const Input& in, const char* runs_name, bool deferred) {
  const library_call<NT, VT> call(in, deferred);
  for (bool positions : {false, true}) {
    uint32_t* starts = positions ? in.starts : nullptr;
    const float ms = median_ms([&] { call.launch(starts, nullptr); });
    CK(cudaGetLastError());
    std::vector<uint64_t> states(call.tiles);
    CK(cudaMemcpy(states.data(), in.states, call.tiles * 8, cudaMemcpyDeviceToHost));
    int64_t deferred_tiles = 0;
    for (uint64_t x : states) deferred_tiles += (x & mergepath::TILE_AGGREGATE) != 0;
    char note[64];
    snprintf(note, sizeof note, "grid %lld, %lld deferred", (long long)call.tiles, (long long)deferred_tiles);
    report(variant, in, runs_name, NT, VT, positions, ms, note);
  }
}

// The count copied to mapped pinned host memory by a kernel of its own, for a host that spins
// on it.
__global__ void count_to_host(const uint64_t* runs, volatile uint64_t* host) {
  *host = *runs;
  __threadfence_system();
}

// The library's call as a user sees it: its kernels (256 x 23, deferring), then the run count
// read back by the host: `kernels` none; `pageable` / `pinned` a copy to pageable or pinned
// memory and the stream synchronized; `mapped_kernel` a kernel of its own copying it to mapped
// pinned memory, the host spinning until it lands (`mapped_kernel_sync` then synchronizing too);
// `mapped` the runs' kernels writing it there themselves (reported_count, as the library's calls
// do). Events bracket each call as the library's benches time it.
void measure_readback(const Input& in, const char* runs_name) {
  constexpr int NT = 256, VT = 23;
  const library_call<NT, VT> call(in, true);
  uint64_t* pinned;
  CK(cudaHostAlloc(&pinned, 64, cudaHostAllocMapped));
  uint64_t got = 0;
  const auto spin = [&](bool own_kernel, bool sync) {
    volatile uint64_t* slot = pinned;
    *slot = ~0ull;
    call.launch(nullptr, own_kernel ? nullptr : pinned);
    if (own_kernel) count_to_host<<<1, 1>>>(call.found, pinned);
    for (unsigned polls = 0; *slot == ~0ull; ++polls)
      if (polls % 64 == 63 && cudaStreamQuery(0) == cudaSuccess && *slot == ~0ull) break;
    got = *slot;
    if (sync) CK(cudaStreamSynchronize(0));
  };
  const std::pair<const char*, std::function<void()>> ways[] = {
      {"kernels", [&] { call.launch(nullptr, nullptr); }},
      {"pageable", [&] { call.launch(nullptr, nullptr); CK(cudaMemcpyAsync(&got, call.found, 8, cudaMemcpyDeviceToHost)); CK(cudaStreamSynchronize(0)); }},
      {"pinned", [&] { call.launch(nullptr, nullptr); CK(cudaMemcpyAsync(pinned + 1, call.found, 8, cudaMemcpyDeviceToHost)); CK(cudaStreamSynchronize(0)); got = pinned[1]; }},
      {"mapped_kernel", [&] { spin(true, false); }},
      {"mapped_kernel_sync", [&] { spin(true, true); }},
      {"mapped", [&] { spin(false, false); }},
  };
  for (const auto& [way, call_way] : ways) {
    got = ~0ull;
    const float ms = median_ms(call_way);
    CK(cudaGetLastError());
    char variant[48];
    snprintf(variant, sizeof variant, "readback_%s", way);
    const char* note = way == std::string("kernels") ? "count not read" : got == in.runs ? "count ok" : "count WRONG";
    report(variant, in, runs_name, NT, VT, false, ms, note);
  }
  CK(cudaFreeHost(pinned));
}

// The two passes (`counted`, the scan, `compacted`) timed together.
template <int NT, int VT, bool Sparse>
void measure_two_pass(const char* variant, const Input& in, const char* runs_name) {
  const int64_t tiles = (int64_t)((in.n + NT * VT - 1) / (NT * VT));
  unsigned* bits;
  uint32_t *counts, *offsets;
  CK(cudaMalloc(&bits, (in.n / 32 + 1) * 4));
  CK(cudaMalloc(&counts, tiles * 4));
  CK(cudaMalloc(&offsets, tiles * 4));
  size_t tb = 0;
  CK(cub::DeviceScan::ExclusiveSum(nullptr, tb, counts, offsets, (int)tiles));
  void* temp;
  CK(cudaMalloc(&temp, tb));
  uint64_t* found = in.states + (in.n / 256 + 3);
  const float count_ms = median_ms([&] { counted<NT, VT><<<(unsigned)tiles, NT>>>(in.keys, (int64_t)in.n, bits, counts); });
  for (bool positions : {false, true}) {
    uint32_t* starts = positions ? in.starts : nullptr;
    const float ms = median_ms([&] {
      counted<NT, VT><<<(unsigned)tiles, NT>>>(in.keys, (int64_t)in.n, bits, counts);
      size_t t = tb;
      CK(cub::DeviceScan::ExclusiveSum(temp, t, counts, offsets, (int)tiles));
      compacted<NT, VT, Sparse><<<(unsigned)tiles, NT>>>(in.keys, (int64_t)in.n, bits, offsets, tiles, starts, in.heads, found);
    });
    CK(cudaGetLastError());
    char note[32];
    snprintf(note, sizeof note, "counted %.4f", count_ms);
    report(variant, in, runs_name, NT, VT, positions, ms, note);
  }
  CK(cudaFree(temp));
  CK(cudaFree(bits));
  CK(cudaFree(counts));
  CK(cudaFree(offsets));
}

// `deferred` with its scan and moves, timed together; the note says how many tiles deferred.
template <int NT, int VT, int Sparse, int Patience>
void measure_deferred(const char* variant, const Input& in, const char* runs_name) {
  constexpr int NV = NT * VT, ROOM = NV / Sparse;
  const int64_t tiles = (int64_t)((in.n + NV - 1) / NV);
  uint32_t *counts, *offsets;
  K* scratch_keys;
  uint16_t* scratch_positions;
  CK(cudaMalloc(&counts, tiles * 4));
  CK(cudaMalloc(&offsets, tiles * 4));
  CK(cudaMalloc(&scratch_keys, tiles * ROOM * sizeof(K)));
  CK(cudaMalloc(&scratch_positions, tiles * ROOM * 2));
  const auto unflag = thrust::make_transform_iterator(static_cast<const uint32_t*>(counts), unflagged());
  size_t tb = 0;
  CK(cub::DeviceScan::ExclusiveSum(nullptr, tb, unflag, offsets, (int)tiles));
  void* temp;
  CK(cudaMalloc(&temp, tb));
  uint64_t* found = in.states + (in.n / 256 + 3);
  for (bool positions : {false, true}) {
    uint32_t* starts = positions ? in.starts : nullptr;
    const float ms = median_ms([&] {
      CK(cudaMemsetAsync(in.states, 0, (tiles + 1) * sizeof(uint64_t)));
      deferred<NT, VT, Sparse, Patience><<<(unsigned)tiles, NT>>>(in.keys, (int64_t)in.n, tiles, in.states, starts, in.heads, found, counts,
                                                                 scratch_keys, scratch_positions);
      size_t t = tb;
      CK(cub::DeviceScan::ExclusiveSum(temp, t, unflag, offsets, (int)tiles));
      deferred_moves<256, NV, Sparse><<<(unsigned)tiles, 256>>>(tiles, counts, offsets, starts, in.heads, found, scratch_keys,
                                                               scratch_positions);
    });
    CK(cudaGetLastError());
    std::vector<uint32_t> c(tiles);
    CK(cudaMemcpy(c.data(), counts, tiles * 4, cudaMemcpyDeviceToHost));
    int64_t deferred_tiles = 0;
    for (uint32_t x : c) deferred_tiles += (x & DEFERRED) != 0;
    char note[48];
    snprintf(note, sizeof note, "deferred %lld of %lld", (long long)deferred_tiles, (long long)tiles);
    report(variant, in, runs_name, NT, VT, positions, ms, note);
  }
  CK(cudaFree(temp));
  CK(cudaFree(counts));
  CK(cudaFree(offsets));
  CK(cudaFree(scratch_keys));
  CK(cudaFree(scratch_positions));
}

// bulk_staged, persistent, with its S stages of keys in dynamic shared memory.
template <int NT, int VT, int S, bool LookBack = true>
void measure_bulk(const Input& in, const char* runs_name) {
  char name[32];
  snprintf(name, sizeof name, "%s_s%d", LookBack ? "bulk" : "bulk_floor", S);
  measure<NT, VT>(name, in, runs_name, bulk_staged<NT, VT, S, LookBack>, true, S * NT * VT * (int)sizeof(K));
}

// One launch with records (`timed` or `overlapped_timed`, after a warm-up), summarised: each
// phase's mean and percentiles in cycles, the look-back's windows, polls and distance, and how
// many tiles ran at once on average (their lives' sum over the kernel's span).
template <int NT, int VT, class Kernel>
void timeline(const char* variant, const Input& in, const char* runs_name, Kernel kernel, int block = NT) {
  const int64_t tiles = (int64_t)((in.n + NT * VT - 1) / (NT * VT));
  tile_record* records;
  CK(cudaMalloc(&records, tiles * sizeof(tile_record)));
  uint64_t* found = in.states + (in.n / 256 + 3);
  for (int rep = 0; rep < 2; ++rep) {
    CK(cudaMemset(in.states, 0, (tiles + 1) * sizeof(uint64_t)));
    kernel<<<(unsigned)tiles, block>>>(in.keys, (int64_t)in.n, tiles, in.states, in.starts, in.heads, found, records);
    CK(cudaDeviceSynchronize());
  }
  std::vector<tile_record> r(tiles);
  CK(cudaMemcpy(r.data(), records, tiles * sizeof(tile_record), cudaMemcpyDeviceToHost));
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  auto summary = [&](const char* what, auto value) {
    std::vector<double> v(tiles);
    for (int64_t t = 0; t < tiles; ++t) v[t] = (double)value(r[t]);
    double mean = 0;
    for (double x : v) mean += x / tiles;
    std::sort(v.begin(), v.end());
    printf("timeline\t%s_%s\t%d\t%d\t%zu\t%s\tmean %.1f\tp50 %.0f\tp90 %.0f\tmax %.0f\n", variant, runs_name, NT, VT, in.n, what, mean,
           v[tiles / 2], v[tiles * 9 / 10], v[tiles - 1]);
  };
  const char* phases[4] = {"ticket_cycles", "count_cycles", "lookback_cycles", "store_cycles"};
  for (int p = 0; p < 4; ++p) summary(phases[p], [&](const tile_record& x) { return x.clocks[p + 1] - x.clocks[p]; });
  summary("life_cycles", [](const tile_record& x) { return x.clocks[4] - x.clocks[0]; });
  summary("windows", [](const tile_record& x) { return x.windows; });
  summary("polls", [](const tile_record& x) { return x.polls; });
  summary("distance", [](const tile_record& x) { return x.distance; });
  unsigned long long first = ~0ull, last = 0;
  double lives_ns = 0;
  for (const tile_record& x : r) {
    const double life_ns = (double)(x.clocks[4] - x.clocks[0]) * 1e6 / khz;
    first = std::min(first, x.start_ns);
    last = std::max(last, x.start_ns + (unsigned long long)life_ns);
    lives_ns += life_ns;
  }
  printf("timeline\t%s_%s\t%d\t%d\t%zu\tspan_us %.1f\ttiles_at_once %.0f\tclock_mhz %d\t%s\n", variant, runs_name, NT, VT, in.n,
         (last - first) / 1e3, lives_ns / (double)(last - first), khz / 1000, in.check(true) ? "ok" : "WRONG");
  CK(cudaFree(records));
}

void cub_unique(const Input& in, const char* runs_name) {
  int64_t* num;
  CK(cudaMalloc(&num, 8));
  size_t tb = 0;
  CK(cub::DeviceSelect::Unique(nullptr, tb, in.keys, in.heads, num, (int64_t)in.n));
  void* temp;
  CK(cudaMalloc(&temp, tb));
  const float ms = median_ms([&] { size_t t = tb; CK(cub::DeviceSelect::Unique(temp, t, in.keys, in.heads, num, (int64_t)in.n)); });
  int64_t found = 0;
  CK(cudaMemcpy(&found, num, 8, cudaMemcpyDeviceToHost));
  const double bytes = 4.0 * (in.n + in.runs);
  printf("cub_select_unique\tunique_%s\t0\t0\t%zu\t%.4f\t%.1f\t%s\n", runs_name, in.n, ms, 100.0 * in.copy_ms * (bytes / (8.0 * in.n)) / ms,
         (size_t)found == in.runs ? "ok" : "WRONG");
  CK(cudaFree(temp));
  CK(cudaFree(num));
}

int main(int argc, char** argv) {
  const std::vector<int> sizes = log2_sizes(argc, argv, {24, 26});
  // RUNS_SHAPES_LOOKBACK=1: only the look-back's variants and timelines.
  const bool lookback_only = getenv("RUNS_SHAPES_LOOKBACK") != nullptr;
  // RUNS_SHAPES_DEFERRED=1: only the deferring tiles, beside the library's.
  const bool deferred_only = getenv("RUNS_SHAPES_DEFERRED") != nullptr;
  // RUNS_SHAPES_READBACK=1: only the library's call with its count read back several ways.
  const bool readback_only = getenv("RUNS_SHAPES_READBACK") != nullptr;
  printf("variant\top\tnt\tvt\tn\tms\tpct_of_copy\tok\n");
  for (int log2 : sizes) {
    for (uint64_t longest : {32, 2, 0}) {
      const char* runs_name = longest == 32 ? "runs32" : longest == 2 ? "runs2" : "mixed";
      if (!longest && !deferred_only) continue;
      Input in(size_t(1) << log2, longest);
      cub_unique(in, runs_name);
      if (readback_only) {
        measure_readback(in, runs_name);
      } else {
      measure_library<256, 23>("library", in, runs_name, true);
      if (deferred_only) {
        measure_library<256, 23>("library_waiting", in, runs_name, false);
        measure_library<128, 31>("library", in, runs_name, true);
        measure_library<512, 15>("library", in, runs_name, true);
        measure_library<256, 31>("library", in, runs_name, true);
        measure_deferred<256, 23, 4, 0>("deferred_p0", in, runs_name);
        measure_deferred<256, 23, 4, 2>("deferred_p2", in, runs_name);
        measure_deferred<256, 23, 4, -1>("deferred_always", in, runs_name);
        measure_deferred<256, 23, 4, 1000000>("deferred_never", in, runs_name);
      } else if (lookback_only) {
        measure_library<128, 23>("library", in, runs_name, true);
        measure_library<128, 31>("library", in, runs_name, true);
        measure_library<512, 15>("library", in, runs_name, true);
        measure<128, 24>("by_block", in, runs_name, striped<128, 24, false>);
        measure<128, 24>("looked_back_w1", in, runs_name, looked_back<128, 24, 1>);
        measure<128, 24>("looked_back_w4", in, runs_name, looked_back<128, 24, 4>);
        measure<128, 24>("overlapped_w4_mb6", in, runs_name, overlapped<128, 24, 4, true, 6>, false, 0, 160);
        measure<512, 16>("overlapped_w4_mb2", in, runs_name, overlapped<512, 16, 4, true, 2>, false, 0, 544);
        measure<256, 24>("striped_shared_mb8", in, runs_name, striped_shared<256, 24, 8>);
        measure<256, 31>("direct_mb6", in, runs_name, unpositioned<256, 31, 6, false>);
        measure<128, 31>("select_mb12", in, runs_name, unpositioned<128, 31, 12, true>);
        measure<256, 23>("worded_mb8", in, runs_name, worded<256, 23, 8>);
        measure<128, 31>("worded_mb12", in, runs_name, worded<128, 31, 12>);
        timeline<128, 24>("timed_w1", in, runs_name, timed<128, 24, 1>);
        timeline<128, 24>("timed_w4", in, runs_name, timed<128, 24, 4>);
        timeline<128, 24>("overlapped_w4_mb6", in, runs_name, overlapped_timed<128, 24, 4, true, 6>, 160);
      } else {
        measure<256, 16>("striped", in, runs_name, striped<256, 16>);
        measure<256, 24>("striped", in, runs_name, striped<256, 24>);
        measure<512, 32>("striped", in, runs_name, striped<512, 32>);
        measure<128, 16>("by_block", in, runs_name, striped<128, 16, false>);
        measure<128, 24>("by_block", in, runs_name, striped<128, 24, false>);
        measure<256, 16>("by_block", in, runs_name, striped<256, 16, false>);
        measure<256, 24>("by_block", in, runs_name, striped<256, 24, false>);
        measure<384, 16>("by_block", in, runs_name, striped<384, 16, false>);
        measure<512, 16>("by_block", in, runs_name, striped<512, 16, false>);
        measure<256, 24>("pipelined", in, runs_name, pipelined<256, 24>, true);
        measure_bulk<256, 16, 2>(in, runs_name);
        measure_bulk<256, 16, 3>(in, runs_name);
        measure_bulk<256, 24, 2>(in, runs_name);
        measure_bulk<512, 16, 2>(in, runs_name);
        measure_bulk<512, 16, 3>(in, runs_name);
        measure_bulk<256, 16, 3, false>(in, runs_name);
        measure_bulk<512, 16, 2, false>(in, runs_name);
        measure_two_pass<256, 16, false>("two_pass", in, runs_name);
        measure_two_pass<256, 24, false>("two_pass", in, runs_name);
        measure_two_pass<512, 16, false>("two_pass", in, runs_name);
        measure_two_pass<256, 16, true>("two_pass_sparse", in, runs_name);
        measure_two_pass<256, 24, true>("two_pass_sparse", in, runs_name);
        measure_two_pass<512, 16, true>("two_pass_sparse", in, runs_name);
        measure_two_pass<128, 32, true>("two_pass_sparse", in, runs_name);
      }
      }
      CK(cudaFree(in.keys));
      CK(cudaFree(in.heads));
      CK(cudaFree(in.starts));
      CK(cudaFree(in.states));
    }
  }
}

// Kernel layer: segmented reduction (Modern GPU's segreduce) on the load-balancing search's
// tiles. `count` values in `segments` segments given by their first items `starts` (as the
// search's: an exclusive scan of the lengths); out[s] is the fold of segment s's values in
// order by an associative operation, `empty` for a segment with none.
//
// Two kernels after the search's partitions. Each tile of NT * VT merge outputs (boundaries
// and items) folds its items segment by segment: a segment whose start and end boundaries are
// both in the tile is finished there and written; the tile's first segment (begun in an
// earlier tile) and its last (going on past it) leave partial folds, the head and the tail.
// Then the spine (CTAs over stretches of the tiles, chained by a look-back) scans the tiles'
// partials in order and writes every segment that crosses a tile edge: the fold of the tail of
// the tile it starts in, the whole tiles it spans, and the head of the tile it ends in. Work
// per tile is bounded whatever the lengths.
#pragma once
#include "load_balancing.cuh"
#include "../cta/scan.cuh"
#include "../cta/stage.cuh"

namespace mergepath {

// The built-in reductions. Sum: operator+ (integers wrap). Min and max by the module's
// comparator: the first of the least and the first of the greatest items.
template <class K>
struct reduce_sum {
  __device__ __forceinline__ K operator()(const K& a, const K& b) const { return (K)(a + b); }
};
template <class K, class Comp>
struct reduce_min {
  Comp comp;
  __device__ __forceinline__ K operator()(const K& a, const K& b) const { return comp(b, a) ? b : a; }
};
template <class K, class Comp>
struct reduce_max {
  Comp comp;
  __device__ __forceinline__ K operator()(const K& a, const K& b) const { return comp(a, b) ? b : a; }
};

// What the tiles leave for the spine, per tile: the fold of its head (its items before its
// first boundary) and of its tail (after its last boundary; all its items where it has none).
template <class K>
struct reduce_partials {
  segmented_fold<K>* heads;
  segmented_fold<K>* tails;
};

// Output tile blockIdx.x of the merge of the boundaries with the items (partitions as the
// search's): the tile's finished segments written to `out`, its head and tail to `partials`.
// Each thread walks its VT merge outputs from its own split, folding items and finishing a
// segment at each boundary after its first; the segment ending at its first boundary began in
// an earlier thread, so its fold waits for the CTA's segmented fold of the threads' tails.
template <int NT, int VT, class I, class K, class Op>
__device__ __forceinline__ void segmented_reduce_tile(const I* starts, int64_t segments, int64_t count, const K* values,
                                                      const int64_t* partitions, K* out, K empty, Op op,
                                                      const reduce_partials<K>& partials) {
  constexpr int NV = NT * VT;
  __shared__ I tile_starts[NV + 1];
  __shared__ K tile_values[NV];
  __shared__ segmented_fold_shared<NT, K> scan;
  wait_for_previous_kernel();  // the partitions (see merge.cuh)
  const merge_range r = compute_merge_range(segments - 1, count, blockIdx.x, NV, partitions);
  const int a_n = r.a_count(), b_n = r.b_count();
  for (int h = (int)threadIdx.x; h <= a_n; h += NT) tile_starts[h] = starts[r.a_begin + h];
  for (int k = (int)threadIdx.x; k < b_n; k += NT) tile_values[k] = values[r.b_begin + k];
  __syncthreads();
  // The thread's fold since its last boundary (or its start), and the head: its fold before
  // its first boundary, `first` that boundary's index in the tile (-1: none).
  segmented_fold<K> tail{}, head{};
  int first = -1;
  load_balancing_walk<VT>(
      tile_starts, a_n, item_positions<I>{r.b_begin}, b_n,
      [&](int h, int) {
        if (first < 0) {
          first = h;
          head = tail;
        } else {
          out[r.a_begin + h] = tail.any ? tail.value : empty;
        }
        tail.any = false;
      },
      [&](int k, int) { tail.add(tile_values[k], op); });
  segmented_scan_item<K> tile_tail;
  const segmented_scan_item<K> before = cta_segmented_fold<NT>(tail, first >= 0, tile_tail, scan, op);
  if (first >= 0) {
    // The threads before this one since the last boundary, then its head: boundary `first`
    // ends that segment, begun before the tile where no thread before this one has a boundary.
    const segmented_fold<K> done = before.fold.then(head, op);
    if (first > 0) out[r.a_begin + first] = done.any ? done.value : empty;
    else partials.heads[blockIdx.x] = done;
  }
  if (threadIdx.x == 0) partials.tails[blockIdx.x] = tile_tail.fold;
}

// Runs of items as segments, by their boundaries as bits (the runs-finding kernel writes them):
// bit i of bits[w] is set where item 32w + i begins a run other than the first (item 0's bit
// is clear), and before[w] counts the set bits of the words before w.
template <class I>
struct run_boundaries {
  const unsigned* bits;
  const I* before;
};

// Tile blockIdx.x of NT * VT values, runs by boundary bits as the segments (none empty). The
// tile's values arrive in shared memory by one bulk copy (stage_start), a chunk of 32 * VT a
// warp, and each lane folds VT of them in a row from registers: a run that begins and ends in
// the lane is noted in the warp's buffer (free once its values are read) at its place among the
// warp's runs. A segmented scan of the lanes' folds across the warp then finishes the runs
// begun in an earlier lane, and the warp stores its runs from the buffer in order, coalesced;
// one thread joins the warps' partials alike. The tile leaves its head and tail for the spine as
// segmented_reduce_tile does, with partitions[tile] = the boundaries before the tile (the last
// tile also partitions[tiles] = segments - 1), the partitions segmented_reduce_spine reads.
// (VT odd keeps a lane's reads of 4-byte values from shared memory free of bank conflicts.)
template <int NT, int VT, class I, class K, class Op>
__device__ __forceinline__ void reduce_runs_tile(const run_boundaries<I>& runs, int64_t segments, int64_t count, const K* values,
                                                 int64_t* partitions, int64_t tiles, K* out, Op op,
                                                 const reduce_partials<K>& partials) {
  static_assert(VT <= WARP_THREADS, "a warp's bit words are loaded one a lane");
  constexpr int WARPS = NT / WARP_THREADS, CHUNK = WARP_THREADS * VT;
  __shared__ __align__(16) K warp_values[WARPS][CHUNK];  // the warps' values, then their runs' folds
  __shared__ segmented_fold<K> warp_heads[WARPS], warp_tails[WARPS];
  __shared__ int64_t warp_before[WARPS];
  __shared__ bool warp_bounded[WARPS];
  __shared__ uint64_t staged;
  const int lane = (int)threadIdx.x % WARP_THREADS, warp = (int)threadIdx.x / WARP_THREADS;
  // One bulk copy: loaded by the lanes, the values were waited for a few loads at a time, at the
  // stores that put them in shared memory (BENCHMARKS.md).
  const int64_t tile_first = (int64_t)blockIdx.x * NT * VT;
  const int tile_n = (int)min((int64_t)NT * VT, count - tile_first);
  if (threadIdx.x == 0) stage_start(&warp_values[0][0], values + tile_first, tile_n, &staged);
  __syncthreads();
  const int64_t warp_first = tile_first + (int64_t)warp * CHUNK;
  const int warp_n = max(0, min(CHUNK, tile_n - warp * CHUNK));
  K* chunk = warp_values[warp];
  // Lane w < VT: the warp's word w and the boundaries before it.
  const bool has_word = lane * WARP_THREADS < warp_n;
  const unsigned word = has_word ? runs.bits[warp_first / WARP_THREADS + lane] : 0u;
  const int64_t word_before = has_word ? (int64_t)runs.before[warp_first / WARP_THREADS + lane] : 0;
  const int64_t warp_boundaries = __shfl_sync(0xffffffffu, word_before, 0);
  // The lane's items, from `first` in the chunk, and their boundary bits (within two words).
  const int first = lane * VT, n = max(0, min(VT, warp_n - first)), shift = first % WARP_THREADS;
  const unsigned low = __shfl_sync(0xffffffffu, word, first / WARP_THREADS);
  const unsigned high = __shfl_sync(0xffffffffu, word, min(first / WARP_THREADS + 1, WARP_THREADS - 1));
  const unsigned bits = (shift == 0 ? low : low >> shift | high << (WARP_THREADS - shift)) & (VT == 32 ? ~0u : (1u << VT) - 1u);
  // The warp's boundaries before the lane's items: its first word's count, then that word's
  // bits below it.
  const int64_t low_before = __shfl_sync(0xffffffffu, word_before, first / WARP_THREADS);
  const int before = n > 0 ? (int)(low_before - warp_boundaries) + __popc(low & ((1u << shift) - 1u)) : 0;
  stage_finish<NT>(&warp_values[0][0], values + tile_first, tile_n, &staged);
  K v[VT];
#pragma unroll
  for (int j = 0; j < VT; ++j)
    if (j < n) v[j] = chunk[first + j];
  __syncwarp();  // the chunk now holds runs' folds
  // The lane's fold since its last boundary (all its items where it has none), and its head:
  // its items before its first boundary.
  segmented_fold<K> tail{}, head{};
  bool bounded = false;
#pragma unroll
  for (int j = 0; j < VT; ++j) {
    if (j >= n) break;
    if (bits >> j & 1) {
      if (bounded) chunk[before + __popc(bits & ((1u << j) - 1u))] = tail.value;
      else head = tail;
      tail = segmented_fold<K>{v[j], true};
      bounded = true;
    } else {
      tail.add(v[j], op);
    }
  }
  // The lanes' tails folded across the warp, reset at each lane with a boundary.
  segmented_fold<K> x = tail;
  bool resets = bounded;
#pragma unroll
  for (int d = 1; d < WARP_THREADS; d *= 2) {
    const segmented_fold<K> y = warp_shuffle<true>(x, d);
    const bool y_resets = __shfl_up_sync(0xffffffffu, resets, d);
    if (lane >= d) {
      if (!resets) x = y.then(x, op);
      resets = resets || y_resets;
    }
  }
  // The lanes before this one: their fold since their last boundary, and whether they have one.
  segmented_fold<K> earlier = warp_shuffle<true>(x, 1);
  const bool resets_before = __shfl_up_sync(0xffffffffu, resets, 1);  // every lane shuffles
  const bool earlier_bounded = lane > 0 && resets_before;
  if (lane == 0) earlier = segmented_fold<K>{};
  if (bounded) {
    // The lane's first boundary ends the run open at its start.
    const segmented_fold<K> done = earlier.then(head, op);
    if (earlier_bounded) chunk[before] = done.value;
    else warp_heads[warp] = done;  // the warp's first boundary: its run began before the warp
  }
  const segmented_fold<K> warp_tail = warp_shuffle<false>(x, WARP_THREADS - 1);
  const bool any_bounded = __any_sync(0xffffffffu, bounded);
  // The warp's runs but its first (the warp's head, joined below), in order.
  const int warp_runs = (int)__reduce_add_sync(0xffffffffu, (unsigned)__popc(word));
  __syncwarp();
  for (int i = lane + 1; i < warp_runs; i += WARP_THREADS) out[warp_boundaries + i] = chunk[i];
  if (lane == 0) {
    warp_before[warp] = warp_boundaries;
    warp_bounded[warp] = any_bounded;
    warp_tails[warp] = warp_tail;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    segmented_fold<K> tile_carry{}, tile_head{};
    bool tile_bounded = false;
    for (int w = 0; w < WARPS; ++w) {
      if (!warp_bounded[w]) {
        tile_carry = tile_carry.then(warp_tails[w], op);
        continue;
      }
      const segmented_fold<K> done = tile_carry.then(warp_heads[w], op);
      if (tile_bounded) out[warp_before[w]] = done.value;
      else tile_head = done;
      tile_carry = warp_tails[w];
      tile_bounded = true;
    }
    if (tile_bounded) partials.heads[blockIdx.x] = tile_head;
    partials.tails[blockIdx.x] = tile_carry;
    partitions[blockIdx.x] = warp_before[0];
    if (blockIdx.x == tiles - 1) partitions[tiles] = segments - 1;
  }
}

// What a spine CTA leaves for the later ones: the fold element of its tiles (`own`, reset
// where one ends a segment) once spine_states says 1, and the fold it carries into the next
// CTA's tiles (`carried`) once it says 2.
template <class K>
struct alignas(16) spine_carry {
  segmented_fold<K> own_fold, carried;
  bool own_resets;
};

// A spine carry read past the L1 cache (another CTA of the SM may have read its line before
// it was written).
template <class K>
__device__ __forceinline__ spine_carry<K> load_spine_carry(const spine_carry<K>* at) {
  static_assert(sizeof(spine_carry<K>) % 4 == 0, "whole words");
  unsigned words[sizeof(spine_carry<K>) / 4];
#pragma unroll
  for (int i = 0; i < (int)(sizeof(spine_carry<K>) / 4); ++i) words[i] = __ldcg(reinterpret_cast<const unsigned*>(at) + i);
  spine_carry<K> x;
  memcpy(&x, words, sizeof x);
  return x;
}

// The fold carried into spine CTA `chunk` (thread 0 only): `own`, this CTA's element, is
// published (spine_states[chunk] = 1), then the CTAs before it are read back from the nearest,
// their elements combined until one has a carried fold or one resets; the CTA's own carried
// fold is published (2) and the fold carried in returned. Every CTA waited on took an earlier
// ticket, so it runs or is done.
template <class K, class Op>
__device__ __forceinline__ segmented_fold<K> spine_look_back(int64_t chunk, const segmented_scan_item<K>& own, uint64_t* states,
                                                             spine_carry<K>* carries, Op op) {
  volatile uint64_t* vstates = states;
  carries[chunk].own_fold = own.fold;
  carries[chunk].own_resets = own.resets;
  __threadfence();  // the element before the state that says it holds
  vstates[chunk] = 1;
  segmented_scan_item<K> after{segmented_fold<K>{}, false};  // the CTAs from the one read to chunk - 1
  segmented_fold<K> carried_in = segmented_fold<K>{};
  int64_t p = chunk - 1;
  for (; p >= 0 && !after.resets; --p) {
    uint64_t state;
    while ((state = vstates[p]) == 0) {
    }
    __threadfence();  // the carry read after the state that says it holds
    const spine_carry<K> x = load_spine_carry(carries + p);
    if (state == 2) {
      carried_in = x.carried.then(after.fold, op);
      break;
    }
    after = segmented_scan_item<K>{x.own_fold, x.own_resets}.then(after, op);
  }
  if (p < 0 || after.resets) carried_in = after.fold;
  carries[chunk].carried = own.resets ? own.fold : carried_in.then(own.fold, op);
  __threadfence();
  vstates[chunk] = 2;
  return carried_in;
}

// The spine: CTAs of NT threads, each over NT * SV consecutive tiles' partials in order (SV
// tiles a thread, loads issued together before it folds; the CTAs take their stretches by a
// ticket, states[chunks], and chain them by spine_look_back). A tile with boundaries
// (partitions[t] < partitions[t + 1]) ends the segment partitions[t], begun before it: its
// value is the carry (the tails and whole tiles since the last tile with boundaries) then the
// tile's head. The last CTA writes the last segment, the carry after the last tile (`empty`
// with no tiles).
template <int NT, int SV, class K, class Op>
__device__ __forceinline__ void segmented_reduce_spine(int64_t segments, int64_t tiles, const int64_t* partitions,
                                                       const reduce_partials<K>& partials, uint64_t* states,
                                                       spine_carry<K>* carries, K* out, K empty, Op op) {
  constexpr int64_t CHUNK = (int64_t)NT * SV;
  const int64_t chunks = tiles > 0 ? (tiles + CHUNK - 1) / CHUNK : 1;
  __shared__ segmented_fold_shared<NT, K> scan;
  __shared__ segmented_fold<K> carried_in;
  __shared__ int64_t chunk_index;
  if (threadIdx.x == 0) chunk_index = (int64_t)atomicAdd((unsigned long long*)&states[chunks], 1ull);
  __syncthreads();
  const int64_t chunk = chunk_index, first = chunk * CHUNK + (int64_t)threadIdx.x * SV;
  // The thread's tiles: the segment each ends (-1: none), its head and tail.
  int64_t ends[SV];
  segmented_fold<K> heads[SV], tails[SV];
#pragma unroll
  for (int i = 0; i < SV; ++i) {
    const int64_t t = first + i;
    ends[i] = -1;
    tails[i] = segmented_fold<K>{};
    if (t < tiles) {
      const int64_t a = partitions[t];
      if (a < partitions[t + 1]) {
        ends[i] = a;
        heads[i] = partials.heads[t];
      }
      tails[i] = partials.tails[t];
    }
  }
  // The thread's tiles as one element of the fold: reset where one of them ends a segment.
  segmented_fold<K> own{};
  bool resets = false;
#pragma unroll
  for (int i = 0; i < SV; ++i) {
    if (ends[i] >= 0) {
      resets = true;
      own = segmented_fold<K>{};
    }
    own = own.then(tails[i], op);
  }
  segmented_scan_item<K> total;
  const segmented_scan_item<K> before = cta_segmented_fold<NT>(own, resets, total, scan, op);  // barriers around
  if (threadIdx.x == 0) {
    carried_in = spine_look_back(chunk, total, states, carries, op);
    if (chunk == chunks - 1) {
      const segmented_fold<K> last = total.resets ? total.fold : carried_in.then(total.fold, op);
      out[segments - 1] = last.any ? last.value : empty;
    }
  }
  __syncthreads();
  segmented_fold<K> carry = before.resets ? before.fold : carried_in.then(before.fold, op);
#pragma unroll
  for (int i = 0; i < SV; ++i) {
    if (ends[i] >= 0) {
      const segmented_fold<K> done = carry.then(heads[i], op);
      out[ends[i]] = done.any ? done.value : empty;
      carry = segmented_fold<K>{};
    }
    carry = carry.then(tails[i], op);
  }
}

}  // namespace mergepath

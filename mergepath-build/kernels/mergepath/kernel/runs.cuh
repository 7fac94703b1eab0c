// Kernel layer: the runs of equal keys in a sequence (equal by the comparator: neither orders
// before the other), found in one pass: each run's first position, compacted in order. The base
// of unique, run-length encoding and reduce-by-key (the runs as the segments of a segmented
// reduction).
#pragma once
#include "../cta/scan.cuh"
#include "../cta/stage.cuh"
#include "../thread/keys.cuh"
#include "../thread/reported_count.cuh"
#include "merge.cuh"  // wait_for_previous_kernel

namespace mergepath {

// The runs' boundaries as run_boundaries reads them (where `bits` is not null): bits[w] for
// each word of 32 keys, before[w] the boundaries before it.
template <class I>
struct run_boundaries_out {
  unsigned* bits;
  I* before;
};

// A runs tile's boundary words (head_bits, the tile's n keys at `base`), key 0's bit cleared.
template <int NT>
__device__ __forceinline__ void write_boundary_bits(unsigned* bits, int64_t base, int n, const unsigned* head_bits) {
  for (int w = (int)threadIdx.x; w * 32 < n; w += NT) bits[base / 32 + w] = head_bits[w] & (base + w == 0 ? ~1u : ~0u);
}

// A runs tile's heads (head_bits, the tile's words; the thread's `heads` from key `first`, with
// `heads_before` heads before it in all tiles) as boundary words: each word, key 0's bit
// cleared, and the boundaries before it (the heads before it but key 0).
template <int NT, int VT, class I>
__device__ __forceinline__ void write_run_boundaries(const run_boundaries_out<I>& boundaries, int64_t base, int n, int first,
                                                     unsigned heads, int64_t heads_before, const unsigned* head_bits) {
  write_boundary_bits<NT>(boundaries.bits, base, n, head_bits);
  // The thread whose keys hold a word's first key counts the heads before it.
  for (int k = (first + 31) / 32 * 32; k < first + VT && k < n; k += 32) {
    const int64_t before = heads_before + __popc(heads & ((1u << (k - first)) - 1u));
    boundaries.before[(base + k) / 32] = (I)(before > 0 ? before - 1 : 0);
  }
}

// Where run_starts_tile writes each run's length: lengths[] (room for a run per key), and a
// slot a tile for the look-back's last head (cta_tile_offset's carried->lasts).
template <class I>
struct run_lengths_out {
  I* lengths;
  int64_t* tile_lasts;
};

// The lengths of a tile's runs (`tile_count` heads at head_positions[], sorted, the first run
// `offset`) whose ends the tile knows: each but the last, the run before the tile's first head
// (which began at `last_before`, -1: none), and by the last tile the last run. Called by
// `ranks` threads, this one `rank`.
template <class I>
__device__ __forceinline__ void write_run_lengths(I* lengths, int64_t base, int64_t count, bool last_tile, int tile_count,
                                                  const uint16_t* head_positions, int64_t offset, int64_t last_before, int rank,
                                                  int ranks) {
  for (int k = rank; k + 1 < tile_count; k += ranks) lengths[offset + k] = (I)(head_positions[k + 1] - head_positions[k]);
  if (rank != 0) return;
  if (tile_count > 0 && last_before >= 0) lengths[offset - 1] = (I)(base + head_positions[0] - last_before);
  if (last_tile) {
    const int64_t last_start = tile_count > 0 ? base + head_positions[tile_count - 1] : last_before;
    lengths[offset + tile_count - 1] = (I)(count - last_start);
  }
}

// Where a runs tile of few heads (at most 1 / RUNS_DEFERRED_SHARE of its keys; not the first
// tile) leaves them instead of waiting on its look-back, where `positions` is not null: slot
// `tile` (NV / RUNS_DEFERRED_SHARE items) of `positions` holds their positions in the tile, and
// of `heads` (where the call writes heads) their keys; run_deferred_tiles writes them out. So
// a deferred tile can sum the runs before it without a scan, every tile adds its count to
// `counts` (record_run_tile): its own, its group's (RUNS_GROUP_TILES tiles) and its span's
// (RUNS_GROUP_TILES groups; u32s: a span's 4,096 tiles of fewer than 2^16 keys hold fewer than
// 2^32 runs); and where the lengths are kept its last head + 1 to the maxima of its group and
// span in `lasts` (0: none).
template <class K>
struct run_deferral {
  uint16_t* positions;
  K* heads;
  unsigned* counts;
  unsigned long long* lasts;
};

// Where a tile's count (and its group's and span's) sit in run_deferral's `counts`, and its
// group's and span's last head in `lasts`.
struct run_count_slots {
  int64_t tiles, groups;
  __device__ __forceinline__ int64_t group(int64_t tile) const { return tiles + tile / RUNS_GROUP_TILES; }
  __device__ __forceinline__ int64_t span(int64_t tile) const { return tiles + groups + tile / (RUNS_GROUP_TILES * RUNS_GROUP_TILES); }
  __device__ __forceinline__ int64_t group_last(int64_t tile) const { return tile / RUNS_GROUP_TILES; }
  __device__ __forceinline__ int64_t span_last(int64_t tile) const { return groups + tile / (RUNS_GROUP_TILES * RUNS_GROUP_TILES); }
};

__device__ __forceinline__ run_count_slots run_counts_of(int64_t num_tiles) {
  return run_count_slots{num_tiles, (num_tiles + RUNS_GROUP_TILES - 1) / RUNS_GROUP_TILES};
}

// One thread of every tile, where deferral.counts is not null: the tile's count (and with
// `lasts`, its last head `last`, where it has heads) added to its own, its group's and its
// span's.
template <class K>
__device__ __forceinline__ void record_run_tile(const run_deferral<K>& deferral, int64_t num_tiles, int64_t tile, int count, int64_t last) {
  static_assert((uint64_t)RUNS_GROUP_TILES * RUNS_GROUP_TILES * 65536 <= (1ull << 32), "a span's runs in a u32");
  const run_count_slots at = run_counts_of(num_tiles);
  deferral.counts[tile] = (unsigned)count;
  atomicAdd(&deferral.counts[at.group(tile)], (unsigned)count);
  atomicAdd(&deferral.counts[at.span(tile)], (unsigned)count);
  if (deferral.lasts && count > 0) {
    atomicMax(&deferral.lasts[at.group_last(tile)], (unsigned long long)(last + 1));
    atomicMax(&deferral.lasts[at.span_last(tile)], (unsigned long long)(last + 1));
  }
}

// The shared memory of run_starts_tile: the tile's keys (key j at keys[LEAD + j], the one
// before the tile at keys[LEAD - 1]; LEAD keys are a whole number of 16-byte words, so the
// tile's keys start where a bulk copy can write), its heads' positions (u16: a tile holds
// fewer than 2^16 keys), their boundary words, the scan's.
template <int NT, int VT, class K>
struct run_starts_shared {
  static constexpr int NV = NT * VT, LEAD = stage_unit<K>();
  static_assert(NV <= 65536, "u16 positions");
  alignas(16) K keys[LEAD + NV];
  uint16_t head_positions[NV];
  unsigned head_bits[NV / 32];
  scan_shared<NT> scan;
  uint64_t staged;
  int64_t tile_index, tile_last;
};

// Thread 0 only: takes a runs tile's index from the ticket (tile_states[num_tiles]) and starts
// staging its keys (of NV) at tile_keys (stage_start); returns the index.
template <int NV, class K>
__device__ __forceinline__ int64_t take_run_tile(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states, K* tile_keys,
                                                 uint64_t* staged) {
  const int64_t tile = (int64_t)atomicAdd((unsigned long long*)&tile_states[num_tiles], 1ull), base = tile * NV;
  stage_start(tile_keys, keys + base, count - base < NV ? (int)(count - base) : NV, staged);
  return tile;
}

// All NT threads, after a barrier that follows take_run_tile: the tile at `base` staged, with
// the key before it at tile_keys[-1] (none before the first tile); returns its key count.
template <int NT, int NV, class K>
__device__ __forceinline__ int finish_run_tile(const K* keys, int64_t count, int64_t base, K* tile_keys, uint64_t* staged) {
  const int n = count - base < NV ? (int)(count - base) : NV;
  if (threadIdx.x == 0 && base > 0) tile_keys[-1] = keys[base - 1];
  stage_finish<NT>(tile_keys, keys + base, n, staged);
  return n;
}

// The heads among a thread's VT keys from `first` of a staged tile's `n` (a key unequal to
// the one before it, and key 0 of the first tile): bit i for key first + i.
template <int VT, class K, class Comp>
__device__ __forceinline__ unsigned row_heads(const K* tile_keys, int first, int n, bool first_tile, Comp comp) {
  unsigned heads = 0;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int j = first + i;
    if (j < n) {
      const K& before = tile_keys[j - 1];
      const K& key = tile_keys[j];
      if ((first_tile && j == 0) || comp(before, key) || comp(key, before)) heads |= 1u << i;
    }
  }
  return heads;
}

// A tile of run_starts_tile that leaves its `tile_count` heads in its deferral slot: its count
// published (with its last head where `carried`), its heads' positions (and keys, where
// deferral.heads is not null) in the slot, its boundary words where `bits` is not null.
template <int NT, int VT, class K>
__device__ __forceinline__ void leave_run_tile(int64_t tile, int n, int tile_count, uint64_t* tile_states, const carried_last* carried,
                                               const run_starts_shared<NT, VT, K>& shared, const run_deferral<K>& deferral,
                                               unsigned* bits) {
  constexpr int NV = NT * VT;
  __syncthreads();  // the heads' positions, bits and last head in place
  if (threadIdx.x == 0) publish_tile_count(tile, tile_count, tile_states, carried);  // for the tiles that look back past it
  const int64_t slot = tile * (NV / RUNS_DEFERRED_SHARE);
  for (int k = (int)threadIdx.x; k < tile_count; k += NT) {
    const int position = shared.head_positions[k];
    deferral.positions[slot + k] = (uint16_t)position;
    if (deferral.heads) deferral.heads[slot + k] = shared.keys[run_starts_shared<NT, VT, K>::LEAD + position];
  }
  if (bits) write_boundary_bits<NT>(bits, tile * NV, n, shared.head_bits);
}

// One tile of NT * VT keys: the positions of the tile's run heads (a key unequal to the one
// before it, and key 0) written to starts[] (where not null) after those of all earlier tiles
// (cta_tile_offset), and where `heads_out` is not null the head keys to heads_out[] alike; by
// the last tile the run count to `runs`. Both go out through shared memory, in coalesced
// stores. Where `boundaries.bits` is not null, the heads but key 0 as boundary words too (NV is
// a whole number of words); where `run_lengths.lengths` is not null, each run's length (the
// look-back carrying the last head before each tile). Tiles take their indices from a ticket
// (tile_states[num_tiles]); tile_states: num_tiles + 1 zeroed slots. The keys arrive by one
// bulk copy (stage_start), taken with the ticket, and wait in shared memory: what a tile
// holds while it looks back is its shared memory, so the entry asks for registers to match.
// Where deferral.positions is not null, a tile of few heads (run_deferral) does not look back:
// half a tile's life went to waiting on its predecessors' counts, and such a tile's heads cost
// little to store twice (BENCHMARKS.md); run_deferred_tiles finishes it.
template <int NT, int VT, class I, class K, class Comp>
__device__ __forceinline__ void run_starts_tile(const K* keys, int64_t count, int64_t num_tiles, uint64_t* tile_states,
                                                I* starts, K* heads_out, const run_boundaries_out<I>& boundaries,
                                                const run_lengths_out<I>& run_lengths, const run_deferral<K>& deferral,
                                                const reported_count& runs, Comp comp) {
  static_assert(VT <= 32, "a thread's heads are one 32-bit mask");
  using Shared = run_starts_shared<NT, VT, K>;
  constexpr int NV = Shared::NV, WORDS = NV / 32, LEAD = Shared::LEAD;
  static_assert(NV % 32 == 0, "tiles of whole boundary words");
  __shared__ Shared shared;
  K* const tile_keys = shared.keys + LEAD;  // tile_keys[-1]: the key before the tile
  if (threadIdx.x == 0) shared.tile_index = take_run_tile<NV>(keys, count, num_tiles, tile_states, tile_keys, &shared.staged);
  for (int w = (int)threadIdx.x; w < WORDS; w += NT) shared.head_bits[w] = 0;
  __syncthreads();
  const int64_t tile = shared.tile_index, base = tile * NV;
  const int n = finish_run_tile<NT, NV>(keys, count, base, tile_keys, &shared.staged);
  const int first = VT * (int)threadIdx.x;
  const unsigned heads = row_heads<VT>(tile_keys, first, n, base == 0, comp);
  int tile_count;
  const int heads_before = cta_exclusive_scan<NT>(__popc(heads), tile_count, shared.scan);
  int at = heads_before;
  for (unsigned h = heads; h; h &= h - 1) shared.head_positions[at++] = (uint16_t)(first + __ffs(h) - 1);
  if (boundaries.bits && heads) {
    atomicOr(&shared.head_bits[first / 32], heads << first % 32);
    if (first % 32 + VT > 32) atomicOr(&shared.head_bits[first / 32 + 1], heads >> (32 - first % 32));
  }
  if (heads && heads_before + __popc(heads) == tile_count) shared.tile_last = base + first + 31 - __clz(heads);
  const carried_last carried{run_lengths.tile_lasts, &shared.tile_last};
  if (deferral.positions && tile > 0 && tile_count <= NV / RUNS_DEFERRED_SHARE) {
    leave_run_tile(tile, n, tile_count, tile_states, run_lengths.lengths ? &carried : nullptr, shared, deferral, boundaries.bits);
    if (threadIdx.x == 0) record_run_tile(deferral, num_tiles, tile, tile_count, shared.tile_last);
    return;
  }
  const int64_t offset = cta_tile_offset<NT>(tile, tile_count, tile_states, shared.scan, run_lengths.lengths ? &carried : nullptr);  // barriers around
  if (deferral.positions && threadIdx.x == 0) record_run_tile(deferral, num_tiles, tile, tile_count, shared.tile_last);
  if (run_lengths.lengths)
    write_run_lengths(run_lengths.lengths, base, count, tile == num_tiles - 1, tile_count, shared.head_positions, offset,
                      shared.scan.last_before, (int)threadIdx.x, NT);
  if (boundaries.bits) write_run_boundaries<NT, VT>(boundaries, base, n, first, heads, offset + heads_before, shared.head_bits);
  for (int k = (int)threadIdx.x; k < tile_count; k += NT) {
    const int position = shared.head_positions[k];
    if (starts) starts[offset + k] = (I)(base + position);
    if (heads_out) heads_out[offset + k] = tile_keys[position];
  }
  if (tile == num_tiles - 1 && threadIdx.x == 0) runs.write((uint64_t)(offset + tile_count));
}

// After run_starts_tile with the same arguments, a warp a tile (NT / 32 tiles a CTA, from
// blockIdx.x * NT / 32): a deferred tile sums the runs before it (and finds the last head
// before it) from the spans, groups and tiles before it in deferral.counts, then writes what
// run_starts_tile would have (the heads' starts and keys, their lengths, the boundaries before
// its words) and where it is the last tile, `runs`; other tiles' warps return. Launched as a
// programmatic dependent of run_starts_tile's kernel.
template <int NT, int VT, class I, class K>
__device__ __forceinline__ void run_deferred_tiles(int64_t count, int64_t num_tiles, const uint64_t* tile_states, I* starts, K* heads_out,
                                                   const run_boundaries_out<I>& boundaries, const run_lengths_out<I>& run_lengths,
                                                   const run_deferral<K>& deferral, const reported_count& runs) {
  constexpr int NV = NT * VT, ROOM = NV / RUNS_DEFERRED_SHARE, WORDS_PER_LANE = (NV / 32 + WARP_THREADS - 1) / WARP_THREADS;
  wait_for_previous_kernel();
  const int lane = (int)threadIdx.x % WARP_THREADS;
  const int64_t tile = (int64_t)blockIdx.x * (NT / WARP_THREADS) + (int64_t)threadIdx.x / WARP_THREADS, base = tile * NV;
  // Tile 0 and the tiles that looked back end with their prefix known.
  if (tile >= num_tiles || (tile_states[tile] & TILE_PREFIX)) return;
  const run_count_slots at = run_counts_of(num_tiles);
  const int64_t group = tile / RUNS_GROUP_TILES, span = group / RUNS_GROUP_TILES;
  int64_t offset = 0;
  unsigned long long last = 0;  // the last head before the tile, + 1
  for (int64_t s = lane; s < span; s += WARP_THREADS) {
    offset += deferral.counts[at.span(s * RUNS_GROUP_TILES * RUNS_GROUP_TILES)];
    if (deferral.lasts) last = max(last, deferral.lasts[at.span_last(s * RUNS_GROUP_TILES * RUNS_GROUP_TILES)]);
  }
  for (int64_t g = span * RUNS_GROUP_TILES + lane; g < group; g += WARP_THREADS) {
    offset += deferral.counts[at.group(g * RUNS_GROUP_TILES)];
    if (deferral.lasts) last = max(last, deferral.lasts[at.group_last(g * RUNS_GROUP_TILES)]);
  }
  for (int64_t t = group * RUNS_GROUP_TILES + lane; t < tile; t += WARP_THREADS) {
    const unsigned c = deferral.counts[t];
    offset += c;
    if (deferral.lasts && c > 0) last = max(last, (unsigned long long)(run_lengths.tile_lasts[t] + 1));
  }
#pragma unroll
  for (int d = WARP_THREADS / 2; d > 0; d /= 2) {
    offset += __shfl_xor_sync(0xffffffffu, offset, d);
    last = max(last, __shfl_xor_sync(0xffffffffu, last, d));
  }
  const int tile_count = (int)deferral.counts[tile];
  if (tile == num_tiles - 1 && lane == 0) runs.write((uint64_t)(offset + tile_count));
  const int n = count - base < NV ? (int)(count - base) : NV;
  const uint16_t* positions = deferral.positions + tile * ROOM;
  if (run_lengths.lengths)
    write_run_lengths(run_lengths.lengths, base, count, tile == num_tiles - 1, tile_count, positions, offset, (int64_t)last - 1,
                      lane, WARP_THREADS);
  if (boundaries.bits) {
    // The heads before each word, from the words run_starts_tile wrote (WORDS_PER_LANE words a
    // lane, the lanes' counts scanned across the warp); tile 0's key 0, a head, is among the
    // `offset` before the tile.
    const int first_word = lane * WORDS_PER_LANE;
    unsigned bits[WORDS_PER_LANE];
    int heads = 0;
#pragma unroll
    for (int i = 0; i < WORDS_PER_LANE; ++i) {
      bits[i] = (first_word + i) * 32 < n ? boundaries.bits[base / 32 + first_word + i] : 0u;
      heads += __popc(bits[i]);
    }
    int inclusive = heads;
#pragma unroll
    for (int d = 1; d < WARP_THREADS; d *= 2) {
      const int x = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d) inclusive += x;
    }
    int64_t before = offset + inclusive - heads - 1;
#pragma unroll
    for (int i = 0; i < WORDS_PER_LANE; ++i) {
      if ((first_word + i) * 32 < n) boundaries.before[base / 32 + first_word + i] = (I)before;
      before += __popc(bits[i]);
    }
  }
  // The heads, HEADS_IN_FLIGHT a lane loaded before they are stored.
  constexpr int HEADS_IN_FLIGHT = 4;
  for (int first = 0; first < tile_count; first += HEADS_IN_FLIGHT * WARP_THREADS) {
    uint16_t position[HEADS_IN_FLIGHT];
    K key[HEADS_IN_FLIGHT];
#pragma unroll
    for (int i = 0; i < HEADS_IN_FLIGHT; ++i) {
      const int k = first + i * WARP_THREADS + lane;
      if (k >= tile_count) break;
      if (starts) position[i] = positions[k];
      if (heads_out) key[i] = deferral.heads[tile * ROOM + k];
    }
#pragma unroll
    for (int i = 0; i < HEADS_IN_FLIGHT; ++i) {
      const int k = first + i * WARP_THREADS + lane;
      if (k >= tile_count) break;
      if (starts) starts[offset + k] = (I)(base + position[i]);
      if (heads_out) heads_out[offset + k] = key[i];
    }
  }
}

// The shared memory an SM holds on architecture `arch` (as __CUDA_ARCH__: 900 for sm_90):
// 228 KB on the data-center parts from sm_90, 164 KB on sm_80 and sm_87, else 100 KB.
__host__ __device__ constexpr int shared_bytes_per_sm(int arch) {
  return (arch == 900 || arch == 1000 || arch == 1030 ? 228 : arch == 800 || arch == 870 ? 164 : 100) * 1024;
}

// The run_starts_tile CTAs an SM's shared memory holds on architecture `arch` (2,048 threads
// at most), for the entry's launch bounds.
template <int NT, int VT, class K>
__host__ __device__ constexpr int run_starts_ctas_per_sm(int arch) {
  constexpr int bytes = (int)sizeof(run_starts_shared<NT, VT, K>) + 1024;  // the CTA's reserved kilobyte
  const int per_sm = shared_bytes_per_sm(arch);
  const int ctas = per_sm / bytes < 2048 / NT ? per_sm / bytes : 2048 / NT;
  return ctas > 0 ? ctas : 1;
}

// lengths[j] = the length of run j (`runs` runs over `count` keys, starts from run_starts_tile),
// one thread each.
template <class I>
__device__ __forceinline__ void run_lengths_body(const I* starts, int64_t runs, int64_t count, I* lengths) {
  const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < runs) lengths[j] = (I)((j + 1 < runs ? (int64_t)starts[j + 1] : count) - (int64_t)starts[j]);
}

}  // namespace mergepath

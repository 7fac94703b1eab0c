// Kernel layer: the bodies of the sample sort's kernels. A distribution pass splits pieces of the
// keys into SAMPLESORT_BUCKETS buckets by SAMPLESORT_SPLITTERS splitters taken from a sorted
// sample of each piece: the keys below the first splitter, those equal to it, those between it
// and the next, ... (open buckets even, equality buckets odd). Chunks count their keys per bucket,
// one scan turns the counts into places, and the chunks (runs of tiles, one CTA each) write
// every key, stably, to its place.
// Equality buckets need no more sorting; small open buckets are finished by one CTA each
// (cta_sort_tile), large ones distributed again by the next pass.
#pragma once
#include "mergesort.cuh"  // cta_sort_tile
#include "../cta/scan.cuh"

namespace mergepath {

static_assert(((SAMPLESORT_SPLITTERS + 1) & SAMPLESORT_SPLITTERS) == 0 &&
                  SAMPLESORT_BUCKETS == 2 * SAMPLESORT_SPLITTERS + 1,
              "contract: SAMPLESORT_SPLITTERS is 2^k - 1 (an unrolled binary search), with 2 * it + 1 buckets");

// A piece's keys at `samples` evenly spaced positions: sample j is its item
// (2 j + 1) * length / (2 * samples), the middle of the j-th of `samples` equal parts.
template <class K>
struct samplesort_sample_reader {
  const K* keys;
  int64_t start, length, samples;
  __device__ __forceinline__ K operator[](int j) const {
    return keys[start + (2 * (int64_t)j + 1) * length / (2 * samples)];
  }
};

// Piece blockIdx.x's sample, sorted, to sorted[piece * samples ..] (samples <= NT * VT).
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void samplesort_samples_body(const K* keys, const samplesort_segment* segments,
                                                        int64_t num_segments, int64_t samples, K* sorted, Comp comp) {
  __shared__ K shared_keys[NT * VT];
  __shared__ int shared_positions[1];
  const int64_t g = blockIdx.x;
  if (g >= num_segments || samples > NT * VT) return;
  const samplesort_segment s = segments[g];
  cta_sort_tile<NT, VT, false, K, K>(samplesort_sample_reader<K>{keys, s.start, s.length, samples}, (const K*)nullptr,
                                     (int)samples, sorted + g * samples, (K*)nullptr, shared_keys, shared_positions, comp);
}

// The splitters of piece g: every (samples / (SPLITTERS + 1))-th item of its sorted sample.
template <int NT, class K>
__device__ __forceinline__ void samplesort_load_splitters(const K* sorted, int64_t samples, int64_t g, K* splitters) {
  const int64_t every = samples / (SAMPLESORT_SPLITTERS + 1);
  for (int i = (int)threadIdx.x; i < SAMPLESORT_SPLITTERS; i += NT) splitters[i] = sorted[g * samples + (i + 1) * every - 1];
}

// The splitters' classifier. With InRegisters (keys up to 8 bytes), every 16th splitter is
// held in registers, so a key's first four search steps are 15 independent compares instead of
// four dependent shared loads, and the last four search the 15 splitters between two of those
// in shared memory (the count kernel: 0.37 ms instead of 0.50 for 2^26 u32 keys on the H100);
// without, all eight steps search shared memory (the scatter kernel, whose registers hold a
// tile: the register splitters made it slower, 1.38 ms against 1.07).
template <class K, bool InRegisters>
struct samplesort_classifier {
  static constexpr int GROUP = 16;
  static constexpr int TOP = InRegisters && sizeof(K) <= 8 ? (SAMPLESORT_SPLITTERS + 1) / GROUP - 1 : 0;
  const K* splitters;  // shared memory, SAMPLESORT_SPLITTERS sorted keys
  K top[TOP > 0 ? TOP : 1];
  __device__ __forceinline__ explicit samplesort_classifier(const K* shared_splitters) : splitters(shared_splitters) {
#pragma unroll
    for (int k = 0; k < TOP; ++k) top[k] = splitters[GROUP * k + GROUP - 1];
  }
  // The bucket of x: with u the splitters not above x (an upper bound), 2u - 1 if x equals
  // splitter u - 1, else 2u. In [0, SAMPLESORT_BUCKETS) whatever the comparator does.
  template <class Comp>
  __device__ __forceinline__ int bucket(const K& x, Comp comp) const {
    int u = 0;
    if constexpr (TOP > 0) {
#pragma unroll
      for (int k = 0; k < TOP; ++k) u += !comp(x, top[k]);
      u *= GROUP;
#pragma unroll
      for (int step = GROUP / 2; step > 0; step /= 2)
        if (!comp(x, splitters[u + step - 1])) u += step;
    } else {
#pragma unroll
      for (int step = (SAMPLESORT_SPLITTERS + 1) / 2; step > 0; step /= 2)
        if (!comp(x, splitters[u + step - 1])) u += step;
    }
    return u > 0 && !comp(splitters[u - 1], x) ? 2 * u - 1 : 2 * u;
  }
};

// Bits of a bucket number, the sentinel SAMPLESORT_BUCKETS (items past the end) included.
constexpr int samplesort_bit_width(int x) { return x ? 1 + samplesort_bit_width(x >> 1) : 0; }
constexpr int SAMPLESORT_BUCKET_BITS = samplesort_bit_width(SAMPLESORT_BUCKETS);

// The lanes of the warp (all active) whose bucket is this lane's: one ballot per bit of the
// bucket number (faster than __match_any_sync here: BENCHMARKS.md, sample sort).
__device__ __forceinline__ unsigned samplesort_peers(int bucket) {
  unsigned peers = 0xffffffffu;
#pragma unroll
  for (int bit = 0; bit < SAMPLESORT_BUCKET_BITS; ++bit) {
    const bool set = (bucket >> bit) & 1;
    const unsigned lanes = __ballot_sync(0xffffffffu, set);
    peers &= set ? lanes : ~lanes;
  }
  return peers;
}

// Where chunk c of a distribution pass lies: its piece, its index in it, the piece's chunks,
// its first key and its length (at most chunk_items).
struct samplesort_chunk {
  samplesort_segment piece;
  int64_t segment, index, chunks, begin, count;
};

__device__ __forceinline__ samplesort_chunk samplesort_locate(const samplesort_segment* segments,
                                                              const int* chunk_segments, int64_t c,
                                                              int64_t chunk_items) {
  samplesort_chunk r;
  r.segment = chunk_segments[c];
  r.piece = segments[r.segment];
  r.chunks = (r.piece.length + chunk_items - 1) / chunk_items;
  r.index = c - r.piece.first_chunk;
  r.index = r.index < 0 ? 0 : (r.index < r.chunks ? r.index : r.chunks - 1);  // a bad table stays in the piece
  r.begin = r.piece.start + r.index * chunk_items;
  const int64_t left = r.piece.length - r.index * chunk_items;
  r.count = left < chunk_items ? left : chunk_items;
  return r;
}

// Index of a chunk's bucket count among all of the pass's counts: bucket-major within its piece.
__device__ __forceinline__ int64_t samplesort_count_index(const samplesort_chunk& r, int bucket) {
  return r.piece.first_chunk * SAMPLESORT_BUCKETS + (int64_t)bucket * r.chunks + r.index;
}

// Chunk blockIdx.x counts its keys per bucket (shared atomics) and writes the counts; its
// threads also zero scan_states[blockIdx.x * NT + tid] (below num_scan_states).
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void samplesort_count_body(const samplesort_count_params<K>& p, Comp comp) {
  __shared__ K splitters[SAMPLESORT_SPLITTERS];
  __shared__ unsigned int counts[SAMPLESORT_BUCKETS];
  const int64_t c = blockIdx.x;
  if (c >= p.num_chunks) return;
  const int tid = (int)threadIdx.x;
  if (c * NT + tid < p.num_scan_states) p.scan_states[c * NT + tid] = 0;
  const samplesort_chunk r = samplesort_locate(p.segments, p.chunk_segments, c, p.chunk_items);
  samplesort_load_splitters<NT>(p.sorted_samples, p.samples, r.segment, splitters);
  for (int b = tid; b < SAMPLESORT_BUCKETS; b += NT) counts[b] = 0;
  __syncthreads();
  const samplesort_classifier<K, true> classify(splitters);
#pragma unroll 1
  for (int64_t at = 0; at < r.count; at += NT * VT) {
    // All the tile's buckets first, then the counts: the atomics would otherwise order the
    // searches' shared loads one after another.
    int bucket[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i)
      bucket[i] = at + NT * i + tid < r.count ? classify.bucket(p.keys[r.begin + at + NT * i + tid], comp) : -1;
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (bucket[i] >= 0) atomicAdd(&counts[bucket[i]], 1u);
  }
  __syncthreads();
  for (int b = tid; b < SAMPLESORT_BUCKETS; b += NT) p.counts[samplesort_count_index(r, b)] = counts[b];
}

// offsets[i] = counts[0] + ... + counts[i - 1], SAMPLESORT_SCAN_ITEMS per thread, tiles in
// ticket order chained by decoupled look-back (cta_tile_offset).
__device__ __forceinline__ void samplesort_scan_body(const samplesort_scan_params& p) {
  constexpr int NT = SAMPLESORT_SCAN_THREADS, VT = SAMPLESORT_SCAN_ITEMS, NV = NT * VT;
  __shared__ scan_shared<NT> shared;
  __shared__ int64_t ticket;
  const int64_t tiles = (p.num_counts + NV - 1) / NV;
  if (threadIdx.x == 0) ticket = (int64_t)atomicAdd((unsigned long long*)&p.scan_states[tiles], 1ull);
  __syncthreads();
  const int64_t tile = ticket;
  if (tile >= tiles) return;  // the same in every thread
  const int64_t first = tile * NV + (int64_t)threadIdx.x * VT;
  unsigned int c[VT];
  int64_t mine = 0;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    c[i] = first + i < p.num_counts ? p.counts[first + i] : 0u;
    mine += c[i];
  }
  int64_t tile_total;
  const int64_t before = cta_exclusive_scan<NT>(mine, tile_total, shared);
  int64_t running = cta_tile_offset<NT>(tile, tile_total, p.scan_states, shared) + before;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (first + i < p.num_counts) p.offsets[first + i] = running;
    running += c[i];
  }
}

// Chunk blockIdx.x classifies its keys again, a tile of NT * VT at a time in order, and writes
// each to its place: its bucket's next place in the output (from the piece's base + the
// scanned offset of (bucket, chunk), advanced by each tile's count) + its rank among the tile's
// keys of that bucket. Ranks follow the input order: warp w takes the tile's items
// [w * 32 * VT, (w + 1) * 32 * VT), 32 at a time, and counts each bucket in a 16-bit counter
// of its own (samplesort_peers gives the lanes of a bucket their order and the count to add).
// The tile is then staged in shared memory in bucket order so the stores of a bucket are
// consecutive. A piece's first chunk also writes the piece's bucket starts.
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void samplesort_scatter_body(const K* keys, const V* values, const K* sorted_samples,
                                                        int64_t samples, const samplesort_segment* segments,
                                                        const int* chunk_segments, int64_t num_chunks,
                                                        int64_t chunk_items, const int64_t* offsets,
                                                        int64_t* bucket_starts, K* keys_out, V* values_out, Comp comp) {
  constexpr int NV = NT * VT, WARPS = NT / WARP_THREADS, B = SAMPLESORT_BUCKETS;
  constexpr int PER_THREAD = (B + NT - 1) / NT;
  static_assert(NT % WARP_THREADS == 0 && WARP_THREADS * VT <= 65535, "a warp's counts fit 16 bits");
  struct shared_t {
    K splitters[SAMPLESORT_SPLITTERS];
    K keys[NV];
    unsigned short bucket[NV];
    union {
      unsigned short warp_counts[WARPS][B + 1];  // column B: items past the tile's end
      int positions[HasValues ? NV : 1];
    } u;
    int bucket_first[B];
    int64_t bucket_out[B];  // the bucket's next place in the output, minus bucket_first
    scan_shared<NT> scan;
  };
  __shared__ shared_t s;
  const int64_t c = blockIdx.x;
  if (c >= num_chunks) return;
  const int tid = (int)threadIdx.x, warp = tid / WARP_THREADS, lane = tid % WARP_THREADS;
  const samplesort_chunk r = samplesort_locate(segments, chunk_segments, c, chunk_items);
  samplesort_load_splitters<NT>(sorted_samples, samples, r.segment, s.splitters);
  // The chunk's place in every bucket, kept by the bucket's thread across the tiles.
  int64_t next_out[PER_THREAD];
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) {
    const int b = tid * PER_THREAD + k;
    next_out[k] = 0;
    if (b >= B) continue;
    next_out[k] = r.piece.base + offsets[samplesort_count_index(r, b)];
    if (r.index == 0) bucket_starts[r.segment * B + b] = next_out[k];
  }
  const unsigned lanes_below = (1u << lane) - 1;
  const int64_t piece_end = r.piece.start + r.piece.length;
  __syncthreads();
  const samplesort_classifier<K, false> classify(s.splitters);
#pragma unroll 1
  for (int64_t at = 0; at < r.count; at += NV) {
    const int n = r.count - at < NV ? (int)(r.count - at) : NV;
    const int64_t begin = r.begin + at;
    for (int i = tid; i < WARPS * (B + 1); i += NT) (&s.u.warp_counts[0][0])[i] = 0;
    __syncthreads();
    K x[VT];
    int bucket[VT], place[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int j = warp * WARP_THREADS * VT + i * WARP_THREADS + lane;
      if (j < n) x[i] = keys[begin + j];
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int b = warp * WARP_THREADS * VT + i * WARP_THREADS + lane < n ? classify.bucket(x[i], comp) : B;
      bucket[i] = b;
      const unsigned peers = samplesort_peers(b);
      const int base = s.u.warp_counts[warp][b];
      __syncwarp();
      if ((peers & lanes_below) == 0) s.u.warp_counts[warp][b] = (unsigned short)(base + __popc(peers));
      __syncwarp();
      place[i] = base + __popc(peers & lanes_below);
    }
    __syncthreads();
    // Per bucket: the warps' counts become each warp's start within the bucket, then the
    // buckets' totals are scanned into their starts in the tile.
    int total[PER_THREAD];
    int mine = 0;
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
      const int b = tid * PER_THREAD + k;
      total[k] = 0;
      if (b >= B) continue;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        const int cw = s.u.warp_counts[w][b];
        s.u.warp_counts[w][b] = (unsigned short)total[k];
        total[k] += cw;
      }
      mine += total[k];
    }
    int tile_count;
    int first = cta_exclusive_scan<NT>(mine, tile_count, s.scan);
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
      const int b = tid * PER_THREAD + k;
      if (b >= B) continue;
      s.bucket_first[b] = first;
      s.bucket_out[b] = next_out[k] - first;
      next_out[k] += total[k];
      first += total[k];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (bucket[i] < B) place[i] += s.bucket_first[bucket[i]] + s.u.warp_counts[warp][bucket[i]];
    __syncthreads();  // the counters are read before positions overwrite them
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (bucket[i] < B && place[i] < NV) {
        s.keys[place[i]] = x[i];
        s.bucket[place[i]] = (unsigned short)bucket[i];
        if constexpr (HasValues) s.u.positions[place[i]] = warp * WARP_THREADS * VT + i * WARP_THREADS + lane;
      }
    }
    __syncthreads();
    for (int j = tid; j < n; j += NT) {
      // Inside the piece whatever the counts said: a comparator that is not a strict weak
      // order (or not deterministic) may put a key in another bucket here than when counted.
      int64_t o = s.bucket_out[s.bucket[j]] + j;
      o = o < r.piece.start ? r.piece.start : (o < piece_end ? o : piece_end - 1);
      keys_out[o] = s.keys[j];
      if constexpr (HasValues) values_out[o] = values[begin + s.u.positions[j]];
    }
    __syncthreads();  // the tile's shared arrays are read before the next tile's are written
  }
}

// Job blockIdx.x: the piece at starts[job] of jobs[job]'s length, from temp (flag
// SAMPLESORT_FINISH_FROM_TEMP) or out, written to the same place of out, sorted (flag
// SAMPLESORT_FINISH_SORT, at most NT * VT keys: consecutive buckets, which sort as one) or
// copied.
template <int NT, int VT, bool HasValues, class K, class V, class Comp>
__device__ __forceinline__ void samplesort_finish_body(const K* temp, const V* temp_values, K* out, V* out_values,
                                                       const int64_t* starts, const int* jobs, int64_t num_jobs,
                                                       Comp comp) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ int shared_positions[HasValues ? NV : 1];
  const int64_t j = blockIdx.x;
  if (j >= num_jobs) return;
  const int job = jobs[j];
  const int64_t start = starts[j];
  const int length = job & (SAMPLESORT_FINISH_FROM_TEMP - 1);
  const int n = length < NV ? length : NV;
  const bool from_temp = (job & SAMPLESORT_FINISH_FROM_TEMP) != 0;
  const K* src = (from_temp ? temp : out) + start;
  const V* src_values = HasValues ? (from_temp ? temp_values : out_values) + start : nullptr;
  if (n == 0) return;
  if (job & SAMPLESORT_FINISH_SORT) {
    cta_sort_tile<NT, VT, HasValues, K, V>(src, src_values, n, out + start, HasValues ? out_values + start : out_values,
                                           shared_keys, shared_positions, comp);
  } else if (from_temp) {
    for (int i = (int)threadIdx.x; i < n; i += NT) {
      out[start + i] = src[i];
      if constexpr (HasValues) out_values[start + i] = src_values[i];
    }
  }
}

}  // namespace mergepath

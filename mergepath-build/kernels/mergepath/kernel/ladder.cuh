// Kernel layer: the co-rank merge "ladder" of Kirk & Hwu (PMPP ch. 12) and the ECE508 lecture,
// as strategies of merge_keys beside the two-phase register merge (merge.cuh):
// - basic: every thread finds its output range's co-ranks in global memory and merges it
//   sequentially, reading and writing global memory directly;
// - tiled: one co-rank pair per CTA; the CTA then loops over tiles, loading TILE items of A and
//   of B into shared memory, each thread co-ranking and merging its share there; the unused
//   rest of each loaded tile is discarded and loaded again next time;
// - circular: the tiled kernel with circular tiles, so each iteration loads only what the
//   previous one consumed (the lecture's corrections: the consumed counts from the last,
//   possibly partial, tile's length, and the circular starts passed to the sequential merge).
// Outputs are written by each thread's sequential loop, uncoalesced, as in the book.
#pragma once
#include "../thread/search.cuh"
#include "../thread/serial.cuh"

namespace mergepath {

// Thread t merges outputs [VT t, VT t + VT) of the whole merge.
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void merge_basic_body(const K* a, int64_t m, const K* b, int64_t n, K* out, Comp comp) {
  const int64_t total = m + n;
  const int64_t t = (int64_t)blockIdx.x * NT + threadIdx.x;
  const int64_t k_curr = t * VT < total ? t * VT : total;
  const int64_t k_next = k_curr + VT < total ? k_curr + VT : total;
  if (k_curr >= k_next) return;
  const int64_t i_curr = co_rank(k_curr, a, m, b, n, comp);
  const int64_t i_next = clamp_split_end(i_curr, co_rank(k_next, a, m, b, n, comp), k_curr, k_next, m, n);
  const int64_t j_curr = k_curr - i_curr, j_next = k_next - i_next;
  merge_sequential(a + i_curr, i_next - i_curr, b + j_curr, j_next - j_curr, out + k_curr, comp);
}

// The outputs of CTA blockIdx.x: TILE * BLOCK_TILES of them, and where they start in A and B
// (one co-rank pair, found by thread 0).
struct ladder_block {
  int64_t c_begin, c_len, a_begin, a_len, b_begin, b_len;
};

template <int TILE, int BLOCK_TILES, class K, class Comp>
__device__ __forceinline__ ladder_block ladder_block_range(const K* a, int64_t m, const K* b, int64_t n,
                                                           int64_t* shared_bounds, Comp comp) {
  const int64_t total = m + n, per_block = (int64_t)TILE * BLOCK_TILES;
  const int64_t c_curr = (int64_t)blockIdx.x * per_block < total ? (int64_t)blockIdx.x * per_block : total;
  const int64_t c_next = c_curr + per_block < total ? c_curr + per_block : total;
  if (threadIdx.x == 0) {
    shared_bounds[0] = co_rank(c_curr, a, m, b, n, comp);
    shared_bounds[1] = clamp_split_end(shared_bounds[0], co_rank(c_next, a, m, b, n, comp), c_curr, c_next, m, n);
  }
  __syncthreads();
  ladder_block r;
  r.c_begin = c_curr;
  r.c_len = c_next - c_curr;
  r.a_begin = shared_bounds[0];
  r.a_len = shared_bounds[1] - r.a_begin;
  r.b_begin = c_curr - r.a_begin;
  r.b_len = (c_next - shared_bounds[1]) - r.b_begin;
  return r;
}

// One thread's share of a tile: outputs [TILE / NT * tid, ...) of the tile's c_tile outputs,
// co-ranked in the tile's A (a_tile items) and B (b_tile items), merged sequentially to
// out + its first output.
template <int NT, int TILE, class KeysA, class KeysB, class K, class Comp>
__device__ __forceinline__ void ladder_merge_tile(KeysA a_s, int a_tile, KeysB b_s, int b_tile, int c_tile, K* out,
                                                  Comp comp) {
  constexpr int PER_THREAD = TILE / NT;
  const int t_curr = PER_THREAD * (int)threadIdx.x < c_tile ? PER_THREAD * (int)threadIdx.x : c_tile;
  const int t_next = t_curr + PER_THREAD < c_tile ? t_curr + PER_THREAD : c_tile;
  const int i_curr = co_rank(t_curr, a_s, a_tile, b_s, b_tile, comp);
  const int i_next = clamp_split_end(i_curr, co_rank(t_next, a_s, a_tile, b_s, b_tile, comp), t_curr, t_next, a_tile, b_tile);
  const int j_curr = t_curr - i_curr, j_next = t_next - i_next;
  merge_sequential(advance(a_s, i_curr), i_next - i_curr, advance(b_s, j_curr), j_next - j_curr, out + t_curr, comp);
}

// The book's merge_tiled_kernel: CTA blockIdx.x merges its TILE * BLOCK_TILES outputs one tile
// at a time; each iteration loads the next TILE items of A and of B (fewer at the end of
// data), merges min(TILE, rest) outputs from them and keeps the count consumed from each.
template <int NT, int TILE, int BLOCK_TILES, class K, class Comp>
__device__ __forceinline__ void merge_tiled_body(const K* a, int64_t m, const K* b, int64_t n, K* out, Comp comp) {
  static_assert(TILE % NT == 0, "a tile is a whole number of items per thread");
  __shared__ K a_s[TILE], b_s[TILE];
  __shared__ int64_t bounds[2];
  const ladder_block r = ladder_block_range<TILE, BLOCK_TILES>(a, m, b, n, bounds, comp);
  int64_t a_consumed = 0, b_consumed = 0;
  for (int64_t c_completed = 0; c_completed < r.c_len;) {
    const int a_tile = r.a_len - a_consumed < TILE ? (int)(r.a_len - a_consumed) : TILE;
    const int b_tile = r.b_len - b_consumed < TILE ? (int)(r.b_len - b_consumed) : TILE;
    for (int i = threadIdx.x; i < TILE; i += NT) {
      if (i < a_tile) a_s[i] = a[r.a_begin + a_consumed + i];
      if (i < b_tile) b_s[i] = b[r.b_begin + b_consumed + i];
    }
    __syncthreads();
    const int c_tile = r.c_len - c_completed < TILE ? (int)(r.c_len - c_completed) : TILE;
    ladder_merge_tile<NT, TILE>(a_s, a_tile, b_s, b_tile, c_tile, out + r.c_begin + c_completed, comp);
    const int a_used = co_rank(c_tile, a_s, a_tile, b_s, b_tile, comp);
    a_consumed += a_used;
    b_consumed += c_tile - a_used;
    c_completed += c_tile;
    __syncthreads();  // the tiles are read before the next iteration loads them
  }
}

// The book's merge_circular_buffer_kernel: as merge_tiled_body, but the tiles are circular
// buffers holding A[a_consumed, a_consumed + TILE) and B's likewise, so each iteration loads
// only the items the previous one consumed, into the slots they freed.
template <int NT, int TILE, int BLOCK_TILES, class K, class Comp>
__device__ __forceinline__ void merge_circular_body(const K* a, int64_t m, const K* b, int64_t n, K* out, Comp comp) {
  static_assert(TILE % NT == 0, "a tile is a whole number of items per thread");
  __shared__ K a_s[TILE], b_s[TILE];
  __shared__ int64_t bounds[2];
  const ladder_block r = ladder_block_range<TILE, BLOCK_TILES>(a, m, b, n, bounds, comp);
  int64_t a_consumed = 0, b_consumed = 0;
  int a_start = 0, b_start = 0;      // where the buffers' first items are
  int a_refill = TILE, b_refill = TILE;  // slots freed by the last iteration (all, at first)
  for (int64_t c_completed = 0; c_completed < r.c_len;) {
    // Load A[a_consumed + TILE - a_refill + t] into slot a_start + TILE - a_refill + t (mod
    // TILE), t < a_refill, up to the end of the CTA's A; B likewise.
    for (int t = threadIdx.x; t < TILE; t += NT) {
      const int64_t a_item = a_consumed + TILE - a_refill + t, b_item = b_consumed + TILE - b_refill + t;
      const int a_slot = (a_start + TILE - a_refill + t) % TILE, b_slot = (b_start + TILE - b_refill + t) % TILE;
      if (t < a_refill && a_item < r.a_len) a_s[a_slot] = a[r.a_begin + a_item];
      if (t < b_refill && b_item < r.b_len) b_s[b_slot] = b[r.b_begin + b_item];
    }
    __syncthreads();
    const int a_tile = r.a_len - a_consumed < TILE ? (int)(r.a_len - a_consumed) : TILE;
    const int b_tile = r.b_len - b_consumed < TILE ? (int)(r.b_len - b_consumed) : TILE;
    const int c_tile = r.c_len - c_completed < TILE ? (int)(r.c_len - c_completed) : TILE;
    const circular_buffer<TILE, K> a_c{a_s, a_start}, b_c{b_s, b_start};
    ladder_merge_tile<NT, TILE>(a_c, a_tile, b_c, b_tile, c_tile, out + r.c_begin + c_completed, comp);
    a_refill = co_rank(c_tile, a_c, a_tile, b_c, b_tile, comp);
    b_refill = c_tile - a_refill;
    a_consumed += a_refill;
    b_consumed += b_refill;
    c_completed += c_tile;
    a_start = advance(a_c, a_refill).start;
    b_start = advance(b_c, b_refill).start;
    __syncthreads();  // the consumed slots are read before they are refilled
  }
}

}  // namespace mergepath

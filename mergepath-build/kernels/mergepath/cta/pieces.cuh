// CTA layer: the pieces of a segmented sort's tile (its segments, cut at the tile's ends):
// the piece each of a thread's items is in, and the stable ranking of short pieces by counting.
#pragma once
#include "../thread/count.cuh"
#include "../thread/keys.cuh"
#include "../thread/search.cuh"

namespace mergepath {

// The piece (of the tile's segments) holding each of a thread's VT items in thread order:
// the number of starts[0..m) at or before the item (starts sorted, in shared memory).
template <int VT, class Start>
__device__ __forceinline__ void cta_segment_pieces(const Start* starts, int m, int n, int (&piece)[VT]) {
  const int p0 = VT * (int)threadIdx.x < n ? VT * (int)threadIdx.x : n - 1;
  int next = sorted_bound<true>(starts, m, p0, less_t<int>());
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int at = VT * (int)threadIdx.x + i < n ? VT * (int)threadIdx.x + i : n - 1;
    while (next < m && starts[next] <= at) ++next;
    piece[i] = next;
  }
}

// Ranks keys[0..n) in shared memory stably within each piece [starts[u - 1], starts[u])
// (starts[-1] = 0, starts[m] = n; piece[i] = item i's u; every piece at most SHORT_PIECE
// items): on return owner[p] (n + 1 slots) is the item that goes to place p, or >= n where a
// comparator that is not a strict weak order left p unclaimed. The keys stay where they are.
//
// Item i goes to its piece's start plus the number of the piece's items ordered before it (one
// comparison per pair of items). A thread counts for a group of GROUP neighbouring items of one
// piece, so each key it loads serves GROUP comparisons; groups are dealt to the threads by
// their piece's length (`order`, n slots of scratch), so a warp's groups loop equally long.
// Equal keys claim one place (the first claim stands: a compare-and-swap, so no two threads'
// stores meet), leaving the places after it unclaimed: each such place is then filled, in
// item order, by the items equal to the one that claimed it (stability).
constexpr int SHORT_PIECE = 64;
template <int NT, int VT, class K, class Comp>
__device__ __forceinline__ void cta_rank_pieces(const K* keys, const unsigned short* starts, const unsigned short* piece,
                                                unsigned short* order, unsigned short* owner, int m, int n, Comp comp) {
  constexpr int GROUP = sizeof(K) <= 8 ? 4 : 2;
  constexpr unsigned short UNCLAIMED = 0xffff;
  static_assert(VT <= 32, "a bit per place of a thread");
  static_assert(SHORT_PIECE == 64, "two piece lengths per lane of the scan below");
  // Piece u's items [b, e).
  const auto piece_bounds = [&](int u, int& b, int& e) {
    b = u > 0 ? starts[u - 1] : 0;
    e = u < m ? starts[u] : n;
  };
  // Deal the groups by piece length, longest first: each piece takes a place in its length's
  // stretch of `order` (owner[u]: its offset there), the stretches are laid out by a scan of
  // their sizes, and each group goes to its piece's place plus its rank in the piece.
  __shared__ int stretch[SHORT_PIECE + 1];
  if (threadIdx.x < SHORT_PIECE) stretch[threadIdx.x] = 0;
  __syncthreads();
  for (int u = threadIdx.x; u <= m; u += NT) {
    int b, e;
    piece_bounds(u, b, e);
    if (e > b) owner[u] = (unsigned short)atomicAdd(&stretch[SHORT_PIECE - (e - b)], (e - b + GROUP - 1) / GROUP);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x, v0 = stretch[2 * lane], v1 = stretch[2 * lane + 1];
    int sum = v0 + v1;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int o = __shfl_up_sync(0xffffffffu, sum, d);
      if (lane >= d) sum += o;
    }
    stretch[2 * lane] = sum - v0 - v1;
    stretch[2 * lane + 1] = sum - v1;
    if (lane == 31) stretch[SHORT_PIECE] = sum;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += NT) {
    const int u = piece[i];
    int b, e;
    piece_bounds(u, b, e);
    if ((i - b) % GROUP == 0) order[stretch[SHORT_PIECE - (e - b)] + owner[u] + (i - b) / GROUP] = (unsigned short)i;
  }
  __syncthreads();
  const int groups = stretch[SHORT_PIECE];
  for (int p = threadIdx.x; p < n; p += NT) owner[p] = UNCLAIMED;
  __syncthreads();
  // Each item claims its place (of equal keys' claims, one stands).
#pragma unroll 1
  for (int g = threadIdx.x; g < groups; g += NT) {
    const int i = order[g];
    int b, e;
    piece_bounds(piece[i], b, e);
    K x[GROUP];
    int before[GROUP];
#pragma unroll
    for (int k = 0; k < GROUP; ++k) {
      x[k] = keys[i + k < e ? i + k : e - 1];
      before[k] = 0;
    }
#pragma unroll 4
    for (int j = b; j < e; ++j) {
      const K y = keys[j];
#pragma unroll
      for (int k = 0; k < GROUP; ++k) count_if(before[k], comp(y, x[k]));
    }
#pragma unroll
    for (int k = 0; k < GROUP; ++k)  // inside the piece whatever the comparator
      if (i + k < e) atomicCAS(&owner[b + before[k] < e ? b + before[k] : e - 1], UNCLAIMED, (unsigned short)(i + k));
  }
  __syncthreads();
  // Places claimed by equal keys: a claimed place followed by an unclaimed one in its piece.
  unsigned tied = 0;
  for (int p = threadIdx.x, k = 0; p < n; p += NT, ++k) {
    if (owner[p] == UNCLAIMED || p + 1 >= n || owner[p + 1] != UNCLAIMED) continue;
    int b, e;
    piece_bounds(piece[p], b, e);
    if (p + 1 < e) tied |= 1u << k;
  }
  if (__syncthreads_or(tied != 0)) {
    // Each run of unclaimed places is measured (into `order`, free now) before any is filled:
    // the fill of the next run writes the place that ends this one.
    for (int p = threadIdx.x, k = 0; p < n; p += NT, ++k) {
      if (!(tied >> k & 1)) continue;
      int b, e;
      piece_bounds(piece[p], b, e);
      int end = p + 1;
      while (end < e && owner[end] == UNCLAIMED) ++end;
      order[p] = (unsigned short)end;
    }
    __syncthreads();
    for (int p = threadIdx.x, k = 0; p < n; p += NT, ++k) {
      if (!(tied >> k & 1)) continue;
      int b, e;
      piece_bounds(piece[p], b, e);
      const int end = order[p];
      const K x = keys[owner[p]];
      for (int j = b, d = p; j < e && d < end; ++j)
        if (!comp(keys[j], x) && !comp(x, keys[j])) owner[d++] = (unsigned short)j;
    }
    __syncthreads();
  }
}

}  // namespace mergepath

// CTA layer: moving a tile between global memory, shared memory and registers, and merging a
// tile that sits in shared memory. Each function is called by all NT threads of the CTA.
// Indices inside a tile are `int`: a tile holds at most NT * VT items.
#pragma once
#include "../thread/codec.cuh"
#include "../thread/serial.cuh"
#include "../thread/sort_network.cuh"

namespace mergepath {

// The slice of A and B that tile `tile` merges, from the coarse partitions (`partitions[i]` is
// the A index where cross-diagonal i * nv meets the merge path).
struct merge_range {
  int64_t a_begin, a_end, b_begin, b_end;
  __device__ __forceinline__ int a_count() const { return (int)(a_end - a_begin); }
  __device__ __forceinline__ int b_count() const { return (int)(b_end - b_begin); }
  __device__ __forceinline__ int count() const { return a_count() + b_count(); }
};

// The range of a tile that outputs diagonals [diag0, diag1) of the merge of A = a[0, a_count)
// and B = b[0, b_count) (at a_base, b_base), given the merge path's A positions at both
// diagonals. On sorted inputs the range is exact. On unsorted ones two searches can cross
// (the predicate is not monotone), so the end is clamped to a range that stays inside both
// inputs with diag1 - diag0 items in all (clamp_split_end): unspecified output, never an
// out-of-bounds access.
__device__ __forceinline__ merge_range merge_range_between(int64_t a_base, int64_t a_count, int64_t b_base,
                                                           int64_t b_count, int64_t diag0, int64_t diag1,
                                                           int64_t a0, int64_t a1) {
  // In tile-local ints (a tile is at most INT_MAX items): A's share clamped to [n - B's room,
  // A's room], each room capped at n.
  const int n = (int)(diag1 - diag0);
  const int64_t a_room = a_count - a0, b_room = b_count - (diag0 - a0);
  const int a_hi = a_room < n ? (int)a_room : n, a_lo = b_room < n ? n - (int)b_room : 0;
  const int64_t a_raw = a1 - a0;
  const int a_n = a_raw < a_lo ? a_lo : (a_raw > a_hi ? a_hi : (int)a_raw);
  return {a_base + a0, a_base + a0 + a_n, b_base + diag0 - a0, b_base + diag0 - a0 + (n - a_n)};
}

__device__ __forceinline__ merge_range compute_merge_range(int64_t a_count, int64_t b_count,
                                                           int64_t tile, int nv,
                                                           const int64_t* partitions) {
  const int64_t total = a_count + b_count;
  const int64_t diag0 = tile * nv;
  const int64_t diag1 = diag0 + nv < total ? diag0 + nv : total;
  return merge_range_between(0, a_count, 0, b_count, diag0, diag1, partitions[tile], partitions[tile + 1]);
}

// A tile's input as N consecutive global ranges: tile position i is in range r where
// start[r] <= i < start[r + 1] (start[0] == 0), at range[r][i - start[r]]. A range is a
// pointer or, for keys stored in another form, a reader such as encoding_reader.
template <int N, class T, class Src = const T*>
struct tile_ranges {
  Src range[N];
  int start[N + 1];
  // Nested conditionals on compile-time indices, so the struct stays in registers.
  template <int R = 0>
  __device__ __forceinline__ T operator[](int i) const {
    if constexpr (R + 1 == N) return range[R][i - start[R]];
    else return i < start[R + 1] ? range[R][i - start[R]] : operator[]<R + 1>(i);
  }
};

// A[0..a_count) followed by B: the two inputs of a merge tile.
template <class T>
__device__ __forceinline__ tile_ranges<2, T> two_ranges(const T* a, int a_count, const T* b, int count) {
  return tile_ranges<2, T>{{a, b}, {0, a_count, count}};
}

// Loads the tile src[0..count) into shared[0..count), coalesced. All VT loads are issued
// before the first shared store so they are in flight together.
template <int NT, int VT, int N, class T, class Src>
__device__ __forceinline__ void cta_load_ranges(const tile_ranges<N, T, Src>& src, int count, T* shared) {
  T x[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) x[i] = src[idx];
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) shared[idx] = x[i];
  }
}

// Loads A[0..a_count) followed by B[0..count - a_count) into shared[0..count), coalesced.
template <int NT, int VT, class T>
__device__ __forceinline__ void cta_load_two_ranges(const T* a, int a_count, const T* b, int count,
                                                    T* shared) {
  cta_load_ranges<NT, VT>(two_ranges(a, a_count, b, count), count, shared);
}

// Loads src[0..count) into registers in thread order (thread t gets items VT*t .. VT*t+VT-1),
// through `shared` (NT * VT slots) so the global loads are coalesced. Items past `count` get
// copies of the last item (count >= 1). Ends with `shared` still in use: call
// cta_store_thread_order (which starts with a barrier) or synchronize before writing `shared`.
// `src` is a pointer or a reader (encoding_reader).
template <int NT, int VT, class T, class Src>
__device__ __forceinline__ void cta_load_thread_order(Src src, int count, T* shared, T (&values)[VT]) {
  cta_load_ranges<NT, VT>(tile_ranges<1, T, Src>{{src}, {0, count}}, count, shared);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = VT * (int)threadIdx.x + i;
    values[i] = shared[idx < count ? idx : count - 1];
  }
}

// Stores VT values per thread, held in thread order (thread t holds items VT*t .. VT*t+VT-1),
// to out[0..count) with coalesced stores, transposing through `shared` (NT * VT slots).
// Starts with a barrier, so `shared` may still be in use by other threads when called. `out`
// is a pointer or a writer (decoding_writer).
template <int NT, int VT, class T, class Out>
__device__ __forceinline__ void cta_store_thread_order(const T (&values)[VT], T* shared, Out out,
                                                       int count) {
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) shared[VT * (int)threadIdx.x + i] = values[i];
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) out[idx] = shared[idx];
  }
}

// Merges a tile already in shared memory (A in keys[0..a_count), B in keys[a_count..count)):
// one merge-path search per thread at diagonal VT * tid, then the serial merge of VT items.
// The caller must have synchronized after loading `keys`. Returns the thread's split (the
// tile's items of A and of B before its first item; they sum to min(VT * tid, count)). `Tie`
// as in merge_path: the partitions of the tiles must use the same.
template <int NT, int VT, tie Tie = tie::a_first, class K, class Comp>
__device__ __forceinline__ merge_split cta_merge_from_shared(const K* keys, int a_count, int count,
                                                             K (&results)[VT], int (&indices)[VT],
                                                             Comp comp) {
  return serial_merge_at<VT, Tie>(keys, 0, a_count, count, VT * (int)threadIdx.x, results, indices, comp);
}

// Loads the tile of merge range `r` (A's slice of `a`, then B's of `b`) into `shared_keys` and
// merges it: each thread's VT results and their tile-local source positions (< r.a_count():
// from A). Ends with `shared_keys` still in use (synchronize before writing it). Returns the
// thread's split, as cta_merge_from_shared.
template <int NT, int VT, tie Tie = tie::a_first, class K, class Comp>
__device__ __forceinline__ merge_split cta_load_merge(const K* a, const K* b, const merge_range& r, K* shared_keys,
                                                      K (&results)[VT], int (&indices)[VT], Comp comp) {
  cta_load_two_ranges<NT, VT>(a + r.a_begin, r.a_count(), b + r.b_begin, r.count(), shared_keys);
  __syncthreads();
  return cta_merge_from_shared<NT, VT, Tie>(shared_keys, r.a_count(), r.count(), results, indices, comp);
}

// Which input a merged item comes from (`partition::Source` on the host).
enum class source { a, b };

// Merges the tile of merge range `r` held in shared memory (A's slice in keys[0..r.a_count()),
// B's after it, synchronized after loading) and calls `visit(out_index, src, source_index, key)`
// on each of the thread's items in merge order: `out_index` is the item's position in the
// whole merge, `src` its input and `source_index` its index in the whole of that input (not in
// the tile), as `partition::visit_merge_tiles_cpu` visits them on the CPU. Items past the end
// of a short tile are not visited. Returns the thread's split, as cta_merge_from_shared.
template <int NT, int VT, tie Tie = tie::a_first, class K, class Visit, class Comp>
__device__ __forceinline__ merge_split cta_merge_visit(const K* keys, const merge_range& r, Visit visit, Comp comp) {
  const int a_n = r.a_count(), count = r.count();
  K results[VT];
  int indices[VT];
  const merge_split split = cta_merge_from_shared<NT, VT, Tie>(keys, a_n, count, results, indices, comp);
  const int first = VT * (int)threadIdx.x;
  // A tile's merge starts at diagonal a_begin + b_begin.
  const int64_t out_begin = r.a_begin + r.b_begin + first;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (first + i < count) {
      const int s = indices[i];
      if (s < a_n) visit(out_begin + i, source::a, r.a_begin + s, results[i]);
      else visit(out_begin + i, source::b, r.b_begin + (s - a_n), results[i]);
    }
  }
  return split;
}

// Writes each thread's VT keys (and with HasValues their positions), held in thread order,
// back to shared memory for the next round of a merge, between two barriers: the previous
// round's reads are done before the writes, and the writes are visible after.
template <int VT, bool HasValues, class K>
__device__ __forceinline__ void cta_restage_thread_order(const K (&keys)[VT], const int (&positions)[VT], K* shared_keys,
                                                         int* shared_positions) {
  const int first = VT * (int)threadIdx.x;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    shared_keys[first + i] = keys[i];
    if constexpr (HasValues) shared_positions[first + i] = positions[i];
  }
  __syncthreads();
}

// Sorts a tile of `count` keys held in registers in thread order, stably: each thread sorts
// its VT keys (odd_even_transposition_sort, or merge_exchange_sort where stability cannot be
// seen: keys alone, equal keys the same bits), then log2(NT) rounds merge sorted lists of VT,
// 2 VT, ... NT/2 VT keys pairwise through shared memory, `coop` threads per merge. With
// HasValues, `positions` (tile-local source positions, usually VT * tid + i) move with the
// keys, so values can be gathered once at the end instead of moving through every round.
// Items past `count` (a partial last tile) are padded in the last valid thread with its
// largest key, which a stable sort keeps behind the real items (an unstable one may swap it
// with the real item it copies, the same bits), and excluded from the merges
// by clamping every list to `count`. On return the sorted tile is in registers in thread
// order and the shared arrays are still in use (store with cta_store_thread_order, which
// starts with a barrier). NT must be a power of two.
template <int NT, int VT, bool HasValues, class K, class Comp>
__device__ __forceinline__ void cta_blocksort(K (&keys)[VT], int (&positions)[VT], int count,
                                              K* shared_keys, int* shared_positions, Comp comp) {
  static_assert((NT & (NT - 1)) == 0, "cta_blocksort needs a power-of-two CTA");
  const int tid = (int)threadIdx.x;
  const int first = VT * tid;
  if constexpr (HasValues) {
    // A comparator that is not a strict weak order can move padding among the first `count`
    // items: its positions then still name an item of the tile.
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (first + i >= count) positions[i] = count - 1;
  }
  if (first < count && first + VT > count) {
    K largest = keys[0];
#pragma unroll
    for (int i = 1; i < VT; ++i)
      if (first + i < count && comp(largest, keys[i])) largest = keys[i];
#pragma unroll
    for (int i = 1; i < VT; ++i)
      if (first + i >= count) keys[i] = largest;
  }
  // Keys alone under an order whose equal keys are the same bits need no stable sort here.
  if constexpr (!HasValues && order_is_identity<Comp>::value) merge_exchange_sort<VT>(keys, comp);
  else odd_even_transposition_sort<VT, HasValues>(keys, positions, comp);
#pragma unroll 1
  for (int coop = 2; coop <= NT; coop *= 2) {
    cta_restage_thread_order<VT, HasValues>(keys, positions, shared_keys, shared_positions);
    const int list = VT * coop / 2;
    const int start = (tid & ~(coop - 1)) * VT;
    const int a_begin = start < count ? start : count;
    const int a_end = start + list < count ? start + list : count;
    const int b_end = start + 2 * list < count ? start + 2 * list : count;
    int indices[VT];
    serial_merge_at<VT>(shared_keys, a_begin, a_end, b_end, VT * (tid & (coop - 1)), keys, indices, comp);
    if constexpr (HasValues) {
#pragma unroll
      for (int i = 0; i < VT; ++i)
        if (first + i < count) positions[i] = shared_positions[indices[i]];
    }
  }
}

// Writes out[j] = src[shared_indices[j]] for j in [0, count), coalesced: values gathered
// through source positions already in shared memory (the caller synchronized after writing
// them). With InPlace, `out` may overlap `src`: a barrier separates all the CTA's loads from its
// stores.
template <int NT, int VT, class V, bool InPlace = false, int N, class Src>
__device__ __forceinline__ void cta_gather_shared(const int* shared_indices, const tile_ranges<N, V, Src>& src,
                                                  V* out, int count) {
  V x[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) x[i] = src[shared_indices[idx]];
  }
  if constexpr (InPlace) __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int idx = NT * i + (int)threadIdx.x;
    if (idx < count) out[idx] = x[i];
  }
}

// Writes out[j] = src[indices'[j]] for j in [0, count): the values that follow the keys,
// gathered through the merge's source positions. `indices` is in thread order and goes
// through `shared_indices` (NT * VT ints) so the stores are coalesced. InPlace as in
// cta_gather_shared.
template <int NT, int VT, class V, bool InPlace = false, int N, class Src>
__device__ __forceinline__ void cta_gather_values(const int (&indices)[VT], int* shared_indices,
                                                  const tile_ranges<N, V, Src>& src, V* out, int count) {
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i) shared_indices[VT * (int)threadIdx.x + i] = indices[i];
  __syncthreads();
  cta_gather_shared<NT, VT, V, InPlace>(shared_indices, src, out, count);
}

}  // namespace mergepath

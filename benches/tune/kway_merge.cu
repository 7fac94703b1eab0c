// The sort engine's pieces measured alone (issue 38): (1) the k-way tile merge — a tile's slices
// of k sorted runs merged in shared memory by cta_merge_lists (pairwise, ceil(log2 k) rounds) —
// given exact splits computed on the host, so no partition search is timed; four ways of loading
// the slices: the library's multiway_merge_tile (each item finds its slice by a binary search
// over the slice starts), one warp per slice (coalesced, no search), a lean tile (one warp scans
// the k starts; all loads of a thread in flight) and a persistent tile that copies its next
// tile's slices with cp.async while it merges the current one; (2) the merge rounds alone, on
// tiles already holding k equal sorted lists, pairwise as cta_merge_lists or in the blocksort's
// fixed thread groups; (3) the blocksort on tiles of 1x, 2x and 4x the tuning table's (NT = 256,
// 512, 1024 threads, dynamic shared memory), the passes a larger tile saves being log2 of the
// factor; (4) the sort's four-way tile generalized to 8 and 16 ways (tile_tree: fixed pairs
// by level, the slices laid out so each level feeds the next, the straddling threads going on
// by their lists' tags; measured 2026-11-27 and dropped: BENCHMARKS.md). Build and run on the GPU machine, from the repository root, with the generated
// headers in .gpu/include (timing.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/kway_merge.cu -o /tmp/kway_merge && /tmp/kway_merge [log2_n [k]]
// (k > 0: that k alone, 256-thread tiles, no blocksorts: for ncu; k = -1: the rounds alone;
// k = -2: k = 2 .. 32 with the library, warp-load, lean, group and tree tiles only).
// Prints TSV: what key_bytes k nt vt ms gbytes_s of_copy ok (of_copy: the device copy's time of
// the same bytes over this one's).
#include <mergepath/kernel/multiway.cuh>
#include <mergepath/kernel/mergesort.cuh>
#include <mergepath/thread/keys.cuh>
#include "timing.cuh"
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using mergepath::less_t;

template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) tile_library(const K* const* inputs, const int64_t* counts, int ways, int64_t total,
                                                   const int64_t* splits, K* out) {
  mergepath::multiway_merge_tile<NT, VT, false, K, K>(inputs, (const K* const*)nullptr, counts, ways, total, splits, out,
                                                      (K*)nullptr, less_t<K>());
}

// The same tile, its slices loaded one warp per slice.
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) tile_warp_load(const K* const* inputs, const int64_t* counts, int ways, int64_t total,
                                                     const int64_t* splits, K* out) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ mergepath::multiway_slices_shared<NT> slices;
  const int64_t diag0 = (int64_t)blockIdx.x * NV;
  const int n_out = total - diag0 < NV ? (int)(total - diag0) : NV;
  const int64_t* row0 = splits + blockIdx.x * (int64_t)ways;
  const int n = mergepath::multiway_slices<NT>(ways, mergepath::multiway_ranges_between<NT>(counts, ways, row0, row0 + ways), n_out, slices);
  const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
  for (int t = warp; t < ways; t += NT / 32) {
    const K* src = inputs[t] + slices.begin[t];
    for (int i = slices.start[t] + lane; i < slices.start[t + 1]; i += 32) shared_keys[i] = src[i - slices.start[t]];
  }
  __syncthreads();
  K keys[VT];
  int positions[VT];
  mergepath::cta_merge_lists<NT, VT, false>(keys, positions, n, slices.start, ways, shared_keys, (int*)nullptr, less_t<K>());
  mergepath::cta_store_thread_order<NT, VT>(keys, shared_keys, out + diag0, n);
}

// The persistent, pipelined tile: each CTA takes tiles blockIdx.x, + gridDim.x, ... and, while it
// merges one, its next tile's slices are already on their way into the second buffer
// (cp.async, one item per copy, consecutive threads on consecutive items of a slice), so the
// loads' latency hides behind the merge rounds.
template <int NT, int VT, class K> struct pipelined_shared {
  K keys[2][NT * VT];
  mergepath::multiway_slices_shared<NT> slices[2];
};

// Finds tile `tile`'s slices into slices[b] and starts copying them into keys[b]; commits one
// cp.async group. Returns the tile's length.
template <int NT, int VT, class K>
__device__ __forceinline__ int start_tile(const K* const* inputs, const int64_t* counts, int ways, int64_t total,
                                          const int64_t* splits, int64_t tile, int b, pipelined_shared<NT, VT, K>& sh) {
  constexpr int NV = NT * VT;
  const int64_t diag0 = tile * NV;
  const int n_out = total - diag0 < NV ? (int)(total - diag0) : NV;
  const int64_t* row0 = splits + tile * (int64_t)ways;
  auto& s = sh.slices[b];
  const int n = mergepath::multiway_slices<NT>(ways, mergepath::multiway_ranges_between<NT>(counts, ways, row0, row0 + ways), n_out, s);
  int t = -1;
  const K* src = nullptr;  // slice t's item i is src[i]
  for (int i = (int)threadIdx.x; i < n; i += NT) {
    if (t < 0 || s.start[t + 1] <= i) {
      do ++t; while (s.start[t + 1] <= i);
      src = inputs[t] + s.begin[t] - s.start[t];
    }
    __pipeline_memcpy_async(&sh.keys[b][i], src + i, sizeof(K));
  }
  __pipeline_commit();
  return n;
}

template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) tile_pipelined(const K* const* inputs, const int64_t* counts, int ways, int64_t total,
                                                     const int64_t* splits, K* out) {
  constexpr int NV = NT * VT;
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  auto& sh = *reinterpret_cast<pipelined_shared<NT, VT, K>*>(dynamic_shared);
  const int64_t tiles = (total + NV - 1) / NV;
  int64_t tile = blockIdx.x;
  if (tile >= tiles) return;
  int b = 0;
  int n = start_tile<NT, VT>(inputs, counts, ways, total, splits, tile, 0, sh);
  for (; tile < tiles; tile += gridDim.x, b ^= 1) {
    const int64_t next = tile + gridDim.x;
    int n_next = 0;
    if (next < tiles) n_next = start_tile<NT, VT>(inputs, counts, ways, total, splits, next, b ^ 1, sh);
    else __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    K keys[VT];
    int positions[VT];
    mergepath::cta_merge_lists<NT, VT, false>(keys, positions, n, sh.slices[b].start, ways, sh.keys[b], (int*)nullptr,
                                              less_t<K>());
    mergepath::cta_store_thread_order<NT, VT>(keys, sh.keys[b], out + tile * NV, n);
    n = n_next;
  }
}

// The first warp of a lean or group tile: the tile's slices found from its split row (k <= 32
// ways) by one shuffle scan of their lengths: start[t], the tile position of slice t's first
// item (start[ways] = n), and src[t], so that the slice's item at tile position i is src[t][i].
__device__ __forceinline__ int warp_inclusive_sum(int x) {
  const int lane = (int)(threadIdx.x % 32);
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  return x;
}
template <class K>
__device__ __forceinline__ void warp_slice_starts(const K* const* inputs, int ways, const int64_t* splits, int n,
                                                  int* start, const K** src) {
  const int lane = (int)threadIdx.x;
  const int64_t* row = splits + blockIdx.x * (int64_t)ways;
  const int64_t lo = lane < ways ? row[lane] : 0, hi = lane < ways ? row[ways + lane] : 0;
  const int len = (int)(hi - lo);
  const int incl = warp_inclusive_sum(len);
  if (lane < ways) {
    start[lane] = incl - len;
    src[lane] = inputs[lane] + lo - (incl - len);
  }
  if (lane == 0) start[ways] = n;
}

// A lean tile: the k slices' starts by one warp's scan (no CTA-wide scan over MULTIWAY_MAX_WAYS
// slots), every thread's VT loads in flight together (each item's slice by a binary search over
// the k starts in shared memory), then the same rounds and store. K <= 32 ways.
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) tile_lean(const K* const* inputs, int ways, int64_t total, const int64_t* splits, K* out) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ int start[33];
  __shared__ const K* src[32];  // slice t's item i (tile position) is src[t][i]
  const int tid = (int)threadIdx.x;
  const int64_t diag0 = (int64_t)blockIdx.x * NV;
  const int n = total - diag0 < NV ? (int)(total - diag0) : NV;
  if (tid < 32) warp_slice_starts(inputs, ways, splits, n, start, src);
  __syncthreads();
  K x[VT];
#pragma unroll
  for (int j = 0; j < VT; ++j) {
    const int i = tid + j * NT;
    if (i < n) {
      int lo = 0, hi = ways;  // the last slice starting at or before i
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (start[mid] <= i) lo = mid;
        else hi = mid;
      }
      x[j] = src[lo][i];
    }
  }
#pragma unroll
  for (int j = 0; j < VT; ++j)
    if (tid + j * NT < n) shared_keys[tid + j * NT] = x[j];
  __syncthreads();
  K keys[VT];
  int positions[VT];
  mergepath::cta_merge_lists<NT, VT, false>(keys, positions, n, start, ways, shared_keys, (int*)nullptr, less_t<K>());
  mergepath::cta_store_thread_order<NT, VT>(keys, shared_keys, out + diag0, n);
}

// Thread groups sized to the pairs: the lean tile's loads, but each thread's slice found by
// walking the starts (its items are NT apart, so its slice only moves forward), and in each
// round pair p of the lists merged by ceil(items / VT) threads of its own, so no thread
// straddles two pairs or tests where its pair ends (the blocksort's fixed groups, for lists of
// any length). NT + 32 threads: k <= 32 makes at most 16 pairs, each with one partial thread.
template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT + 32) tile_groups(const K* const* inputs, int ways, int64_t total, const int64_t* splits, K* out) {
  constexpr int NV = NT * VT, NTT = NT + 32;
  __shared__ K shared_keys[NV];
  __shared__ int start[33];
  __shared__ int group[17];  // pair p's threads are group[p] .. group[p + 1]
  __shared__ const K* src[32];
  const int tid = (int)threadIdx.x;
  const int64_t diag0 = (int64_t)blockIdx.x * NV;
  const int n = total - diag0 < NV ? (int)(total - diag0) : NV;
  if (tid < 32) warp_slice_starts(inputs, ways, splits, n, start, src);
  __syncthreads();
  if (tid < NT) {
    K x[VT];
    int s = 0;
#pragma unroll
    for (int j = 0; j < VT; ++j) {
      const int i = tid + j * NT;
      while (s + 1 < ways && start[s + 1] <= i) ++s;
      if (i < n) x[j] = src[s][i];
    }
#pragma unroll
    for (int j = 0; j < VT; ++j)
      if (tid + j * NT < n) shared_keys[tid + j * NT] = x[j];
  }
#pragma unroll 1
  for (int stride = 1; stride < ways; stride *= 2) {
    const int lists = (ways + stride - 1) / stride, pairs = (lists + 1) / 2;
    const auto bound = [&](int list) { return start[list * stride < ways ? list * stride : ways]; };
    __syncthreads();
    if (tid < 32) {
      const int c = tid < pairs ? (bound(2 * tid + 2) - bound(2 * tid) + VT - 1) / VT : 0;
      const int incl = warp_inclusive_sum(c);
      if (tid < pairs) group[tid + 1] = incl;
      if (tid == 0) group[0] = 0;
    }
    __syncthreads();
    K keys[VT];
    int indices[VT];
    int pos = 0, count = 0;
    if (tid < group[pairs]) {
      int lo = 0, hi = pairs;
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (group[mid] <= tid) lo = mid;
        else hi = mid;
      }
      const int a0 = bound(2 * lo), a1 = bound(2 * lo + 1), b1 = bound(2 * lo + 2);
      const int d = (tid - group[lo]) * VT;
      mergepath::serial_merge_at<VT>(shared_keys, a0, a1, b1, d, keys, indices, less_t<K>());
      pos = a0 + d;
      count = b1 - pos < VT ? b1 - pos : VT;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (i < count) shared_keys[pos + i] = keys[i];
  }
  __syncthreads();
  for (int i = tid; i < n; i += NTT) out[diag0 + i] = shared_keys[i];
}

// The merge rounds alone: each tile already holds k sorted lists of NT * VT / k keys (a
// multiple of VT), loaded with coalesced loads; then ceil(log2 k) rounds merge them, either
// as the multiway tile does (cta_merge_lists: every thread searches its pair among all pairs and
// tests at every step whether its pair ended) or as the blocksort does (lists of equal length,
// so a fixed group of 2 * list / VT threads merges each pair: no pair search, no test).
template <int NT, int VT, bool Pairwise, class K>
__global__ void __launch_bounds__(NT) rounds_only(const K* in, int ways, K* out) {
  constexpr int NV = NT * VT;
  __shared__ K shared_keys[NV];
  __shared__ int start[NT + 1];
  const int tid = (int)threadIdx.x;
  const K* src = in + (int64_t)blockIdx.x * NV;
  for (int i = tid; i < NV; i += NT) shared_keys[i] = src[i];
  const int list = NV / ways;
  for (int t = tid; t <= ways; t += NT) start[t] = t * list;
  __syncthreads();
  K keys[VT];
  int positions[VT];
  if constexpr (Pairwise) {
    mergepath::cta_merge_lists<NT, VT, false>(keys, positions, NV, start, ways, shared_keys, (int*)nullptr, less_t<K>());
  } else {
#pragma unroll 1
    for (int len = list; len < NV; len *= 2) {
      if (len > list) mergepath::cta_restage_thread_order<VT, false>(keys, positions, shared_keys, (int*)nullptr);
      const int coop = 2 * len / VT;
      const int first = (tid & ~(coop - 1)) * VT;
      mergepath::serial_merge_at<VT>(shared_keys, first, first + len, first + 2 * len, VT * (tid & (coop - 1)), keys,
                                     positions, less_t<K>());
    }
  }
  mergepath::cta_store_thread_order<NT, VT>(keys, shared_keys, out + (int64_t)blockIdx.x * NV, NV);
}

template <int NT, int VT, class K>
__global__ void __launch_bounds__(NT) blocksort_dynamic(const K* in, int64_t count, K* out) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  mergepath::blocksort_tile_in<NT, VT, false, K, K>(in, (const K*)nullptr, count, out, (K*)nullptr, (K*)dynamic_shared,
                                                    (int*)nullptr, less_t<K>());
}

// k runs of n / k keys (together a strictly increasing sequence dealt to the runs at random), the
// splits at every tile boundary, and the merged result they must give.
template <class K> struct KwayInput {
  size_t n;
  int k;
  std::vector<K> merged;
  std::vector<int> label;  // the run each item of `merged` went to
  K* keys = nullptr;       // the runs, one after another
  K** inputs = nullptr;
  int64_t* counts = nullptr;
  KwayInput(size_t n_, int k_) : n(n_ - n_ % k_), k(k_), merged(n), label(n) {
    std::mt19937_64 g(k);
    uint64_t x = 0;
    const uint64_t step = sizeof(K) == 4 ? 60 : (uint64_t(1) << 32);  // n * step stays in K for n <= 2^26
    for (auto& m : merged) m = (K)(x += 1 + g() % step);
    for (size_t i = 0; i < n; ++i) label[i] = (int)(i % k);
    std::shuffle(label.begin(), label.end(), g);
    std::vector<K> runs(n);
    std::vector<size_t> at(k);
    for (int t = 0; t < k; ++t) at[t] = t * (n / k);
    for (size_t i = 0; i < n; ++i) runs[at[label[i]]++] = merged[i];
    CK(cudaMalloc(&keys, n * sizeof(K)));
    CK(cudaMemcpy(keys, runs.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    std::vector<K*> ptrs(k);
    std::vector<int64_t> cnt(k, (int64_t)(n / k));
    for (int t = 0; t < k; ++t) ptrs[t] = keys + t * (n / k);
    CK(cudaMalloc(&inputs, k * sizeof(K*)));
    CK(cudaMalloc(&counts, k * sizeof(int64_t)));
    CK(cudaMemcpy(inputs, ptrs.data(), k * sizeof(K*), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(counts, cnt.data(), k * sizeof(int64_t), cudaMemcpyHostToDevice));
  }
  ~KwayInput() { cudaFree(keys); cudaFree(inputs); cudaFree(counts); }
  // Rows of k splits at ranks 0, nv, 2 nv, ..., n (as multiway_merge_tile reads them).
  int64_t* splits(int nv) const {
    const size_t tiles = (n + nv - 1) / nv;
    std::vector<int64_t> rows((tiles + 1) * k), seen(k, 0);
    for (size_t i = 0; i <= n; ++i) {
      if (i % nv == 0 || i == n) std::copy(seen.begin(), seen.end(), rows.begin() + (i + nv - 1) / nv * k);
      if (i < n) ++seen[label[i]];
    }
    int64_t* d;
    CK(cudaMalloc(&d, rows.size() * sizeof(int64_t)));
    CK(cudaMemcpy(d, rows.data(), rows.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    return d;
  }
};

// The sort's four-way tile generalized to W = 4, 8 or 16 ways (issue 38's k-way pass in the
// sort4 tile's shape): the W slices loaded so that each level's output is the next level's
// two-list layout (X = the first half of the lists, Y = the second; pair i merges list i with
// list i + half), then log2 W levels, each merging all its pairs in one pass over the threads
// (a thread that straddles two pairs goes on into the next by its lists' tags, as
// serial_merge_two_at does for two). For W = 8 the slices lie as A E C G | B F D H: level 1
// puts out AB EF CD GH, level 2 ABCD EFGH, level 3 the tile. No pair search, no per-item
// slice search; the cost over the rounds alone is the tags' compares per step.
template <int P, int VT, class K>
__device__ __forceinline__ void serial_merge_pairs_tagged(const K* keys, const int (&xs)[P + 1], const int (&ys)[P + 1],
                                                          int diag, K (&results)[VT]) {
  const int x_end = xs[P], y_end = ys[P];
  // The pair this thread starts in, and its merge path there.
  int p = 0;
#pragma unroll
  for (int q = 1; q < P; ++q)
    if (xs[q] + (ys[q] - x_end) <= diag) p = q;
  int xb = xs[0], xe = xs[1], yb = ys[0], ye = ys[1];
#pragma unroll
  for (int q = 1; q < P; ++q)
    if (p == q) { xb = xs[q]; xe = xs[q + 1]; yb = ys[q]; ye = ys[q + 1]; }
  const int local = diag - (xb + (yb - x_end));
  const int mp = mergepath::merge_path<1>(keys + xb, xe - xb, keys + yb, ye - yb, local, mergepath::less_t<K>());
  int a = xb + mp, b = yb + local - mp;
  const int last = y_end > 0 ? y_end - 1 : 0;
  K a_key = keys[a < last ? a : last], b_key = keys[b < last ? b : last];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    int la = 0, lb = 0;  // the lists a and b are in
#pragma unroll
    for (int q = 1; q < P; ++q) {
      la += a >= xs[q];
      lb += b >= ys[q];
    }
    const bool take_a = b >= y_end || (a < x_end && (la != lb ? la < lb : !(b_key < a_key)));
    results[i] = take_a ? a_key : b_key;
    a += take_a;
    b += !take_a;
    const int next = take_a ? a : b;
    const K key = keys[next < last ? next : last];
    a_key = take_a ? key : a_key;
    b_key = take_a ? b_key : key;
  }
}

// One level of tile_tree: `lists` = 2 P lists in shared memory, list j at [start[j], start[j + 1]).
template <int P, int NT, int VT, class K>
__device__ __forceinline__ void tree_level(K* shared, const int* start, int n, K (&results)[VT]) {
  int xs[P + 1], ys[P + 1];
#pragma unroll
  for (int q = 0; q <= P; ++q) {
    xs[q] = start[q];
    ys[q] = start[P + q];
  }
  const int first = VT * (int)threadIdx.x;
  if (first < n) serial_merge_pairs_tagged<P, VT>(shared, xs, ys, first, results);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < VT; ++i)
    if (first + i < n) shared[first + i] = results[i];
  __syncthreads();
}

template <int NT, int VT, int W, class K>
__global__ void __launch_bounds__(NT) tile_tree(const K* const* inputs, int64_t total, const int64_t* splits, K* out) {
  constexpr int NV = NT * VT;
  __shared__ K shared[NV];
  __shared__ int start[W + 1];
  const int64_t diag0 = (int64_t)blockIdx.x * NV;
  const int64_t* row0 = splits + blockIdx.x * (int64_t)W;
  const int64_t* row1 = row0 + W;
  // Slot j of the layout holds run `order[j]`: X half 2 rev(j), Y half 2 rev(j) + 1.
  constexpr int H = W / 2;
  mergepath::tile_ranges<W, K> src;
  src.start[0] = 0;
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const int i = j % H;
    int rev = 0;
    for (int bit = 1, r = H / 2; bit < H; bit *= 2, r /= 2) rev |= (i & bit) ? r : 0;
    const int run = 2 * rev + (j >= H);
    src.range[j] = inputs[run] + row0[run];
    src.start[j + 1] = src.start[j] + (int)(row1[run] - row0[run]);
  }
  const int n = src.start[W];
  if (threadIdx.x <= W) start[threadIdx.x] = threadIdx.x == 0 ? 0 : src.start[threadIdx.x];
  mergepath::cta_load_ranges<NT, VT>(src, n, shared);
  __syncthreads();
  K results[VT];
  // After a level, list q of the output is pair q's merge: its start is X q's plus Y q's.
  const auto halve = [&](int lists) {
    int s[W + 1];
    for (int q = 0; q <= lists / 2; ++q) s[q] = start[q] + (start[lists / 2 + q] - start[lists / 2]);
    __syncthreads();
    if (threadIdx.x <= lists / 2) start[threadIdx.x] = s[threadIdx.x];
    __syncthreads();
  };
  if constexpr (W >= 16) { tree_level<8, NT, VT>(shared, start, n, results); halve(16); }
  if constexpr (W >= 8) { tree_level<4, NT, VT>(shared, start, n, results); halve(8); }
  tree_level<2, NT, VT>(shared, start, n, results);
  halve(4);
  const int first = VT * (int)threadIdx.x;
  if (first < n) serial_merge_pairs_tagged<1, VT>(shared, {start[0], start[1]}, {start[1], start[2]}, first, results);
  mergepath::cta_store_thread_order<NT, VT>(results, shared, out + diag0, n);
}

static float copy_ms_of(size_t bytes) {
  void *a, *b;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  const float ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  cudaFree(a); cudaFree(b);
  return ms;
}

template <class K> static void report(const char* what, int k, int nt, int vt, size_t n, float ms, float copy_ms, bool ok) {
  printf("%s\t%zu\t%d\t%d\t%d\t%.4f\t%.1f\t%.3f\t%s\n", what, sizeof(K), k, nt, vt, ms, 2.0 * n * sizeof(K) / ms / 1e6,
         copy_ms / ms, ok ? "ok" : "WRONG");
  fflush(stdout);
}

static bool groups_only = false;  // k <= -2: the library, warp-load, lean and group tiles only

template <int NT, int VT, class K> void kway(const KwayInput<K>& in, K* out, float copy_ms) {
  const int nv = NT * VT;
  int64_t* splits = in.splits(nv);
  const unsigned tiles = (unsigned)((in.n + nv - 1) / nv);
  auto check = [&] {
    std::vector<K> got(in.n);
    CK(cudaMemcpy(got.data(), out, in.n * sizeof(K), cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0, in.n * sizeof(K)));
    return got == in.merged;
  };
  float ms = median_ms([&] { tile_library<NT, VT, K><<<tiles, NT>>>(in.inputs, in.counts, in.k, (int64_t)in.n, splits, out); });
  CK(cudaGetLastError());
  report<K>("tile_library", in.k, NT, VT, in.n, ms, copy_ms, check());
  ms = median_ms([&] { tile_warp_load<NT, VT, K><<<tiles, NT>>>(in.inputs, in.counts, in.k, (int64_t)in.n, splits, out); });
  CK(cudaGetLastError());
  report<K>("tile_warp_load", in.k, NT, VT, in.n, ms, copy_ms, check());
  if (in.k <= 32) {
    ms = median_ms([&] { tile_lean<NT, VT, K><<<tiles, NT>>>(in.inputs, in.k, (int64_t)in.n, splits, out); });
    CK(cudaGetLastError());
    report<K>("tile_lean", in.k, NT, VT, in.n, ms, copy_ms, check());
    ms = median_ms([&] { tile_groups<NT, VT, K><<<tiles, NT + 32>>>(in.inputs, in.k, (int64_t)in.n, splits, out); });
    CK(cudaGetLastError());
    report<K>("tile_groups", in.k, NT, VT, in.n, ms, copy_ms, check());
  }
  if (in.k == 4 || in.k == 8 || in.k == 16) {
    const auto tree = [&] {
      if (in.k == 4) tile_tree<NT, VT, 4, K><<<tiles, NT>>>(in.inputs, (int64_t)in.n, splits, out);
      else if (in.k == 8) tile_tree<NT, VT, 8, K><<<tiles, NT>>>(in.inputs, (int64_t)in.n, splits, out);
      else tile_tree<NT, VT, 16, K><<<tiles, NT>>>(in.inputs, (int64_t)in.n, splits, out);
    };
    ms = median_ms(tree);
    CK(cudaGetLastError());
    report<K>("tile_tree", in.k, NT, VT, in.n, ms, copy_ms, check());
  }
  if (groups_only) {
    cudaFree(splits);
    return;
  }
  const int bytes = (int)sizeof(pipelined_shared<NT, VT, K>);
  CK(cudaFuncSetAttribute(tile_pipelined<NT, VT, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tile_pipelined<NT, VT, K>, NT, bytes));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int ctas = 1; ctas <= per_sm; ++ctas) {
    const unsigned grid = (unsigned)std::min<size_t>(tiles, (size_t)sms * ctas);
    ms = median_ms([&] { tile_pipelined<NT, VT, K><<<grid, NT, bytes>>>(in.inputs, in.counts, in.k, (int64_t)in.n, splits, out); });
    CK(cudaGetLastError());
    char what[64];
    snprintf(what, sizeof what, "tile_pipelined_%dper_sm", ctas);
    report<K>(what, in.k, NT, VT, in.n, ms, copy_ms, check());
  }
  cudaFree(splits);
}

template <int NT, int VT, class K> void blocksort(size_t n, float copy_ms) {
  const int nv = NT * VT;
  const size_t bytes = (size_t)nv * sizeof(K);
  CK(cudaFuncSetAttribute(blocksort_dynamic<NT, VT, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  std::mt19937_64 g(7);
  std::vector<K> h(n);
  for (auto& x : h) x = (K)g();
  K *in, *out;
  CK(cudaMalloc(&in, n * sizeof(K))); CK(cudaMalloc(&out, n * sizeof(K)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  const unsigned tiles = (unsigned)((n + nv - 1) / nv);
  const float ms = median_ms([&] { blocksort_dynamic<NT, VT, K><<<tiles, NT, bytes>>>(in, (int64_t)n, out); });
  CK(cudaGetLastError());
  std::vector<K> got(n);
  CK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (size_t t = 0; t < n; t += nv) {
    const size_t e = std::min(n, t + nv);
    std::sort(h.begin() + t, h.begin() + e);
    ok = ok && std::equal(h.begin() + t, h.begin() + e, got.begin() + t);
  }
  report<K>("blocksort", 1, NT, VT, n, ms, copy_ms, ok);
  cudaFree(in); cudaFree(out);
}

template <int NT, int VT, class K> void rounds(size_t n, float copy_ms) {
  constexpr int NV = NT * VT;
  n -= n % NV;
  std::mt19937_64 g(11);
  std::vector<K> h(n);
  for (auto& x : h) x = (K)g();
  K *in, *out;
  CK(cudaMalloc(&in, n * sizeof(K))); CK(cudaMalloc(&out, n * sizeof(K)));
  std::vector<K> want = h;
  for (size_t t = 0; t < n; t += NV) std::sort(want.begin() + t, want.begin() + t + NV);
  for (int k = 2; k <= NT; k *= 2) {
    std::vector<K> lists = h;
    for (size_t t = 0; t < n; t += NV / k) std::sort(lists.begin() + t, lists.begin() + t + NV / k);
    CK(cudaMemcpy(in, lists.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    const unsigned tiles = (unsigned)(n / NV);
    for (int pairwise = 0; pairwise < 2; ++pairwise) {
      const float ms = median_ms([&] {
        if (pairwise) rounds_only<NT, VT, true, K><<<tiles, NT>>>(in, k, out);
        else rounds_only<NT, VT, false, K><<<tiles, NT>>>(in, k, out);
      });
      CK(cudaGetLastError());
      std::vector<K> got(n);
      CK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
      report<K>(pairwise ? "rounds_pairwise" : "rounds_fixed_groups", k, NT, VT, n, ms, copy_ms, got == want);
    }
    if (k >= 64) break;
  }
  cudaFree(in); cudaFree(out);
}

// `only_k` > 0: that k alone, the 256-thread large-VT tiles, no blocksorts (for a profiler).
template <class K, int VT_SMALL, int VT_LARGE> void run_type(size_t n, int only_k) {
  const float copy_ms = copy_ms_of(n * sizeof(K));
  printf("copy\t%zu\t-\t-\t-\t%.4f\t%.1f\t1.000\tok\n", sizeof(K), copy_ms, 2.0 * n * sizeof(K) / copy_ms / 1e6);
  K* out;
  CK(cudaMalloc(&out, n * sizeof(K)));
  for (int k : {2, 4, 8, 16, 32, 64}) {
    if (only_k > 0 && k != only_k) continue;
    KwayInput<K> in(n, k);
    if (only_k == 0) kway<128, VT_LARGE, K>(in, out, copy_ms);
    kway<256, VT_LARGE, K>(in, out, copy_ms);
    if (only_k == 0) kway<256, VT_SMALL, K>(in, out, copy_ms);
  }
  cudaFree(out);
  if (only_k > 0) return;
  blocksort<256, VT_LARGE, K>(n, copy_ms);
  blocksort<512, VT_LARGE, K>(n, copy_ms);
  blocksort<1024, VT_LARGE, K>(n, copy_ms);
  blocksort<512, VT_SMALL, K>(n, copy_ms);
}

int main(int argc, char** argv) {
  const size_t n = size_t(1) << (argc > 1 ? atoi(argv[1]) : 26);
  const int only_k = argc > 2 ? atoi(argv[2]) : 0;
  printf("what\tkey_bytes\tk\tnt\tvt\tms\tgbytes_s\tof_copy\tok\n");
  if (only_k <= -2) {  // the tiles without the pipelined one, k = 2 .. 32, 256 threads
    groups_only = true;
    for (int k = 2; k <= 32; k *= 2) {
      run_type<uint32_t, 11, 23>(n, k);
      run_type<uint64_t, 7, 15>(n, k);
    }
    return 0;
  }
  if (only_k < 0) {  // the merge rounds alone
    rounds<256, 23, uint32_t>(n, copy_ms_of(n * sizeof(uint32_t)));
    rounds<256, 15, uint64_t>(n, copy_ms_of(n * sizeof(uint64_t)));
    return 0;
  }
  run_type<uint32_t, 11, 23>(n, only_k);
  run_type<uint64_t, 7, 15>(n, only_k);
  return 0;
}

// Reduce-by-key's values kernel (kernel/segmented_reduce.cuh's reduce_runs_tile, its sums)
// measured alone, against `lean`: the same tile whose lanes fold from the sum's identity (no
// flag a fold, no select a value) and count their runs' slots as they go (no popcount a
// boundary). ncu found the library's tile bound by its instructions (BENCHMARKS.md, "Where
// reduce-by-key's time goes"). Build and run on the GPU machine, from the repository root,
// with the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/reduce_runs_shapes.cu -o /tmp/reduce_runs_shapes && /tmp/reduce_runs_shapes [log2_n ...]
// Inputs: n sorted u32 keys in runs of 1 to 32 or of 1 or 2 (benches/cub/runs.cu's), their
// runs' boundary words as the runs-finding kernel writes them, u32 values. Prints TSV: variant
// runs nt vt n ms of_copy same, where ms is the tile kernel alone (no spine), of_copy the device
// copy of the values over that time, and `same` whether its outputs (the runs inside tiles, the
// tiles' partial sums) equal the library tile's.
#include <mergepath/kernel/segmented_reduce.cuh>
#include "timing.cuh"

namespace mergepath {
template <int NT, int VT, class I, class K, class Op>
__device__ __forceinline__ void lean_runs_tile(const run_boundaries<I>& runs, int64_t segments, int64_t count, const K* values,
                                                 int64_t* partitions, int64_t tiles, K* out, Op op,
                                                 const reduce_partials<K>& partials) {
  static_assert(VT <= WARP_THREADS, "a warp's bit words are loaded one a lane");
  constexpr int WARPS = NT / WARP_THREADS, CHUNK = WARP_THREADS * VT;
  __shared__ K warp_values[WARPS][CHUNK];  // the warp's values, then its runs' folds
  __shared__ segmented_fold<K> warp_heads[WARPS], warp_tails[WARPS];
  __shared__ int64_t warp_before[WARPS];
  __shared__ bool warp_bounded[WARPS];
  const int lane = (int)threadIdx.x % WARP_THREADS, warp = (int)threadIdx.x / WARP_THREADS;
  const int64_t warp_first = ((int64_t)blockIdx.x * WARPS + warp) * CHUNK;
  const int warp_n = warp_first < count ? (int)min((int64_t)CHUNK, count - warp_first) : 0;
  K* chunk = warp_values[warp];
#pragma unroll
  for (int i = 0; i < VT; ++i)
    if (i * WARP_THREADS + lane < warp_n) chunk[i * WARP_THREADS + lane] = values[warp_first + i * WARP_THREADS + lane];
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
  __syncwarp();  // the chunk's rows, staged by every lane, read in a lane's stretch
  K v[VT];
#pragma unroll
  for (int j = 0; j < VT; ++j)
    if (j < n) v[j] = chunk[first + j];
  __syncwarp();  // the chunk now holds runs' folds
  // The lane's fold since its last boundary (all its items where it has none), and its head:
  // its items before its first boundary.
  K tail_sum = K(0), head_sum = K(0);
  bool bounded = false;
  int slot = before + 1;  // where the lane's next run that begins and ends in it goes
#pragma unroll
  for (int j = 0; j < VT; ++j) {
    if (j < n) {
      if (bits >> j & 1) {
        if (bounded) chunk[slot++] = tail_sum;
        else head_sum = tail_sum;
        tail_sum = K(0);
        bounded = true;
      }
      tail_sum = op(tail_sum, v[j]);
    }
  }
  const segmented_fold<K> tail{tail_sum, n > 0}, head{head_sum, true};
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
}  // namespace mergepath

using K = uint32_t;
using I = uint32_t;
using Sum = mergepath::reduce_sum<K>;

struct Tile {
  mergepath::run_boundaries<I> runs;
  int64_t segments, count, tiles;
  const K* values;
  int64_t* partitions;
  K* out;
  mergepath::reduce_partials<K> partials;
};

template <int NT, int VT>
__global__ void __launch_bounds__(NT, 2048 / NT) library(const Tile t) {
  mergepath::reduce_runs_tile<NT, VT>(t.runs, t.segments, t.count, t.values, t.partitions, t.tiles, t.out, Sum(), t.partials);
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT, 2048 / NT) lean(const Tile t) {
  mergepath::lean_runs_tile<NT, VT>(t.runs, t.segments, t.count, t.values, t.partitions, t.tiles, t.out, Sum(), t.partials);
}

struct Input {
  size_t n, runs;
  K* values;
  unsigned* bits;
  I* before;
  float copy_ms;
  Input(size_t n_, uint64_t longest) : n(n_) {
    uint64_t s = 9;  // benches/cub/anchor.cuh's SplitMix64, seed 9
    auto next = [&] {
      s += 0x9e3779b97f4a7c15ull;
      uint64_t z = s;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      return z ^ (z >> 31);
    };
    const size_t words = (n + 31) / 32;
    std::vector<unsigned> h_bits(words, 0);
    std::vector<I> h_before(words, 0);
    runs = 0;
    for (size_t at = 0; at < n; ++runs) {
      if (at > 0) h_bits[at / 32] |= 1u << (at % 32);
      at += 1 + next() % longest;
    }
    I seen = 0;
    for (size_t w = 0; w < words; ++w) {
      h_before[w] = seen;
      seen += (I)__builtin_popcount(h_bits[w]);
    }
    std::vector<K> h_values(n);
    for (size_t i = 0; i < n; ++i) h_values[i] = (K)(i * 2654435761u);
    CK(cudaMalloc(&values, n * sizeof(K)));
    CK(cudaMalloc(&bits, words * 4));
    CK(cudaMalloc(&before, words * sizeof(I)));
    CK(cudaMemcpy(values, h_values.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bits, h_bits.data(), words * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(before, h_before.data(), words * sizeof(I), cudaMemcpyHostToDevice));
    K* copy;
    CK(cudaMalloc(&copy, n * sizeof(K)));
    copy_ms = median_ms([&] { CK(cudaMemcpyAsync(copy, values, n * sizeof(K), cudaMemcpyDeviceToDevice)); }, 50);
    CK(cudaFree(copy));
  }
};

// A tile kernel's outputs: the runs and both partials, zeroed before each call.
struct Outputs {
  Tile tile;
  size_t partial_bytes;
  Outputs(const Input& in, int64_t tiles) {
    tile.runs = {in.bits, in.before};
    tile.segments = (int64_t)in.runs;
    tile.count = (int64_t)in.n;
    tile.tiles = tiles;
    tile.values = in.values;
    partial_bytes = tiles * sizeof(mergepath::segmented_fold<K>);
    CK(cudaMalloc(&tile.partitions, (tiles + 1) * 8));
    CK(cudaMalloc(&tile.out, in.runs * sizeof(K)));
    CK(cudaMalloc(&tile.partials.heads, partial_bytes));
    CK(cudaMalloc(&tile.partials.tails, partial_bytes));
    clear(in);
  }
  void clear(const Input& in) const {
    CK(cudaMemset(tile.out, 0, in.runs * sizeof(K)));
    CK(cudaMemset(tile.partials.heads, 0, partial_bytes));
    CK(cudaMemset(tile.partials.tails, 0, partial_bytes));
  }
  // The runs and the partials' sums (a fold with no items counts as 0).
  std::vector<K> sums(const Input& in) const {
    std::vector<K> got(in.runs);
    CK(cudaMemcpy(got.data(), tile.out, in.runs * sizeof(K), cudaMemcpyDeviceToHost));
    for (auto* p : {tile.partials.heads, tile.partials.tails}) {
      std::vector<mergepath::segmented_fold<K>> f(tile.tiles);
      CK(cudaMemcpy(f.data(), p, partial_bytes, cudaMemcpyDeviceToHost));
      for (const auto& x : f) got.push_back(x.any ? x.value : 0);
    }
    return got;
  }
  void free_all() const {
    CK(cudaFree(tile.partitions));
    CK(cudaFree(tile.out));
    CK(cudaFree(tile.partials.heads));
    CK(cudaFree(tile.partials.tails));
  }
};

template <int NT, int VT>
void measure(const Input& in, const char* runs_name) {
  const int64_t tiles = (int64_t)((in.n + NT * VT - 1) / (NT * VT));
  const Outputs want(in, tiles), got(in, tiles);
  library<NT, VT><<<(unsigned)tiles, NT>>>(want.tile);
  CK(cudaDeviceSynchronize());
  const std::vector<K> want_sums = want.sums(in);
  auto run = [&](const char* variant, auto kernel) {
    got.clear(in);
    const float ms = median_ms([&] { kernel<<<(unsigned)tiles, NT>>>(got.tile); });
    CK(cudaGetLastError());
    printf("%s\t%s\t%d\t%d\t%zu\t%.4f\t%.2f\t%s\n", variant, runs_name, NT, VT, in.n, ms, in.copy_ms / ms,
           got.sums(in) == want_sums ? "same" : "DIFFERENT");
    fflush(stdout);
  };
  run("library", library<NT, VT>);
  run("lean", lean<NT, VT>);
  want.free_all();
  got.free_all();
}

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(atoi(argv[i]));
  if (sizes.empty()) sizes = {24, 26};
  printf("variant\truns\tnt\tvt\tn\tms\tof_copy\tsame\n");
  for (int log2 : sizes) {
    for (uint64_t longest : {32, 2}) {
      const char* runs_name = longest == 32 ? "runs32" : "runs2";
      Input in(size_t(1) << log2, longest);
      measure<256, 15>(in, runs_name);
      measure<128, 15>(in, runs_name);
      CK(cudaFree(in.values));
      CK(cudaFree(in.bits));
      CK(cudaFree(in.before));
    }
  }
}

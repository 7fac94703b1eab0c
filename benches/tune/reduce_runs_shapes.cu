// Reduce-by-key's values kernel (kernel/segmented_reduce.cuh's reduce_runs_tile, its sums)
// measured alone in a few shapes, then with the spine that finishes the runs crossing tiles
// (segmented_reduce_spine, as the library launches it: CTAs of SPINE_THREADS over
// SPINE_THREADS * SPINE_TILES tiles each, chained by a look-back, after a memset of their
// states), and the spine alone in other shapes.
// BENCHMARKS.md ("The values' kernel
// alone") has the figures. Build and run on the GPU machine, from the repository root, with
// the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/reduce_runs_shapes.cu -o /tmp/reduce_runs_shapes && /tmp/reduce_runs_shapes [log2_n ...]
// Inputs: the runs of benches/cub/runs.cu's keys (1 to 32 or 1 or 2 long, timing.cuh's
// run_starts) as the runs-finding kernel writes their boundary words, u32 values. Prints TSV:
// runs nt vt n tile_ms with_spine_ms of_copy ok, where of_copy is the device copy of the n
// values over the tile's time, and ok whether every run's sum equals the host's (first on one
// run over several tiles, `one_run`); then `floor`
// lines: the n values summed whole by warps loading them three ways (floor_kernel).
#include <mergepath/kernel/segmented_reduce.cuh>
#include "timing.cuh"

// -DREDUCE_RUNS_F32_MIN: f32 values folded by Min under `greater` (the values all zero, so the
// host's sums are the folds too), as the properties' reduce-by-key of f32 keys.
#ifdef REDUCE_RUNS_F32_MIN
using K = float;
using Sum = mergepath::reduce_min<K, mergepath::greater_t<K>>;
#else
using K = uint32_t;
using Sum = mergepath::reduce_sum<K>;
#endif
using I = uint32_t;
constexpr int SPINE_THREADS = 512, SPINE_TILES = 4;  // the library's spine for 4-byte values

struct Tile {
  mergepath::run_boundaries<I> runs;
  int64_t segments, count, tiles;
  const K* values;
  int64_t* partitions;
  K* out;
  mergepath::reduce_partials<K> partials;
  uint64_t* spine_states;
  mergepath::spine_carry<K>* spine_carries;
};

template <int NT, int VT>
__global__ void __launch_bounds__(NT, 2048 / NT) tile_kernel(const Tile t) {
  mergepath::reduce_runs_tile<NT, VT>(t.runs, t.segments, t.count, t.values, t.partitions, t.tiles, t.out, Sum(), t.partials);
}

template <int NT = SPINE_THREADS, int SV = SPINE_TILES>
__global__ void __launch_bounds__(NT) spine_kernel(const Tile t) {
  mergepath::segmented_reduce_spine<NT, SV>(t.segments, t.tiles, t.partitions, t.partials, t.spine_states, t.spine_carries, t.out, K(0),
                                            Sum());
}

// The spine's launch as the library's: its states zeroed, then a CTA of NT threads for each
// NT * SV tiles (at least one).
template <int NT = SPINE_THREADS, int SV = SPINE_TILES>
void launch_spine(const Tile& t) {
  const int64_t chunks = t.tiles > 0 ? (t.tiles + NT * SV - 1) / (NT * SV) : 1;
  CK(cudaMemsetAsync(t.spine_states, 0, (chunks + 1) * sizeof(uint64_t)));
  spine_kernel<NT, SV><<<(unsigned)chunks, NT>>>(t);
}

// Floors for the values' tile (each warp's values summed whole, no runs; one sum a warp out):
// `staged` loads them as reduce_runs_tile does (rows of 32 through shared memory, then VT in a
// row a lane), `striped` into registers warp-striped (coalesced, no shared memory), `vector`
// 16 bytes a lane a load.
template <int NT, int VT, int Way>
__global__ void __launch_bounds__(NT, 2048 / NT) floor_kernel(const K* values, int64_t count, K* out) {
  constexpr int WARPS = NT / 32, CHUNK = 32 * VT;
  __shared__ K warp_values[WARPS][CHUNK];
  const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
  const int64_t warp_first = ((int64_t)blockIdx.x * WARPS + warp) * CHUNK;
  const int warp_n = warp_first < count ? (int)min((int64_t)CHUNK, count - warp_first) : 0;
  K sum = 0;
  if (Way == 0) {
    K* chunk = warp_values[warp];
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (i * 32 + lane < warp_n) chunk[i * 32 + lane] = values[warp_first + i * 32 + lane];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < VT; ++j)
      if (lane * VT + j < warp_n) sum += chunk[lane * VT + j];
  } else if (Way == 1) {
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (i * 32 + lane < warp_n) sum += values[warp_first + i * 32 + lane];
  } else {
    const uint4* v = reinterpret_cast<const uint4*>(values + warp_first);
#pragma unroll
    for (int i = 0; i < VT / 4; ++i) {
      if ((i * 32 + lane) * 4 < warp_n) {
        const uint4 x = v[i * 32 + lane];
        sum += x.x + x.y + x.z + x.w;
      }
    }
  }
  sum = (K)__reduce_add_sync(0xffffffffu, (unsigned)sum);
  if (lane == 0) out[(int64_t)blockIdx.x * WARPS + warp] = sum;
}

struct Input {
  size_t n;
  K* values;
  unsigned* bits;
  I* before;
  std::vector<K> want;  // each run's sum
  float copy_ms;
  Input(size_t n_, uint64_t longest) : n(n_) {
    const size_t words = (n + 31) / 32;
    std::vector<unsigned> h_bits(words, 0);
    std::vector<I> h_before(words, 0);
    std::vector<K> h_values(n);
#ifdef REDUCE_RUNS_F32_MIN
    for (size_t i = 0; i < n; ++i) h_values[i] = 0.0f;
#else
    for (size_t i = 0; i < n; ++i) h_values[i] = (K)(i * 2654435761u);
#endif
    const std::vector<size_t> starts = run_starts(n, longest);
    for (size_t r = 0; r < starts.size(); ++r) {
      if (r > 0) h_bits[starts[r] / 32] |= 1u << (starts[r] % 32);
      K sum = 0;
      for (size_t i = starts[r]; i < (r + 1 < starts.size() ? starts[r + 1] : n); ++i) sum += h_values[i];
      want.push_back(sum);
    }
    I seen = 0;
    for (size_t w = 0; w < words; ++w) {
      h_before[w] = seen;
      seen += (I)__builtin_popcount(h_bits[w]);
    }
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
  ~Input() {
    CK(cudaFree(values));
    CK(cudaFree(bits));
    CK(cudaFree(before));
  }
};

template <int NT, int VT>
void measure(const Input& in, const char* runs_name) {
  const int64_t tiles = (int64_t)((in.n + NT * VT - 1) / (NT * VT));
  const size_t partial_bytes = tiles * sizeof(mergepath::segmented_fold<K>);
  Tile t{{in.bits, in.before}, (int64_t)in.want.size(), (int64_t)in.n, tiles, in.values, nullptr, nullptr, {nullptr, nullptr}, nullptr, nullptr};
  CK(cudaMalloc(&t.partitions, (tiles + 1) * 8));
  CK(cudaMalloc(&t.spine_states, (tiles + 2) * 8));  // room for the smallest spine's chunks and ticket
  CK(cudaMalloc(&t.spine_carries, (tiles + 1) * sizeof(mergepath::spine_carry<K>)));
  CK(cudaMalloc(&t.out, in.want.size() * sizeof(K)));
  CK(cudaMalloc(&t.partials.heads, partial_bytes));
  CK(cudaMalloc(&t.partials.tails, partial_bytes));
  const float tile_ms = median_ms([&] { tile_kernel<NT, VT><<<(unsigned)tiles, NT>>>(t); });
  const float both_ms = median_ms([&] {
    tile_kernel<NT, VT><<<(unsigned)tiles, NT>>>(t);
    launch_spine(t);
  });
  CK(cudaGetLastError());
  std::vector<K> got(in.want.size());
  CK(cudaMemcpy(got.data(), t.out, got.size() * sizeof(K), cudaMemcpyDeviceToHost));
  printf("%s\t%d\t%d\t%zu\t%.4f\t%.4f\t%.2f\t%s\n", runs_name, NT, VT, in.n, tile_ms, both_ms, in.copy_ms / tile_ms,
         got == in.want ? "ok" : "WRONG");
  fflush(stdout);
  // The spine alone in other shapes (threads, tiles a thread a round), after the tiles.
  auto spine = [&](const char* shape, auto launch) {
    CK(cudaMemset(t.out, 0, got.size() * sizeof(K)));
    tile_kernel<NT, VT><<<(unsigned)tiles, NT>>>(t);
    const float ms = median_ms([&] { launch(t); });
    CK(cudaMemcpy(got.data(), t.out, got.size() * sizeof(K), cudaMemcpyDeviceToHost));
    printf("  spine %s\t%s\t%lld tiles\t%.4f\t%s\n", shape, runs_name, (long long)tiles, ms, got == in.want ? "ok" : "WRONG");
  };
  spine("512 x 4", launch_spine<512, 4>);
  spine("512 x 8", launch_spine<512, 8>);
  spine("256 x 4", launch_spine<256, 4>);
  spine("128 x 4", launch_spine<128, 4>);
  spine("1024 x 1", launch_spine<1024, 1>);
  CK(cudaFree(t.partitions));
  CK(cudaFree(t.spine_states));
  CK(cudaFree(t.spine_carries));
  CK(cudaFree(t.out));
  CK(cudaFree(t.partials.heads));
  CK(cudaFree(t.partials.tails));
}

void measure_floors(const Input& in, const char* runs_name) {
  K* out;
  CK(cudaMalloc(&out, (in.n / 32 + 1) * sizeof(K)));
  auto floor = [&](const char* way, auto kernel, int nt, int vt) {
    const unsigned grid = (unsigned)((in.n + nt * vt - 1) / (nt * vt));
    const float ms = median_ms([&] { kernel<<<grid, nt>>>(in.values, (int64_t)in.n, out); });
    CK(cudaGetLastError());
    printf("  floor %s\t%s\t%d\t%d\t%zu\t%.4f\t\t%.2f\n", way, runs_name, nt, vt, in.n, ms, in.copy_ms / ms);
  };
  floor("staged", floor_kernel<256, 15, 0>, 256, 15);
  floor("striped", floor_kernel<256, 15, 1>, 256, 15);
  floor("striped", floor_kernel<256, 16, 1>, 256, 16);
  floor("vector", floor_kernel<256, 16, 2>, 256, 16);
  floor("vector", floor_kernel<256, 32, 2>, 256, 32);
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const std::vector<int> sizes = log2_sizes(argc, argv, {24, 26});
  printf("runs\tnt\tvt\tn\ttile_ms\twith_spine_ms\tof_copy\tok\n");
  // One run over several tiles (no boundary in a tile, lanes without values in the last).
  for (size_t n : {size_t(9392), size_t(100000)}) {
    const Input in(n, uint64_t(1) << 40);
    measure<128, 15>(in, "one_run");
  }
  for (int log2 : sizes) {
    for (uint64_t longest : {32, 2}) {
      const Input in(size_t(1) << log2, longest);
      const char* runs_name = longest == 32 ? "runs32" : "runs2";
      measure<256, 15>(in, runs_name);
      measure_floors(in, runs_name);
      measure<128, 15>(in, runs_name);
      measure<512, 15>(in, runs_name);
    }
  }
}

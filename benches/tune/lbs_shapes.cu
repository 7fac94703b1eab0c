// The load-balancing search's tile (kernel/load_balancing.cuh) and interval gather's
// (kernel/interval.cuh) measured alone in several shapes: the library launches them in the
// sorted search's shape (128 x 23 for 4-byte indices), never tuned for them. BENCHMARKS.md
// ("Tried: the load-balancing tile's shapes") has the figures. Build and run on the GPU
// machine, from the repository root, with the generated headers in .gpu/include (timing.cuh
// says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/lbs_shapes.cu -o /tmp/lbs_shapes && /tmp/lbs_shapes [log2_n ...]
// The gather's tile stages its sources in shared memory beside its starts; `gather_generic`
// is the same tile with what the library's entry takes at run time (destinations, words a
// value) as kernel parameters. The shapes whose four arrays do not fit 48 KB measure the
// search alone. (Commit 1639249 measured a copy of
// that tile against the one without staging: BENCHMARKS.md.)
// Inputs: u32 starts of segments of random lengths 0..31 (the benches' `uniform32`), and of
// one segment of half the items among them (`skewed`). Prints TSV: op dist nt vt n ms
// of_copy ok, where ms is the partitions and the tile together and of_copy the device copy of
// n u32 values over that time.
#include <mergepath/kernel/interval.cuh>
#include "timing.cuh"

using I = uint32_t;

__global__ void partitions(const I* starts, int64_t segments, int64_t count, int64_t spacing, int64_t num, int64_t* parts) {
  mergepath::load_balancing_partitions_body(starts, segments, count, spacing, num, parts);
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT) search_tile(const I* starts, int64_t segments, int64_t count, const int64_t* parts, I* out) {
  const mergepath::load_balancing_outputs<I, uint32_t> o{out, nullptr, nullptr, nullptr, 0};
  mergepath::load_balancing_tile<NT, VT>(starts, segments, count, parts, o);
}

template <int NT, int VT>
__global__ void __launch_bounds__(NT) gather_tile(const I* starts, int64_t segments, int64_t count, const int64_t* parts,
                                                  const I* sources, const uint32_t* input, int64_t input_len, uint32_t* out) {
  const mergepath::interval_moves<I, uint32_t> m{sources, nullptr, input, input_len, out, count, 1};
  mergepath::interval_move_tile<NT, VT>(starts, segments, count, parts, m);
}

// The same tile as the library's entry instantiates it: sources, destinations and the words a
// value given at run time (mergepath_interval_move_{word}_{4,8} serves gather, scatter and
// move), where gather_tile lets the compiler drop the destinations and the division.
template <int NT, int VT>
__global__ void __launch_bounds__(NT) gather_generic_tile(const I* starts, int64_t segments, int64_t count, const int64_t* parts,
                                                          const I* sources, const I* destinations, const uint32_t* input,
                                                          int64_t input_len, uint32_t* out, int64_t words) {
  const mergepath::interval_moves<I, uint32_t> m{sources, destinations, input, input_len, out, count, (int)words};
  mergepath::interval_move_tile<NT, VT>(starts, segments, count, parts, m);
}

// Gather with each item's source worked out in the walk itself: the walk keeps the next
// boundary and its segment's source - start in registers (a shared read a boundary, none an
// item) and writes each item's source index to shared memory; the moves then read one shared
// word an item (the library's tile reads three: the item's boundaries, its start and source).
// `Blocked`: each thread moves its own walk's items (no second pass over shared memory, no
// barrier; a warp's loads and stores 32 items VT apart).
template <int NT, int VT, bool Blocked>
__global__ void __launch_bounds__(NT) gather_walk_tile(const I* starts, int64_t segments, int64_t count, const int64_t* parts,
                                                       const I* sources, const uint32_t* input, uint32_t* out) {
  constexpr int NV = NT * VT, U = mergepath::LOAD_BALANCING_MOVES;
  __shared__ I tile_starts[NV + 1];
  __shared__ I tile_sources[NV + 1];
  __shared__ I item_sources[Blocked ? 1 : NV];
  const mergepath::merge_range r = mergepath::compute_merge_range(segments - 1, count, blockIdx.x, NV, parts);
  const int a_n = r.a_count(), b_n = r.b_count();
  for (int h = (int)threadIdx.x; h <= a_n; h += NT) {
    tile_starts[h] = starts[r.a_begin + h];
    tile_sources[h] = sources[r.a_begin + h];
  }
  __syncthreads();
  const mergepath::item_positions<I> items{r.b_begin};
  const int diag = min(VT * (int)threadIdx.x, a_n + b_n);
  int h = mergepath::merge_path<1>(tile_starts + 1, a_n, items, b_n, diag, mergepath::less_t<I>());
  int k = diag - h;
  const int k0 = k;
  I next = h < a_n ? tile_starts[1 + h] : ~(I)0;  // no item reaches ~0 (count fits I)
  I delta = tile_sources[h] - tile_starts[h];
  I mine[Blocked ? VT : 1];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (h + k < a_n + b_n) {
      if (k >= b_n || next <= items[k]) {
        ++h;
        next = h < a_n ? tile_starts[1 + h] : ~(I)0;
        delta = tile_sources[h] - tile_starts[h];
      } else {
        if constexpr (Blocked) mine[k - k0] = items[k] + delta;
        else item_sources[k] = items[k] + delta;
        ++k;
      }
    }
  }
  if constexpr (Blocked) {
    uint32_t v[VT];
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (k0 + i < k) v[i] = input[mine[i]];
#pragma unroll
    for (int i = 0; i < VT; ++i)
      if (k0 + i < k) out[r.b_begin + k0 + i] = v[i];
  } else {
    __syncthreads();
    for (int first = (int)threadIdx.x; first < b_n; first += NT * U) {
      uint32_t v[U];
#pragma unroll
      for (int i = 0; i < U; ++i)
        if (first + i * NT < b_n) v[i] = input[item_sources[first + i * NT]];
#pragma unroll
      for (int i = 0; i < U; ++i)
        if (first + i * NT < b_n) out[r.b_begin + first + i * NT] = v[i];
    }
  }
}

struct input {
  int64_t n, segments;
  I *starts, *sources, *out;
  uint32_t* values;
  int64_t* parts;
  std::vector<I> want_segments;
  std::vector<uint32_t> want_gather;
};

// Segments of lengths 0..31 covering n items; `skewed`: one of them holds half the items.
// Sources: the mirror of each interval's place (as benches/load_balancing.rs).
static input make(int64_t n, bool skewed) {
  std::mt19937_64 g(7);
  std::vector<I> starts;
  int64_t at = 0;
  while (at < n) {
    starts.push_back((I)at);
    int64_t len = (int64_t)(g() % 32);
    if (skewed && starts.size() == 1000) len = n / 2;
    at += std::min(len, n - at);
  }
  input in{n, (int64_t)starts.size()};
  std::vector<I> sources(starts.size());
  in.want_segments.resize(n);
  in.want_gather.resize(n);
  std::vector<uint32_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = (uint32_t)(i * 2654435761u);
  for (size_t s = 0; s < starts.size(); ++s) {
    const int64_t end = s + 1 < starts.size() ? starts[s + 1] : n;
    sources[s] = (I)(n - end);
    for (int64_t i = starts[s]; i < end; ++i) {
      in.want_segments[i] = (I)s;
      in.want_gather[i] = values[sources[s] + (i - starts[s])];
    }
  }
  CK(cudaMalloc(&in.starts, starts.size() * sizeof(I)));
  CK(cudaMalloc(&in.sources, starts.size() * sizeof(I)));
  CK(cudaMalloc(&in.out, n * sizeof(I)));
  CK(cudaMalloc(&in.values, n * sizeof(uint32_t)));
  CK(cudaMalloc(&in.parts, (n / 256 + starts.size() / 256 + 4) * sizeof(int64_t)));
  CK(cudaMemcpy(in.starts, starts.data(), starts.size() * sizeof(I), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(in.sources, sources.data(), sources.size() * sizeof(I), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(in.values, values.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  return in;
}

template <int NT, int VT>
static void run(const input& in, const char* dist, float copy_ms) {
  constexpr int64_t NV = NT * VT;
  const int64_t total = in.segments - 1 + in.n, tiles = (total + NV - 1) / NV;
  const int64_t num = tiles + 1;
  const auto launch_parts = [&] {
    partitions<<<(unsigned)((num + 127) / 128), 128>>>(in.starts, in.segments, in.n, NV, num, in.parts);
  };
  const auto check = [&](const std::vector<uint32_t>& want) {
    std::vector<uint32_t> got(in.n);
    CK(cudaMemcpy(got.data(), in.out, in.n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return got == want;
  };
  CK(cudaMemset(in.out, 0, in.n * sizeof(I)));
  const float search = median_ms([&] {
    launch_parts();
    search_tile<NT, VT><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts, in.out);
  });
  const bool search_ok = check(in.want_segments);
  printf("search\t%s\t%d\t%d\t%lld\t%.4f\t%.2f\t%s\n", dist, NT, VT, (long long)in.n, search, copy_ms / search, search_ok ? "ok" : "WRONG");
  if constexpr (NV * 4 * sizeof(I) < 48 * 1024) {  // the gather tile's shared memory
    CK(cudaMemset(in.out, 0, in.n * sizeof(I)));
    const float gather = median_ms([&] {
      launch_parts();
      gather_tile<NT, VT><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts, in.sources, in.values, in.n, in.out);
    });
    const bool gather_ok = check(in.want_gather);
    printf("gather\t%s\t%d\t%d\t%lld\t%.4f\t%.2f\t%s\n", dist, NT, VT, (long long)in.n, gather, copy_ms / gather, gather_ok ? "ok" : "WRONG");
    CK(cudaMemset(in.out, 0, in.n * sizeof(I)));
    const float generic = median_ms([&] {  // no destinations and one word a value, as kernel parameters
      launch_parts();
      gather_generic_tile<NT, VT><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts, in.sources, nullptr,
                                                          in.values, in.n, in.out, 1);
    });
    const bool generic_ok = check(in.want_gather);
    printf("gather_generic\t%s\t%d\t%d\t%lld\t%.4f\t%.2f\t%s\n", dist, NT, VT, (long long)in.n, generic, copy_ms / generic, generic_ok ? "ok" : "WRONG");
  }
  if constexpr (NV * 3 * sizeof(I) < 48 * 1024) {
    const auto walk = [&](auto blocked, const char* name) {
      CK(cudaMemset(in.out, 0, in.n * sizeof(I)));
      const float ms = median_ms([&] {
        launch_parts();
        gather_walk_tile<NT, VT, decltype(blocked)::value><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts,
                                                                                    in.sources, in.values, in.out);
      });
      const bool ok = check(in.want_gather);
      printf("%s\t%s\t%d\t%d\t%lld\t%.4f\t%.2f\t%s\n", name, dist, NT, VT, (long long)in.n, ms, copy_ms / ms, ok ? "ok" : "WRONG");
    };
    walk(std::false_type{}, "gather_walk");
    walk(std::true_type{}, "gather_walk_blocked");
  }
}

int main(int argc, char** argv) {
  printf("op\tdist\tnt\tvt\tn\tms\tof_copy\tok\n");
  for (int a = 1; a < std::max(argc, 2); ++a) {
    const int64_t n = int64_t(1) << (argc > 1 ? atoi(argv[a]) : 26);
    for (bool skewed : {false, true}) {
      input in = make(n, skewed);
      const float copy_ms = median_ms([&] { CK(cudaMemcpyAsync(in.out, in.values, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice)); }, 50);
      const char* dist = skewed ? "skewed" : "uniform32";
      printf("copy\t%s\t0\t0\t%lld\t%.4f\t1.00\tok\n", dist, (long long)n, copy_ms);
      run<128, 23>(in, dist, copy_ms);  // the library's shape
      run<128, 11>(in, dist, copy_ms);
      run<128, 15>(in, dist, copy_ms);
      run<128, 31>(in, dist, copy_ms);
      run<256, 7>(in, dist, copy_ms);
      run<256, 11>(in, dist, copy_ms);
      run<256, 15>(in, dist, copy_ms);
      run<256, 23>(in, dist, copy_ms);
      run<512, 7>(in, dist, copy_ms);
      run<512, 11>(in, dist, copy_ms);
      run<64, 31>(in, dist, copy_ms);
      for (void* p : {(void*)in.starts, (void*)in.sources, (void*)in.out, (void*)in.values, (void*)in.parts}) CK(cudaFree(p));
    }
  }
  return 0;
}

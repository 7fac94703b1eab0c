// The load-balancing search's tile (kernel/load_balancing.cuh) and interval gather's and move's
// (kernel/interval.cuh) measured alone in several shapes. BENCHMARKS.md ("The load-balancing
// tile's shapes", "Interval moves ...") has the figures. Build and run on the GPU machine, from
// the repository root, with the generated headers in .gpu/include (timing.cuh says how):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I mergepath-build/kernels -I .gpu/include benches/tune/lbs_shapes.cu -o /tmp/lbs_shapes && /tmp/lbs_shapes [log2_n ...]
// `gather`, `scatter` and `move` are the library's interval tile as its entries instantiate
// it. The shapes whose arrays do not fit 48 KB measure the search alone.
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

// The library's interval tile as its gather entry instantiates it (`Destinations` false, the
// entries' launch bounds), or as its move entry does (destinations given: here each interval's own start, so the move
// writes what the gather does).
template <int NT, int VT, bool Destinations>
__global__ void __launch_bounds__(NT, 2048 / NT) gather_tile(const I* starts, int64_t segments, int64_t count, const int64_t* parts,
                                                  const I* sources, const uint32_t* input, int64_t input_len, uint32_t* out) {
  const mergepath::interval_moves<I, uint32_t> m{sources, starts, input, input_len, out, count, 1};
  mergepath::interval_move_tile<NT, VT, true, Destinations, true>(starts, segments, count, parts, m);
}

// The library's interval tile as its scatter entry instantiates it, each interval written to
// the mirror of its place (the gather's sources as destinations).
template <int NT, int VT>
__global__ void __launch_bounds__(NT, 2048 / NT) scatter_tile(const I* starts, int64_t segments, int64_t count, const int64_t* parts,
                                                   const I* destinations, const uint32_t* input, uint32_t* out) {
  const mergepath::interval_moves<I, uint32_t> m{nullptr, destinations, input, count, out, count, 1};
  mergepath::interval_move_tile<NT, VT, false, true, true>(starts, segments, count, parts, m);
}

struct input {
  int64_t n, segments;
  I *starts, *sources, *out;
  uint32_t* values;
  int64_t* parts;
  std::vector<I> want_segments;
  std::vector<uint32_t> want_gather, want_scatter;
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
  in.want_scatter.resize(n);
  std::vector<uint32_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = (uint32_t)(i * 2654435761u);
  for (size_t s = 0; s < starts.size(); ++s) {
    const int64_t end = s + 1 < starts.size() ? starts[s + 1] : n;
    sources[s] = (I)(n - end);
    for (int64_t i = starts[s]; i < end; ++i) {
      in.want_segments[i] = (I)s;
      in.want_gather[i] = values[sources[s] + (i - starts[s])];
      in.want_scatter[sources[s] + (i - starts[s])] = values[i];
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
  const auto moves = [&](const char* name, const std::vector<uint32_t>& want, auto launch) {
    CK(cudaMemset(in.out, 0, in.n * sizeof(I)));
    const float ms = median_ms([&] {
      launch_parts();
      launch();
    });
    const bool ok = check(want);
    printf("%s\t%s\t%d\t%d\t%lld\t%.4f\t%.2f\t%s\n", name, dist, NT, VT, (long long)in.n, ms, copy_ms / ms, ok ? "ok" : "WRONG");
  };
  // Shared memory: a marked item's run (its moves and source offset, 4 bytes each, and a
  // move's destination offset) and a bit an item.
  if constexpr (NV * 12 < 48 * 1024) {
    moves("gather", in.want_gather, [&] {
      gather_tile<NT, VT, false><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts, in.sources, in.values, in.n, in.out);
    });
    moves("scatter", in.want_scatter, [&] {
      scatter_tile<NT, VT><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts, in.sources, in.values, in.out);
    });
  }
  if constexpr (NV * 20 < 48 * 1024) {
    moves("move", in.want_gather, [&] {
      gather_tile<NT, VT, true><<<(unsigned)tiles, NT>>>(in.starts, in.segments, in.n, in.parts, in.sources, in.values, in.n, in.out);
    });
  }
}

int main(int argc, char** argv) {
  printf("op\tdist\tnt\tvt\tn\tms\tof_copy\tok\n");
  for (int log2 : log2_sizes(argc, argv, {26})) {
    const int64_t n = int64_t(1) << log2;
    for (bool skewed : {false, true}) {
      input in = make(n, skewed);
      const float copy_ms = median_ms([&] { CK(cudaMemcpyAsync(in.out, in.values, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice)); }, 50);
      const char* dist = skewed ? "skewed" : "uniform32";
      printf("copy\t%s\t0\t0\t%lld\t%.4f\t1.00\tok\n", dist, (long long)n, copy_ms);
      run<128, 23>(in, dist, copy_ms);  // the search's shape
      run<128, 7>(in, dist, copy_ms);
      run<128, 9>(in, dist, copy_ms);
      run<128, 11>(in, dist, copy_ms);  // the interval shape
      run<128, 15>(in, dist, copy_ms);
      run<256, 5>(in, dist, copy_ms);
      run<256, 7>(in, dist, copy_ms);
      run<256, 11>(in, dist, copy_ms);
      for (void* p : {(void*)in.starts, (void*)in.sources, (void*)in.out, (void*)in.values, (void*)in.parts}) CK(cudaFree(p));
    }
  }
  return 0;
}

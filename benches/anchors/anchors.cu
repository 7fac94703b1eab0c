// Anchor benchmark: what a user would pick instead of mergepath (CUB, Thrust), and the
// device-to-device copy as the bandwidth ceiling, measured on the same GPU in one run.
// Also the host<->device copy ceilings (pinned, pageable, both directions at once) for work on
// data in host memory. Build and run on the GPU machine (staged by scripts/stage-gpu, run as `.gpu/run anchors`):
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-extended-lambda anchors.cu -o anchors && ./anchors [log2_n ...]
// Prints TSV: op impl type n ms gkeys_s gbytes_s ok. Times are medians of 10 after a warm-up,
// temp storage allocated outside the timed region. gbytes_s counts bytes read + written once.
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/merge.h>
#include <thrust/sort.h>
#include <thrust/binary_search.h>
#include <thrust/set_operations.h>
#include <thrust/execution_policy.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#include <functional>
#ifdef WITH_MGPU
#include <moderngpu/kernel_mergesort.hxx>
#include <moderngpu/kernel_merge.hxx>
#include <moderngpu/kernel_sortedsearch.hxx>
#endif

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

struct Pt { float x; int32_t id; };
struct PtLess { __host__ __device__ bool operator()(const Pt& a, const Pt& b) const { return a.x < b.x || (a.x == b.x && a.id < b.id); } };

static float time_ms(std::function<void()> f, int reps = 10) {
  f(); CK(cudaDeviceSynchronize());
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
static void report(const char* op, const char* impl, const char* ty, size_t n, float ms, double bytes, bool ok) {
  printf("%s\t%s\t%s\t%zu\t%.4f\t%.3f\t%.1f\t%s\n", op, impl, ty, n, ms, n / ms / 1e6, bytes / ms / 1e6, ok ? "ok" : "WRONG");
  fflush(stdout);
}
template <class T> std::vector<T> rnd(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed); std::vector<T> v(n); for (auto& x : v) x = (T)g(); return v;
}
template <class T> bool sorted(const thrust::device_vector<T>& d) {
  std::vector<T> h(d.size()); thrust::copy(d.begin(), d.end(), h.begin()); return std::is_sorted(h.begin(), h.end());
}

template <class T> void bench_type(const char* ty, size_t n) {
  auto h = rnd<T>(n, 42);
  thrust::device_vector<T> in(h.begin(), h.end()), out(n), tmp(n);
  thrust::device_vector<uint32_t> vin(n), vout(n);
  thrust::sequence(vin.begin(), vin.end());
  // copy ceiling
  { float ms = time_ms([&] { CK(cudaMemcpyAsync(thrust::raw_pointer_cast(out.data()), thrust::raw_pointer_cast(in.data()), n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    report("copy", "cudaMemcpy", ty, n, ms, 2.0 * n * sizeof(T), true); }
  // sort keys
  { size_t tb = 0; T* ip = thrust::raw_pointer_cast(in.data()); T* op = thrust::raw_pointer_cast(out.data());
    cub::DeviceMergeSort::SortKeysCopy(nullptr, tb, ip, op, (int64_t)n, ::cuda::std::less<>()); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMergeSort::SortKeysCopy(thrust::raw_pointer_cast(temp.data()), t2, ip, op, (int64_t)n, ::cuda::std::less<>()); });
    report("sort_keys", "cub_merge_sort", ty, n, ms, 2.0 * n * sizeof(T), sorted(out)); }
  { size_t tb = 0; T* ip = thrust::raw_pointer_cast(in.data()); T* op = thrust::raw_pointer_cast(out.data());
    cub::DeviceRadixSort::SortKeys(nullptr, tb, ip, op, (int64_t)n); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceRadixSort::SortKeys(thrust::raw_pointer_cast(temp.data()), t2, ip, op, (int64_t)n); });
    report("sort_keys", "cub_radix_sort", ty, n, ms, 2.0 * n * sizeof(T), sorted(out)); }
  // sort pairs (u32 values)
  { size_t tb = 0; T* ik = thrust::raw_pointer_cast(in.data()); T* ok = thrust::raw_pointer_cast(out.data());
    uint32_t* iv = thrust::raw_pointer_cast(vin.data()); uint32_t* ov = thrust::raw_pointer_cast(vout.data());
    cub::DeviceMergeSort::SortPairsCopy(nullptr, tb, ik, iv, ok, ov, (int64_t)n, ::cuda::std::less<>()); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMergeSort::SortPairsCopy(thrust::raw_pointer_cast(temp.data()), t2, ik, iv, ok, ov, (int64_t)n, ::cuda::std::less<>()); });
    report("sort_pairs", "cub_merge_sort", ty, n, ms, 2.0 * n * (sizeof(T) + 4), sorted(out)); }
  { size_t tb = 0; T* ik = thrust::raw_pointer_cast(in.data()); T* ok = thrust::raw_pointer_cast(out.data());
    uint32_t* iv = thrust::raw_pointer_cast(vin.data()); uint32_t* ov = thrust::raw_pointer_cast(vout.data());
    cub::DeviceRadixSort::SortPairs(nullptr, tb, ik, ok, iv, ov, (int64_t)n); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceRadixSort::SortPairs(thrust::raw_pointer_cast(temp.data()), t2, ik, ok, iv, ov, (int64_t)n); });
    report("sort_pairs", "cub_radix_sort", ty, n, ms, 2.0 * n * (sizeof(T) + 4), sorted(out)); }
  // merge two sorted halves
  thrust::device_vector<T> s(h.begin(), h.end());
  thrust::sort(s.begin(), s.begin() + n / 2); thrust::sort(s.begin() + n / 2, s.end());
  { size_t tb = 0; T* a = thrust::raw_pointer_cast(s.data()); T* b = a + n / 2; T* op = thrust::raw_pointer_cast(out.data());
    cub::DeviceMerge::MergeKeys(nullptr, tb, a, (int64_t)(n / 2), b, (int64_t)(n - n / 2), op, ::cuda::std::less<>()); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMerge::MergeKeys(thrust::raw_pointer_cast(temp.data()), t2, a, (int64_t)(n / 2), b, (int64_t)(n - n / 2), op, ::cuda::std::less<>()); });
    report("merge_keys", "cub_merge", ty, n, ms, 2.0 * n * sizeof(T), sorted(out)); }
  { size_t tb = 0; T* a = thrust::raw_pointer_cast(s.data()); T* b = a + n / 2; T* op = thrust::raw_pointer_cast(out.data());
    uint32_t* va = thrust::raw_pointer_cast(vin.data()); uint32_t* vb = va + n / 2; uint32_t* ov = thrust::raw_pointer_cast(vout.data());
    cub::DeviceMerge::MergePairs(nullptr, tb, a, va, (int64_t)(n / 2), b, vb, (int64_t)(n - n / 2), op, ov, ::cuda::std::less<>()); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMerge::MergePairs(thrust::raw_pointer_cast(temp.data()), t2, a, va, (int64_t)(n / 2), b, vb, (int64_t)(n - n / 2), op, ov, ::cuda::std::less<>()); });
    report("merge_pairs", "cub_merge", ty, n, ms, 2.0 * n * (sizeof(T) + 4), sorted(out)); }
  { float ms = time_ms([&] { thrust::merge(thrust::device, s.begin(), s.begin() + n / 2, s.begin() + n / 2, s.end(), out.begin()); });
    report("merge_keys", "thrust_merge", ty, n, ms, 2.0 * n * sizeof(T), sorted(out)); }
  // sorted search: n/2 sorted needles into n/2 sorted haystack (lower bound)
  { thrust::device_vector<uint32_t> idx(n / 2);
    float ms = time_ms([&] { thrust::lower_bound(thrust::device, s.begin(), s.begin() + n / 2, s.begin() + n / 2, s.end(), idx.begin()); });
    report("sorted_search", "thrust_lower_bound", ty, n, ms, (n + n / 2 * 4.0 / sizeof(T)) * sizeof(T), true); }
#if CUB_VERSION >= 300500
  { thrust::device_vector<uint32_t> idx(n / 2); size_t tb = 0; T* a = thrust::raw_pointer_cast(s.data());
    uint32_t* o = thrust::raw_pointer_cast(idx.data());
    cub::DeviceFind::LowerBoundSortedValues(nullptr, tb, a, (int64_t)(n / 2), a + n / 2, (int64_t)(n - n / 2), o, ::cuda::std::less<>()); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceFind::LowerBoundSortedValues(thrust::raw_pointer_cast(temp.data()), t2, a, (int64_t)(n / 2), a + n / 2, (int64_t)(n - n / 2), o, ::cuda::std::less<>()); });
    report("sorted_search", "cub_lower_bound_sorted_values", ty, n, ms, (n + n / 2 * 4.0 / sizeof(T)) * sizeof(T), true); }
#endif
  // set ops on the two sorted halves
  { float ms = time_ms([&] { thrust::set_intersection(thrust::device, s.begin(), s.begin() + n / 2, s.begin() + n / 2, s.end(), out.begin()); });
    report("set_intersection", "thrust", ty, n, ms, 1.0 * n * sizeof(T), true); }
  { float ms = time_ms([&] { thrust::set_union(thrust::device, s.begin(), s.begin() + n / 2, s.begin() + n / 2, s.end(), out.begin()); });
    report("set_union", "thrust", ty, n, ms, 2.0 * n * sizeof(T), true); }
  { float ms = time_ms([&] { thrust::set_difference(thrust::device, s.begin(), s.begin() + n / 2, s.begin() + n / 2, s.end(), out.begin()); });
    report("set_difference", "thrust", ty, n, ms, 1.5 * n * sizeof(T), true); }
  { float ms = time_ms([&] { thrust::set_symmetric_difference(thrust::device, s.begin(), s.begin() + n / 2, s.begin() + n / 2, s.end(), out.begin()); });
    report("set_symmetric_difference", "thrust", ty, n, ms, 2.0 * n * sizeof(T), true); }
  // segmented sort: random segment sizes uniform in [0, 2*avg]
  for (size_t avg : {size_t(16), size_t(256), size_t(65536)}) {
    std::mt19937_64 g(avg); std::vector<int64_t> offs{0};
    while ((size_t)offs.back() < n) offs.push_back(std::min<int64_t>((int64_t)n, offs.back() + (int64_t)(g() % (2 * avg + 1))));
    thrust::device_vector<int64_t> d_offs(offs.begin(), offs.end());
    int64_t segs = (int64_t)offs.size() - 1; const int64_t* ob = thrust::raw_pointer_cast(d_offs.data());
    size_t tb = 0; T* ip = thrust::raw_pointer_cast(in.data()); T* op = thrust::raw_pointer_cast(out.data());
    cub::DeviceSegmentedSort::StableSortKeys(nullptr, tb, ip, op, (int64_t)n, segs, ob, ob + 1); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceSegmentedSort::StableSortKeys(thrust::raw_pointer_cast(temp.data()), t2, ip, op, (int64_t)n, segs, ob, ob + 1); });
    std::vector<T> r(n); thrust::copy(out.begin(), out.end(), r.begin()); bool ok = true;
    for (int64_t i = 0; i < segs && ok; ++i) ok = std::is_sorted(r.begin() + offs[i], r.begin() + offs[i + 1]);
    char name[64]; snprintf(name, sizeof name, "segmented_sort_avg%zu", avg);
    report(name, "cub_segmented_sort", ty, n, ms, 2.0 * n * sizeof(T), ok);
  }
#ifdef WITH_MGPU
  { mgpu::standard_context_t ctx(false);
    float ms = time_ms([&] { thrust::copy(in.begin(), in.end(), out.begin()); mgpu::mergesort(thrust::raw_pointer_cast(out.data()), (int)n, mgpu::less_t<T>(), ctx); });
    float cms = time_ms([&] { thrust::copy(in.begin(), in.end(), out.begin()); });
    report("sort_keys", "moderngpu", ty, n, ms - cms, 2.0 * n * sizeof(T), sorted(out));
    T* a = thrust::raw_pointer_cast(s.data());
    ms = time_ms([&] { mgpu::merge(a, (int)(n / 2), a + n / 2, (int)(n - n / 2), thrust::raw_pointer_cast(out.data()), mgpu::less_t<T>(), ctx); });
    report("merge_keys", "moderngpu", ty, n, ms, 2.0 * n * sizeof(T), sorted(out));
    thrust::device_vector<int> idx(n / 2);
    ms = time_ms([&] { mgpu::sorted_search<mgpu::bounds_lower>(a + n / 2, (int)(n - n / 2), a, (int)(n / 2), thrust::raw_pointer_cast(idx.data()), mgpu::less_t<T>(), ctx); });
    report("sorted_search", "moderngpu", ty, n, ms, (n + n / 2 * 4.0 / sizeof(T)) * sizeof(T), true); }
#endif
}

// Host<->device copy ceilings for work on data in host memory: pinned and pageable, one way
// and both ways at once (two streams), n items of T (the bytes of a host-resident sort's keys).
template <class T> void bench_pcie(const char* ty, size_t n) {
  size_t bytes = n * sizeof(T);
  T* d; T* d2; CK(cudaMalloc(&d, bytes)); CK(cudaMalloc(&d2, bytes));
  T *pin, *pin2; CK(cudaMallocHost(&pin, bytes)); CK(cudaMallocHost(&pin2, bytes));
  std::vector<T> pg(n, T(1));
  cudaStream_t s1, s2; CK(cudaStreamCreate(&s1)); CK(cudaStreamCreate(&s2));
  float ms = time_ms([&] { CK(cudaMemcpyAsync(d, pin, bytes, cudaMemcpyHostToDevice)); });
  report("copy_h2d", "pinned", ty, n, ms, bytes, true);
  ms = time_ms([&] { CK(cudaMemcpyAsync(pin, d, bytes, cudaMemcpyDeviceToHost)); });
  report("copy_d2h", "pinned", ty, n, ms, bytes, true);
  ms = time_ms([&] { CK(cudaMemcpyAsync(d, pin, bytes, cudaMemcpyHostToDevice, s1)); CK(cudaMemcpyAsync(pin2, d2, bytes, cudaMemcpyDeviceToHost, s2)); CK(cudaStreamSynchronize(s1)); CK(cudaStreamSynchronize(s2)); });
  report("copy_roundtrip_duplex", "pinned", ty, n, ms, 2.0 * bytes, true);
  ms = time_ms([&] { CK(cudaMemcpy(d, pg.data(), bytes, cudaMemcpyHostToDevice)); CK(cudaMemcpy(pg.data(), d, bytes, cudaMemcpyDeviceToHost)); }, 5);
  report("copy_roundtrip", "pageable", ty, n, ms, 2.0 * bytes, true);
  CK(cudaStreamDestroy(s1)); CK(cudaStreamDestroy(s2));
  CK(cudaFreeHost(pin)); CK(cudaFreeHost(pin2)); CK(cudaFree(d)); CK(cudaFree(d2));
}

static void bench_struct(size_t n) {
  std::mt19937_64 g(7); std::vector<Pt> h(n); for (size_t i = 0; i < n; ++i) { h[i].x = (float)(g() % 1000000) / 7.0f; h[i].id = (int32_t)g(); }
  thrust::device_vector<Pt> in(h.begin(), h.end()), out(n);
  size_t tb = 0; Pt* ip = thrust::raw_pointer_cast(in.data()); Pt* op = thrust::raw_pointer_cast(out.data());
  cub::DeviceMergeSort::SortKeysCopy(nullptr, tb, ip, op, (int64_t)n, PtLess()); thrust::device_vector<char> temp(tb);
  float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMergeSort::SortKeysCopy(thrust::raw_pointer_cast(temp.data()), t2, ip, op, (int64_t)n, PtLess()); });
  std::vector<Pt> r(n); thrust::copy(out.begin(), out.end(), r.begin());
  report("sort_keys", "cub_merge_sort", "struct_f32_i32", n, ms, 2.0 * n * sizeof(Pt), std::is_sorted(r.begin(), r.end(), PtLess()));
}

int main(int argc, char** argv) {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# device %s sms %d cc %d.%d cub %d\n", p.name, p.multiProcessorCount, p.major, p.minor, CUB_VERSION);
  printf("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s\tok\n");
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(size_t(1) << atoi(argv[i]));
  if (sizes.empty()) sizes = {size_t(1) << 20, size_t(1) << 24, size_t(1) << 26};
  for (size_t n : sizes) { bench_type<uint32_t>("u32", n); bench_type<uint64_t>("u64", n); bench_struct(n); bench_pcie<uint32_t>("u32", n); bench_pcie<uint64_t>("u64", n); }
  return 0;
}

// The anchors of benches/records.rs: what a user of CUB writes for the same sorts, on the same
// GPU in the same device call. CUB's DeviceMergeSort with the functor a user writes for
// 64-byte rows by (score desc, id) and for 16-byte keys compared as byte strings, and CUB's
// merge sort and radix sort of u32 keys with 12- and 16-byte values; then Thrust's merge, lower
// bounds, set union and unique with the same functors on two sorted halves (benches/records.rs's
// `algorithms`).
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/records.cu -o /tmp/records && /tmp/records [log2_records log2_pairs]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 10 after
// a warm-up, temp storage outside the timed region, bytes: items read and written once).
#include <cub/cub.cuh>
#include "anchor.cuh"
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/merge.h>
#include <thrust/binary_search.h>
#include <thrust/set_operations.h>
#include <thrust/unique.h>
#include <thrust/execution_policy.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#include <functional>

// The 64-byte row of benches/records.rs: by score descending, then id.
struct Row { float score; uint32_t id; uint64_t seq; uint8_t payload[48]; };
struct RowOrder {
  __host__ __device__ bool operator()(const Row& a, const Row& b) const { return a.score > b.score || (a.score == b.score && a.id < b.id); }
};
// A 16-byte key compared as a byte string (as Rust orders [u8; 16]), four big-endian words.
struct Bytes16 { uint32_t w[4]; };
struct Bytes16Order {
  __host__ __device__ static uint32_t be(uint32_t x) {
#ifdef __CUDA_ARCH__
    return __byte_perm(x, 0, 0x0123);
#else
    return __builtin_bswap32(x);
#endif
  }
  __host__ __device__ bool operator()(const Bytes16& a, const Bytes16& b) const {
    for (int i = 0; i < 4; ++i) {
      const uint32_t x = be(a.w[i]), y = be(b.w[i]);
      if (x != y) return x < y;
    }
    return false;
  }
};
// The 24-byte record of benches/records.rs: by c descending, then a, then b.
struct Triple { uint64_t a; int64_t b; double c; };
struct TripleOrder {
  __host__ __device__ bool operator()(const Triple& x, const Triple& y) const {
    if (x.c != y.c) return x.c > y.c;
    if (x.a != y.a) return x.a < y.a;
    return x.b < y.b;
  }
};
template <int N> struct Payload { uint8_t b[N]; };

template <class T, class Order> void merge_sort(const char* ty, size_t n, std::vector<T> h, Order order) {
  thrust::device_vector<T> in(h.begin(), h.end()), out(n);
  T* ip = thrust::raw_pointer_cast(in.data()); T* op = thrust::raw_pointer_cast(out.data());
  size_t tb = 0; cub::DeviceMergeSort::SortKeysCopy(nullptr, tb, ip, op, (int64_t)n, order); thrust::device_vector<char> temp(tb);
  float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMergeSort::SortKeysCopy(thrust::raw_pointer_cast(temp.data()), t2, ip, op, (int64_t)n, order); });
  std::vector<T> r(n); thrust::copy(out.begin(), out.end(), r.begin());
  report("sort_keys", "cub_merge_sort", ty, n, ms, 2.0 * n * sizeof(T), std::is_sorted(r.begin(), r.end(), order));
}

// Equal under `Order`: neither goes before the other.
template <class T, class Order> struct Equivalent {
  Order order;
  __host__ __device__ bool operator()(const T& x, const T& y) const { return !order(x, y) && !order(y, x); }
};

template <class T, class Order> void algorithms(const char* ty, size_t n, std::vector<T> h, Order order) {
  const size_t half = n / 2;
  std::stable_sort(h.begin(), h.begin() + half, order);
  std::stable_sort(h.begin() + half, h.end(), order);
  thrust::device_vector<T> a(h.begin(), h.begin() + half), b(h.begin() + half, h.end()), out(n), distinct(n);
  thrust::device_vector<uint32_t> bounds(half);
  float ms = time_ms([&] { thrust::merge(thrust::device, a.begin(), a.end(), b.begin(), b.end(), out.begin(), order); });
  report("merge_keys", "thrust", ty, n, ms, 2.0 * n * sizeof(T), thrust::is_sorted(out.begin(), out.end(), order));
  ms = time_ms([&] { thrust::lower_bound(thrust::device, b.begin(), b.end(), a.begin(), a.end(), bounds.begin(), order); });
  report("sorted_search", "thrust", ty, n, ms, n * sizeof(T) + half * 4.0, thrust::is_sorted(bounds.begin(), bounds.end()));
  ms = time_ms([&] { thrust::set_union(thrust::device, a.begin(), a.end(), b.begin(), b.end(), out.begin(), order); });
  report("set_union", "thrust", ty, n, ms, 2.0 * n * sizeof(T), true);
  thrust::merge(thrust::device, a.begin(), a.end(), b.begin(), b.end(), out.begin(), order);
  ms = time_ms([&] { thrust::unique_copy(thrust::device, out.begin(), out.end(), distinct.begin(), Equivalent<T, Order>{order}); });
  report("unique", "thrust", ty, n, ms, 2.0 * n * sizeof(T), true);
}

template <int V> void pairs(size_t n) {
  char ty[32]; snprintf(ty, sizeof ty, "u32_v%d", V);
  std::mt19937_64 g(11); std::vector<uint32_t> hk(n); std::vector<Payload<V>> hv(n);
  for (size_t i = 0; i < n; ++i) { hk[i] = (uint32_t)g(); for (int j = 0; j < V; ++j) hv[i].b[j] = (uint8_t)(i >> (8 * (j % 4))); }
  thrust::device_vector<uint32_t> ki(hk.begin(), hk.end()), ko(n);
  thrust::device_vector<Payload<V>> vi(hv.begin(), hv.end()), vo(n);
  uint32_t* kip = thrust::raw_pointer_cast(ki.data()); uint32_t* kop = thrust::raw_pointer_cast(ko.data());
  Payload<V>* vip = thrust::raw_pointer_cast(vi.data()); Payload<V>* vop = thrust::raw_pointer_cast(vo.data());
  double bytes = 2.0 * n * (4 + V);
  { size_t tb = 0; cub::DeviceMergeSort::SortPairsCopy(nullptr, tb, kip, vip, kop, vop, (int64_t)n, ::cuda::std::less<>()); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceMergeSort::SortPairsCopy(thrust::raw_pointer_cast(temp.data()), t2, kip, vip, kop, vop, (int64_t)n, ::cuda::std::less<>()); });
    report("sort_pairs", "cub_merge_sort", ty, n, ms, bytes, thrust::is_sorted(ko.begin(), ko.end())); }
  { size_t tb = 0; cub::DeviceRadixSort::SortPairs(nullptr, tb, kip, kop, vip, vop, (int64_t)n); thrust::device_vector<char> temp(tb);
    float ms = time_ms([&] { size_t t2 = tb; cub::DeviceRadixSort::SortPairs(thrust::raw_pointer_cast(temp.data()), t2, kip, kop, vip, vop, (int64_t)n); });
    report("sort_pairs", "cub_radix_sort", ty, n, ms, bytes, thrust::is_sorted(ko.begin(), ko.end())); }
}

int main(int argc, char** argv) {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# device %s sms %d cc %d.%d cub %d\n", p.name, p.multiProcessorCount, p.major, p.minor, CUB_VERSION);
  printf("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s\tok\n");
  const size_t records = size_t(1) << (argc > 1 ? atoi(argv[1]) : 24), pairs_n = size_t(1) << (argc > 2 ? atoi(argv[2]) : 26);
  std::mt19937_64 g(42);
  std::vector<Row> rows(records);
  for (size_t i = 0; i < records; ++i) { uint64_t r = g(); rows[i].score = (float)(r % 1000003) / 7.0f; rows[i].id = (uint32_t)(r >> 32); rows[i].seq = i; memset(rows[i].payload, (int)(r >> 8), 48); }
  merge_sort("row64", records, rows, RowOrder());
  algorithms("row64", records, rows, RowOrder());
  std::vector<Bytes16> keys(records);
  for (auto& k : keys) for (auto& w : k.w) w = (uint32_t)g();
  merge_sort("u8x16", records, keys, Bytes16Order());
  algorithms("u8x16", records, keys, Bytes16Order());
  std::vector<Triple> triples(records);
  for (auto& t : triples) { uint64_t r = g(); t.a = r % 1000; t.b = (int64_t)((r >> 10) % 1000); t.c = (double)((r >> 20) % 1000); }
  merge_sort("triple24", records, triples, TripleOrder());
  algorithms("triple24", records, triples, TripleOrder());
  pairs<12>(pairs_n);
  pairs<16>(pairs_n);
  return 0;
}

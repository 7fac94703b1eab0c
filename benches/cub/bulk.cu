// The anchors of benches/bulk.rs: bulk insert and bulk remove of u32 values with u32 positions
// as the fastest Thrust compositions we know, on the bench's inputs (n values 0..n, n / 4
// sorted random positions, SplitMix64 seed 21), on the same GPU in the same device call.
// - insert: thrust::merge_by_key of the positions (the inserted values following) with a
//   counting iterator (the array following), keys discarded: one merge, A first on ties.
// - remove: the removed positions' flags scattered into a zeroed stencil, then
//   thrust::remove_copy_if by the stencil (the kept count read back, as mergepath reads its).
// Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 benches/cub/bulk.cu -o /tmp/bulk && /tmp/bulk [log2_n ...]
// Prints TSV in the anchors' format: op impl type n ms gkeys_s gbytes_s ok (medians of 10 after
// a warm-up; bytes as the bench counts them).
#include <cub/version.cuh>
#include "anchor.cuh"
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/merge.h>
#include <thrust/remove.h>
#include <thrust/scatter.h>
#include <thrust/sequence.h>

struct is_set {
  __host__ __device__ bool operator()(uint8_t flag) const { return flag != 0; }
};

static std::vector<uint32_t> sorted_positions(size_t m, uint64_t limit) {
  Rng rng{21};
  std::vector<uint32_t> p(m);
  for (auto& x : p) x = (uint32_t)(rng.next() % limit);
  std::sort(p.begin(), p.end());
  return p;
}

static void bench(size_t n) {
  const size_t m = n / 4;
  thrust::device_vector<uint32_t> array(n), values(m, 0xffffffffu), out(n + m);
  thrust::sequence(array.begin(), array.end());
  const std::vector<uint32_t> ins = sorted_positions(m, n + 1), rem = sorted_positions(m, n);
  thrust::device_vector<uint32_t> inserts(ins.begin(), ins.end()), removes(rem.begin(), rem.end());
  std::vector<uint32_t> distinct(rem);
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const size_t kept = n - distinct.size();

  thrust::counting_iterator<uint32_t> counting(0);
  float ms = time_ms([&] {
    thrust::merge_by_key(thrust::device, inserts.begin(), inserts.end(), counting, counting + n, values.begin(), array.begin(),
                         thrust::make_discard_iterator(), out.begin());
  });
  // Spot check: the first inserted value lands before array[ins[0]].
  uint32_t first = out[ins[0]];
  report("bulk_insert", "thrust_merge_by_key", "u32", n, ms, 4.0 * (2 * (n + m) + m), first == 0xffffffffu);

  thrust::device_vector<uint8_t> stencil(n);
  size_t found = 0;
  ms = time_ms([&] {
    thrust::fill(thrust::device, stencil.begin(), stencil.end(), 0);
    thrust::scatter(thrust::device, thrust::make_constant_iterator<uint8_t>(1), thrust::make_constant_iterator<uint8_t>(1) + m,
                    removes.begin(), stencil.begin());
    auto end = thrust::remove_copy_if(thrust::device, array.begin(), array.end(), stencil.begin(), out.begin(), is_set());
    found = end - out.begin();
  });
  report("bulk_remove", "thrust_scatter_remove_copy_if", "u32", n, ms, 4.0 * (n + m + kept), found == kept);
}

int main(int argc, char** argv) {
  for (size_t n : anchor_sizes(argc, argv, {size_t(1) << 24, size_t(1) << 26})) bench(n);
  return 0;
}

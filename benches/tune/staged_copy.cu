// Staged pageable transfers as the host-slice pipeline does them: 256 MiB of a pageable buffer
// moved to the device (or back) through a ring of 6 pinned 8 MiB staging buffers, each piece
// copied by T host threads (the caller and T-1 spinning helpers) while the copy engine moves
// the previous pieces. Compares the host copy: glibc memcpy against 16-byte non-temporal
// stores. Build and run on the GPU machine, from the repository root:
//   nvcc -O3 -std=c++17 benches/tune/staged_copy.cu -o /tmp/staged_copy && /tmp/staged_copy
// Prints TSV: direction copy threads ms GB/s.
#include <cuda_runtime.h>
#include <emmintrin.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

static const size_t kSlot = 8u << 20, kSlots = 6, kBytes = 256u << 20;

static void copy_nt(char* dst, const char* src, size_t n) {
  size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
  if (head > n) head = n;
  memcpy(dst, src, head);
  size_t body = (n - head) / 64 * 64;
  char* d = dst + head;
  const char* s = src + head;
  for (char* end = d + body; d < end; d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i*)s), b = _mm_loadu_si128((const __m128i*)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i*)(s + 32)), e = _mm_loadu_si128((const __m128i*)(s + 48));
    _mm_stream_si128((__m128i*)d, a);
    _mm_stream_si128((__m128i*)(d + 16), b);
    _mm_stream_si128((__m128i*)(d + 32), c);
    _mm_stream_si128((__m128i*)(d + 48), e);
  }
  _mm_sfence();
  memcpy(d, s, n - head - body);
}

struct Team {
  int threads;
  bool nt;
  std::atomic<long> gen{0};
  std::atomic<int> done{0};
  char* dst = nullptr;
  const char* src = nullptr;
  size_t n = 0;
  std::atomic<bool> quit{false};
  std::vector<std::thread> helpers;
  void part(int i) {
    size_t step = (n + threads - 1) / threads;
    step = (step + 63) / 64 * 64;
    size_t off = std::min(n, i * step), len = std::min(step, n - off);
    if (nt) copy_nt(dst + off, src + off, len);
    else memcpy(dst + off, src + off, len);
  }
  Team(int t, bool nt_) : threads(t), nt(nt_) {
    for (int i = 1; i < t; ++i)
      helpers.emplace_back([this, i] {
        long seen = 0;
        while (true) {
          long g;
          while ((g = gen.load(std::memory_order_acquire)) == seen && !quit.load()) _mm_pause();
          if (quit.load()) return;
          seen = g;
          part(i);
          done.fetch_add(1, std::memory_order_release);
        }
      });
  }
  void copy(char* d, const char* s, size_t bytes) {
    dst = d, src = s, n = bytes;
    done.store(0);
    gen.fetch_add(1, std::memory_order_release);
    part(0);
    while (done.load(std::memory_order_acquire) != threads - 1) _mm_pause();
  }
  ~Team() {
    quit.store(true);
    for (auto& h : helpers) h.join();
  }
};

int main() {
  std::vector<char> host(kBytes, 1);
  char *dev, *ring;
  cudaMalloc(&dev, kBytes);
  cudaMallocHost(&ring, kSlot * kSlots);
  memset(ring, 2, kSlot * kSlots);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t ev[kSlots];
  for (auto& e : ev) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  for (int up = 1; up >= 0; --up)
    for (int nt = 0; nt <= 1; ++nt)
      for (int threads : {8, 12, 16}) {
        Team team(threads, nt);
        double best = 1e9;
        for (int rep = 0; rep < 6; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          size_t pending[kSlots] = {};
          char* pending_dst[kSlots] = {};
          for (size_t off = 0, i = 0; off < kBytes; off += kSlot, ++i) {
            size_t s = i % kSlots;
            cudaEventSynchronize(ev[s]);
            char* slot = ring + s * kSlot;
            if (up) {
              team.copy(slot, host.data() + off, kSlot);
              cudaMemcpyAsync(dev + off, slot, kSlot, cudaMemcpyHostToDevice, stream);
            } else {
              if (pending[s]) team.copy(pending_dst[s], slot, pending[s]);
              cudaMemcpyAsync(slot, dev + off, kSlot, cudaMemcpyDeviceToHost, stream);
              pending[s] = kSlot, pending_dst[s] = host.data() + off;
            }
            cudaEventRecord(ev[s], stream);
          }
          for (size_t k = 0, i = kBytes / kSlot; k < kSlots; ++k, ++i) {
            size_t s = i % kSlots;
            cudaEventSynchronize(ev[s]);
            if (!up && pending[s]) team.copy(pending_dst[s], ring + s * kSlot, pending[s]), pending[s] = 0;
          }
          cudaStreamSynchronize(stream);
          double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          if (rep > 0) best = std::min(best, ms);
        }
        printf("%s\t%s\t%d\t%.3f\t%.1f\n", up ? "upload" : "download", nt ? "nt_stores" : "memcpy", threads, best, kBytes / best / 1e6);
      }
  cudaFreeHost(ring);
  cudaFree(dev);
}

// Thread layer: a count a kernel reports, to the device for the kernels after it and to the
// host that waits on it.
#pragma once
#include <cstdint>

namespace mergepath {

// Where a count goes: `device` (read by later kernels) and, where not null, `host` (mapped
// pinned host memory the calling thread polls: the call returns as soon as the count lands
// there, without waiting for the stream: 8-13 us less a call (BENCHMARKS.md)).
struct reported_count {
  uint64_t* device;
  uint64_t* host;

  __device__ __forceinline__ void write(uint64_t count) const {
    *device = count;
    if (host) {
      *(volatile uint64_t*)host = count;
      __threadfence_system();  // pushes the store out to the host now
    }
  }
};

}  // namespace mergepath

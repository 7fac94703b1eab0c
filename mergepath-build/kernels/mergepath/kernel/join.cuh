// Kernel layer: a sorted relational join's two passes over the rows' match ranges
// (`lower[i]..upper[i]`: the rows of the other input equal to row i, from the sorted search).
// join_scan_tile: each row's output count (its matches; at least one for a left join; one for
// a row without matches, for the unmatched rows appended by right and full joins) scanned
// into `offsets` in one pass (decoupled look-back). join_expand_body: each output's row, found
// by a search of the offsets, and its pair.
#pragma once
#include "../cta/scan.cuh"

namespace mergepath {

// Row i's matches: its range of equal rows on the other side, cut at that side's end. On
// unsorted inputs the search's ranges are unspecified (a range that is not one counts as no
// match), and the cut keeps every pair inside the other side.
__device__ __forceinline__ int64_t join_row_matches(const join_params& p, int64_t row) {
  const uint64_t lower = p.lower[row], upper = min(p.upper[row], (uint64_t)p.other_rows);
  return upper > lower ? (int64_t)(upper - lower) : 0;
}

// Row i's output count under `mode` (JOIN_MATCHES, JOIN_AT_LEAST_ONE, JOIN_UNMATCHED).
__device__ __forceinline__ int64_t join_row_outputs(int64_t matches, int64_t mode) {
  return mode == JOIN_MATCHES ? matches : mode == JOIN_AT_LEAST_ONE ? (matches > 0 ? matches : 1) : (matches == 0);
}

// One tile of NT * VT rows: offsets[i] = the outputs of the rows before i; the last tile writes
// the sum of all to *total. Tiles take their indices from a ticket (tile_states[tiles]);
// tile_states: tiles + 1 zeroed slots.
template <int NT, int VT>
__device__ __forceinline__ void join_scan_tile(const join_params& p) {
  __shared__ scan_shared<NT> scan;
  __shared__ int64_t ticket;
  if (threadIdx.x == 0) ticket = (int64_t)atomicAdd((unsigned long long*)&p.tile_states[p.tiles], 1ull);
  __syncthreads();
  const int64_t tile = ticket;
  const int64_t first = tile * (NT * VT) + VT * (int64_t)threadIdx.x;
  int64_t outputs[VT];
  int64_t sum = 0;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    outputs[i] = first + i < p.rows ? join_row_outputs(join_row_matches(p, first + i), p.mode) : 0;
    sum += outputs[i];
  }
  int64_t tile_sum;
  const int64_t before = cta_exclusive_scan<NT>(sum, tile_sum, scan);
  const int64_t offset = cta_tile_offset<NT>(tile, tile_sum, p.tile_states, scan);
  int64_t running = offset + before;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (first + i < p.rows) p.offsets[first + i] = running;
    running += outputs[i];
  }
  if (tile == p.tiles - 1 && threadIdx.x == 0) *p.total = offset + tile_sum;
}

// The last row whose offset is at most k, searching rows [from, p.rows) (offsets[from] <= k).
__device__ __forceinline__ int64_t join_row_of(const join_params& p, int64_t from, int64_t k) {
  int64_t begin = from + 1, end = p.rows;
  while (begin < end) {
    const int64_t mid = begin + (end - begin) / 2;
    if (p.offsets[mid] <= k) begin = mid + 1;
    else end = mid;
  }
  return begin - 1;
}

// One tile of NT * VT outputs of `p.outputs`, VT consecutive ones per thread, written at
// p.out_first + k through shared memory (coalesced stores): output k belongs to the row whose
// offsets hold it. The rows of A (JOIN_MATCHES, JOIN_AT_LEAST_ONE) give (row, lower + rank),
// or (row, -1) past the row's matches; unmatched rows of B (JOIN_UNMATCHED) give (-1, row).
// The next row is one step on for rows with outputs, a search past a run of rows without.
template <int NT, int VT>
__device__ __forceinline__ void join_expand_tile(const join_params& p) {
  __shared__ int64_t tile_a[NT * VT], tile_b[NT * VT];
  const int64_t tile_first = (int64_t)blockIdx.x * (NT * VT);
  const int first = VT * (int)threadIdx.x;
  const int64_t k0 = tile_first + first;
  if (k0 < p.outputs) {
    int64_t row = join_row_of(p, 0, k0);
    for (int i = 0; i < VT && k0 + i < p.outputs; ++i) {
      const int64_t k = k0 + i;
      if (row + 1 < p.rows && p.offsets[row + 1] <= k) {
        row = (row + 2 >= p.rows || p.offsets[row + 2] > k) ? row + 1 : join_row_of(p, row + 1, k);
      }
      const int64_t rank = k - p.offsets[row];
      const bool matched = p.mode != JOIN_UNMATCHED && rank < join_row_matches(p, row);
      tile_a[first + i] = p.mode == JOIN_UNMATCHED ? -1 : row;
      tile_b[first + i] = p.mode == JOIN_UNMATCHED ? row : matched ? (int64_t)p.lower[row] + rank : -1;
    }
  }
  __syncthreads();
  const int64_t in_tile = min((int64_t)(NT * VT), p.outputs - tile_first);
  for (int i = (int)threadIdx.x; i < in_tile; i += NT) {
    p.out_a[p.out_first + tile_first + i] = tile_a[i];
    p.out_b[p.out_first + tile_first + i] = tile_b[i];
  }
}

}  // namespace mergepath

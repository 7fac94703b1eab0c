// Kernel layer: a sorted relational join's two passes over the rows' match ranges
// (`lower[i]..upper[i]`: the rows of the other input equal to row i, from the sorted search).
// join_scan_tile: each row's output count (its matches; at least one for a left join; one for
// a row without matches, for the unmatched rows appended by right and full joins) scanned
// into `offsets` in one pass (decoupled look-back). join_expand_tile: each output's row, by a
// load-balancing search of the outputs over the offsets, and its pair.
#pragma once
#include "../cta/scan.cuh"
#include "load_balancing.cuh"

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

// One tile of the load-balancing merge of the rows' first outputs (`offsets`, the segment
// starts) with the side's outputs (load_balancing_tile_items, partitions from
// load_balancing_partitions_body over the offsets): output k belongs to the row s whose
// outputs hold it, of rank k - offsets[s]. Rows of A (JOIN_MATCHES, JOIN_AT_LEAST_ONE) give
// (row, lower + rank), or (row, -1) past the row's matches; unmatched rows of B
// (JOIN_UNMATCHED) give (-1, row). Written at p.out_first + k by consecutive threads.
template <int NT, int VT>
__device__ __forceinline__ void join_expand_tile(const join_params& p) {
  const uint64_t* offsets = reinterpret_cast<const uint64_t*>(p.offsets);
  const load_balancing_items<uint64_t> items = load_balancing_tile_items<NT, VT>(offsets, p.rows, p.outputs, p.partitions);
  for (int k = (int)threadIdx.x; k < items.count(); k += NT) {
    const int64_t row = items.segment(k), output = items.item(k), rank = (int64_t)items.rank(k);
    const bool matched = p.mode != JOIN_UNMATCHED && rank < join_row_matches(p, row);
    p.out_a[p.out_first + output] = p.mode == JOIN_UNMATCHED ? -1 : row;
    p.out_b[p.out_first + output] = p.mode == JOIN_UNMATCHED ? row : matched ? (int64_t)p.lower[row] + rank : -1;
  }
}

}  // namespace mergepath

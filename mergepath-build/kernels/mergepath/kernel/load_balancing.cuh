// Kernel layer: load-balancing search (Modern GPU's). For `count` work items and `segments`
// segments given by their first items `starts` (an exclusive scan of their lengths:
// non-decreasing, starts[0] = 0), item i's segment is the last s with starts[s] <= i and its
// rank i - starts[s]. The items 0, 1, ..., count - 1 (a counting sequence, never stored) are
// merged with the segment boundaries starts[1 .. segments) by Merge Path, a boundary before an
// item equal to it (the boundaries are A: ties go to A), so an item's segment is the number of
// boundaries merged before it. Tiles of NT * VT merge outputs bound every CTA's work whatever
// the segments' lengths: a run of empty segments costs its boundaries, a long segment its items.
#pragma once
#include <type_traits>
#include "../cta/move.cuh"
#include "../cta/scan.cuh"
#include "merge.cuh"

namespace mergepath {

// The items base, base + 1, ... as indices of the starts' type (they fit: the host checks that
// the index type holds the item count), so boundaries and items compare as one type.
template <class I>
struct item_positions {
  int64_t base;
  __device__ __forceinline__ I operator[](int64_t i) const { return (I)(base + i); }
};

// Partition p of the merge of the boundaries with the items: the boundaries before merge output
// p * spacing. segments >= 1.
template <class I>
__device__ __forceinline__ void load_balancing_partitions_body(const I* starts, int64_t segments, int64_t count,
                                                               int64_t spacing, int64_t num_partitions,
                                                               int64_t* partitions) {
  merge_path_partitions_body(starts + 1, segments - 1, item_positions<I>{0}, count, spacing, num_partitions,
                             partitions, less_t<I>());
}

// A thread's VT outputs of a tile's merge of its a_n boundaries (tile_starts[1 ..]) with its
// b_n items, from the thread's own split (at VT * threadIdx.x) in order: on_boundary(h, k) for
// boundary h with k items before it (or on_boundary(h), where the callback takes one index),
// on_item(k, h) for item k with h boundaries before it. Returns the boundaries before the
// thread's first output and after its last (x, y).
template <int VT, class I, class OnBoundary, class OnItem>
__device__ __forceinline__ int2 load_balancing_walk(const I* tile_starts, int a_n, item_positions<I> items, int b_n,
                                                    OnBoundary on_boundary, OnItem on_item) {
  const int diag = min(VT * (int)threadIdx.x, a_n + b_n);
  int h = merge_path<1>(tile_starts + 1, a_n, items, b_n, diag, less_t<I>());
  const int first = h;
  int k = diag - h;
  I next = h < a_n ? tile_starts[1 + h] : I();  // boundary h, in a register: a shared read a boundary
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (h + k < a_n + b_n) {
      // Where the items are done, h < a_n (h + k < a_n + b_n): a boundary goes out.
      if (k >= b_n || (h < a_n && next <= items[k])) {
        if constexpr (std::is_invocable_v<OnBoundary, int, int>) on_boundary(h, k);
        else on_boundary(h);
        ++h;
        if (h < a_n) next = tile_starts[1 + h];
      } else {
        on_item(k, h);
        ++k;
      }
    }
  }
  return make_int2(first, h);
}

// A load-balancing tile's range of the merge, and the starts of its segments in shared memory:
// slot 0 the start of the segment the tile's first item is in, slot h + 1 the tile's boundary h.
// `out_of_order`: the tile's starts are not non-decreasing (bad starts).
template <class I>
struct load_balancing_range {
  merge_range r;
  const I* tile_starts;
  bool out_of_order;
  __device__ __forceinline__ int count() const { return r.b_count(); }
  __device__ __forceinline__ int64_t item(int k) const { return r.b_begin + k; }
};

// The start of every load-balancing tile (output tile blockIdx.x of the merge, partitions as
// load_balancing_partitions_body's, one more than the tiles): its range, and its segments'
// starts loaded into shared memory. stage(h, s) is called for each slot h, of segment s, as its
// start is loaded, for a tile that keeps more of its segments' data in shared memory (its loads
// in flight with the starts'). Ends with a barrier; a kernel calls it once.
template <int NT, int VT, class I, class Stage>
__device__ __forceinline__ load_balancing_range<I> load_balancing_tile_load(const I* starts, int64_t segments, int64_t count,
                                                                           const int64_t* partitions, Stage stage) {
  constexpr int NV = NT * VT;
  __shared__ I tile_starts[NV + 1];
  wait_for_previous_kernel();  // the partitions (see merge.cuh)
  const merge_range r = compute_merge_range(segments - 1, count, blockIdx.x, NV, partitions);
  bool out_of_order = false;
  for (int h = (int)threadIdx.x; h <= r.a_count(); h += NT) {
    const I start = starts[r.a_begin + h];
    tile_starts[h] = start;
    if (h < r.a_count()) out_of_order |= starts[r.a_begin + h + 1] < start;  // the next slot's load, from L1
    stage(h, r.a_begin + h);
  }
  out_of_order = __syncthreads_or(out_of_order);
  return load_balancing_range<I>{r, tile_starts, out_of_order};
}

// Each of a loaded tile's items k handed to note(k, h), h its slot (the tile's boundaries before
// it), from each thread's walk of VT merge outputs from its own split (load_balancing_walk): a
// thread's items in order, their slots non-decreasing. On starts that are not an exclusive scan
// (out of order in this tile) the threads' splits can overlap, and the walk would note an item
// twice: there each item searches its own boundaries instead (unspecified slots, but in range and
// race-free). Ends with a barrier: what note wrote is ready.
template <int NT, int VT, class I, class Note>
__device__ __forceinline__ void load_balancing_tile_notes(const load_balancing_range<I>& t, Note note) {
  const int a_n = t.r.a_count(), b_n = t.r.b_count();
  const item_positions<I> items{t.r.b_begin};
  if (t.out_of_order) {
    for (int k = (int)threadIdx.x; k < b_n; k += NT) note(k, sorted_bound<true>(t.tile_starts + 1, a_n, items[k], less_t<I>()));
  } else {
    load_balancing_walk<VT>(t.tile_starts, a_n, items, b_n, [](int, int) {}, note);
  }
  __syncthreads();
}

// A load-balancing tile's marks (load_balancing_tile_marked): bit p of bits[p / 32] set where
// the tile's item p is the first in the tile of a segment (of its run of items in one segment).
template <int NT, int VT>
struct load_balancing_marks {
  static_assert(NT * VT % 32 == 0, "whole words of marks");
  unsigned bits[NT * VT / 32];
};

// A marked load-balancing tile (output tile blockIdx.x of the merge, partitions as
// load_balancing_partitions_body's): its range of the merge, and each run of its items in one
// segment handed to mark(first, p, end, start, staged) once: the tile's items p .. end - 1
// (items first + p .., first = r.b_begin) are those of a segment s which starts at item
// `start`, staged = stage(s), and p is marked. stage(s) loads what the kernel keeps of segment
// s, its loads in flight with the start's. Item 0 always starts a run: in a tile without items
// an empty one, the only empty run handed. Nothing is kept of the starts but the marks, so a
// kernel keeps what it needs of a run in shared memory at its item p, written by mark. On
// starts that are not an exclusive scan in this tile (out of order, or its first segment
// starting after its first item) every item is a run of its own, of the segment a search of
// the starts gives (unspecified, in range; `start` may then be past the item). Ends with a
// barrier; a kernel calls it once.
template <int NT, int VT, class I, class Stage, class Mark>
__device__ __forceinline__ merge_range load_balancing_tile_marked(const I* starts, int64_t segments, int64_t count,
                                                                  const int64_t* partitions,
                                                                  load_balancing_marks<NT, VT>& marks, Stage stage,
                                                                  Mark mark) {
  constexpr int WORDS = NT * VT / 32;
  for (int w = (int)threadIdx.x; w < WORDS; w += NT) marks.bits[w] = 0;
  wait_for_previous_kernel();  // the partitions (see merge.cuh)
  const merge_range r = compute_merge_range(segments - 1, count, blockIdx.x, NT * VT, partitions);
  const int a_n = r.a_count(), b_n = r.b_count();
  __syncthreads();  // the marks cleared
  // In order, each segment's run is from its start to the next one's; a run's item marked
  // first (by an atomic) hands it, which only an out-of-order tile can have twice.
  bool out_of_order = false;
  const auto first_item = [&](I start) { return (int64_t)start - r.b_begin; };
  for (int h = (int)threadIdx.x; h <= a_n; h += NT) {
    const int64_t s = r.a_begin + h;
    const I start = starts[s];
    const auto staged = stage(s);
    const int64_t p = h == 0 ? 0 : first_item(start);
    int64_t end = b_n;
    if (h < a_n) {
      const I next = starts[s + 1];  // the next slot's load, from L1
      out_of_order |= next < start;
      end = min(max(first_item(next), p), (int64_t)b_n);
    }
    out_of_order |= h == 0 ? first_item(start) > 0 : p < 0;
    if (p >= 0 && (end > p || (p == 0 && b_n == 0))) {
      const unsigned bit = 1u << (p % 32);
      if (!(atomicOr(&marks.bits[p / 32], bit) & bit)) mark(r.b_begin, (int)p, (int)end, start, staged);
    }
  }
  if (__syncthreads_or(out_of_order)) {
    for (int w = (int)threadIdx.x; w < WORDS; w += NT) {
      const int below = min(max(b_n - 32 * w, 0), 32);  // the word's items in the tile
      marks.bits[w] = below == 32 ? ~0u : (1u << below) - 1u;
    }
    for (int k = (int)threadIdx.x; k < b_n; k += NT) {
      const int64_t s = r.a_begin + sorted_bound<true>(starts + r.a_begin + 1, a_n, (I)(r.b_begin + k), less_t<I>());
      mark(r.b_begin, k, k + 1, starts[s], stage(s));
    }
    __syncthreads();
  }
  return r;
}

// The highest set bit of x, -1 where none.
__device__ __forceinline__ int highest_bit(unsigned x) {
  int bit;
  asm("bfind.u32 %0, %1;" : "=r"(bit) : "r"(x));
  return bit;
}

// A marked tile's items as a warp takes them: warp w's 32 * VT items from item 32 * VT * w, 32
// at a time (lane l's i-th is item(i) = 32 * (VT * w + i) + l), so its accesses by item are
// coalesced. mark(i) is the mark at or before the lane's i-th item: where its run starts (the
// cursor carries the warp's last mark from one 32 to the next); all the warp's lanes call it,
// for i = 0, 1, ... in turn. An item past the tile's gets the mark of the tile's last item's
// run (0 in a tile without items), which it is past the end of.
template <int NT, int VT>
struct load_balancing_item_marks {
  const unsigned* bits;
  int first_word, carry;  // the warp's first word of marks; the last mark before the next 32 items
  __device__ __forceinline__ load_balancing_item_marks(const load_balancing_marks<NT, VT>& m)
      : bits(m.bits), first_word(VT * ((int)threadIdx.x / WARP_THREADS)), carry(0) {
    for (int w = first_word - 1; w >= 0; --w)
      if (bits[w]) {
        carry = WARP_THREADS * w + highest_bit(bits[w]);
        break;
      }
  }
  __device__ __forceinline__ int item(int i) const { return WARP_THREADS * (first_word + i) + (int)threadIdx.x % WARP_THREADS; }
  __device__ __forceinline__ int mark(int i) {
    const int w = first_word + i, lane = (int)threadIdx.x % WARP_THREADS;
    const int bit = highest_bit(bits[w] & (0xffffffffu >> (31 - lane)));
    const int at = bit >= 0 ? WARP_THREADS * w + bit : carry;
    carry = __shfl_sync(0xffffffffu, at, WARP_THREADS - 1);
    return at;
  }
};

// A load-balancing tile's items, once load_balancing_tile_items has noted them: its range of
// the merge, and for its item k (0 .. count()) the item's index, its segment and its rank there.
template <class I>
struct load_balancing_items : load_balancing_range<I> {
  const int* boundaries_before;  // shared: the tile's boundaries before its item k
  using load_balancing_range<I>::r;
  using load_balancing_range<I>::tile_starts;
  using load_balancing_range<I>::item;
  // The tile's boundaries before item k, clamped (they are in range; the clamp keeps any
  // reading of bad starts in bounds whatever the notes say).
  __device__ __forceinline__ int boundaries(int k) const { return min(max(boundaries_before[k], 0), r.a_count()); }
  __device__ __forceinline__ int64_t segment(int k) const { return r.a_begin + boundaries(k); }
  // Unsigned: on bad starts a rank wraps to a large value instead of going negative.
  __device__ __forceinline__ uint64_t rank(int k) const { return (uint64_t)item(k) - (uint64_t)tile_starts[boundaries(k)]; }
};

// A load-balancing tile loaded (load_balancing_tile_load, staging nothing) and each item's
// boundaries before it noted in shared memory (load_balancing_tile_notes). Ready on return; a
// kernel calls it once.
template <int NT, int VT, class I>
__device__ __forceinline__ load_balancing_items<I> load_balancing_tile_items(const I* starts, int64_t segments, int64_t count,
                                                                            const int64_t* partitions) {
  __shared__ int boundaries_before[NT * VT];
  const load_balancing_range<I> t = load_balancing_tile_load<NT, VT>(starts, segments, count, partitions, [](int, int64_t) {});
  load_balancing_tile_notes<NT, VT>(t, [&](int k, int h) { boundaries_before[k] = h; });
  return load_balancing_items<I>{t, boundaries_before};
}

// Unit u of a tile's values of `words` words each: the value's index (x) and the word (y).
__device__ __forceinline__ int2 value_word(int u, int words) {
  const int k = words == 1 ? u : u / words;  // one word a value: no division
  return make_int2(k, u - k * words);
}

// The words a thread of a load-balancing tile has in flight when it moves values.
constexpr int LOAD_BALANCING_MOVES = 8;

// What a load-balancing tile writes for its items j, each output where it is not null: the
// segment s, the rank j - starts[s], and (interval expand) segment s's value of `words` words
// of W, values[s * words ...].
template <class I, class W>
struct load_balancing_outputs {
  I* segments;
  I* ranks;
  const W* values;
  W* expanded;
  int words;
};

// Output tile blockIdx.x of the merge: the outputs `out` names for the tile's items
// (load_balancing_tile_items), written in coalesced order (an expanded value's words by
// consecutive threads).
// On starts that are not an exclusive scan the segments are unspecified but in [0, segments),
// the ranks unspecified, and no access is out of bounds.
template <int NT, int VT, class I, class W>
__device__ __forceinline__ void load_balancing_tile(const I* starts, int64_t segments, int64_t count,
                                                    const int64_t* partitions, const load_balancing_outputs<I, W>& out) {
  const load_balancing_items<I> items = load_balancing_tile_items<NT, VT>(starts, segments, count, partitions);
  if (out.segments || out.ranks) {
    for (int k = (int)threadIdx.x; k < items.count(); k += NT) {
      const int64_t j = items.item(k);
      if (out.segments) out.segments[j] = (I)items.segment(k);
      if (out.ranks) out.ranks[j] = (I)items.rank(k);
    }
  }
  if (out.expanded) {
    const int words = out.words;
    cta_move_words<NT, LOAD_BALANCING_MOVES>(items.count() * words, out.values, out.expanded, [&](int u, uint64_t& from, uint64_t& to) {
      const int2 v = value_word(u, words);
      from = (uint64_t)items.segment(v.x) * words + v.y;
      to = (uint64_t)items.item(v.x) * words + v.y;
      return true;
    });
  }
}

}  // namespace mergepath

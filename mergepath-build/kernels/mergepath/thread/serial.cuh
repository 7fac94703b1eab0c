// Thread layer: the serial merge loop each thread runs on its share of a tile.
#pragma once
#include "search.cuh"
#include <mergepath/contract.cuh>  // SET_* flags, generated from mergepath-build's contract

namespace mergepath {

// Where a thread's share of a merge starts: the items of A (`a`) and of B (`b`) before it;
// and, where serial_merge_at says, the items of A before its end (`a_end`).
struct merge_split {
  int a, b;
  int a_end;
};

// One step of a serial merge in shared memory: takes the head of A (position a, key a_key) or
// of B (b, b_key), writes it and its position (clamped to `last`, the array's last item), and
// loads the next head of the side it took (clamped to keys[last]).
template <class K>
__device__ __forceinline__ void serial_merge_take(const K* keys, int last, bool take_a, int& a, int& b, K& a_key,
                                                  K& b_key, K& result, int& index) {
  result = take_a ? a_key : b_key;
  const int from = take_a ? a : b;
  index = from < last ? from : last;
  a += (int)take_a;
  b += (int)!take_a;
  const int next = take_a ? a : b;
  const K key = keys[next < last ? next : last];
  a_key = take_a ? key : a_key;
  b_key = take_a ? b_key : key;
}

// The loop of serial_merge (Tagged = false) and serial_merge_two (Tagged = true): X is
// keys[a..a_end) with its second list from a_split, Y is keys[b..b_end) with its second list
// from b_split; an item of a first list goes before any of a second list.
// Returns where A stands after the VT steps (past a_end only where the steps went past the end
// of both ranges).
template <int VT, bool Tagged, tie Tie, class K, class Comp>
__device__ __forceinline__ int serial_merge_loop(const K* keys, int a, int a_split, int a_end, int b, int b_split,
                                                 int b_end, K (&results)[VT], int (&indices)[VT], Comp comp) {
  const int last = b_end > 0 ? b_end - 1 : 0;  // an empty merge reads keys[0], unused
  K a_key = keys[a < last ? a : last];
  K b_key = keys[b < last ? b : last];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const bool by_list = Tagged && (a >= a_split) != (b >= b_split);
    const bool take_a =
        (b >= b_end) || ((a < a_end) && (by_list ? b >= b_split : a_goes_first<Tie>(a_key, b_key, comp)));
    serial_merge_take(keys, last, take_a, a, b, a_key, b_key, results[i], indices[i]);
  }
  return a;
}

// Merges exactly VT items from shared memory into registers, starting at (a, b) on the
// thread's merge path. A is keys[a..a_end), B is keys[b..b_end), both in one shared array
// (B placed after A, so b_end is the end of both). Reads stay inside [a, b_end); past the end
// of both ranges (the tail of a partial tile) the results are unspecified and must not be
// stored. Unrolled so `results` and `indices` stay in registers, and branch-free: each step
// loads the next head of whichever side it took (clamped to the array), since threads of a
// warp take A and B in different orders. `indices[i]` is the tile-local position the i-th
// result came from (< a_end: from A). `Tie` as in merge_path (the same as the split's).
template <int VT, tie Tie = tie::a_first, class K, class Comp>
__device__ __forceinline__ int serial_merge(const K* keys, int a, int a_end, int b, int b_end,
                                            K (&results)[VT], int (&indices)[VT], Comp comp) {
  return serial_merge_loop<VT, false, Tie>(keys, a, a_end, a_end, b, b_end, b_end, results, indices, comp);
}

// Two merges in one output: X = keys[0..x_end) holds sorted lists X0 = [0, x0_end) and X1 =
// [x0_end, x_end), Y = keys[x_end..y_end) holds Y0 = [x_end, y0_end) and Y1; the output is
// merge(X0, Y0) followed by merge(X1, Y1) (n0 = x0_end + (y0_end - x_end) items, then the
// rest). A thread's VT items from output position `diag` on may straddle the two merges, so
// threads split the whole output evenly. Results, indices and Tie as serial_merge_at.
template <int VT, tie Tie = tie::a_first, class K, class Comp>
__device__ __forceinline__ void serial_merge_two_at(const K* keys, int x0_end, int x_end, int y0_end, int y_end,
                                                    int diag, K (&results)[VT], int (&indices)[VT], Comp comp) {
  const int n0 = x0_end + (y0_end - x_end);
  int x, y;
  if (diag < n0) {
    x = merge_path<1, Tie>(keys, x0_end, keys + x_end, y0_end - x_end, diag, comp);
    y = x_end + diag - x;
  } else {
    const int d = (diag < y_end ? diag : y_end) - n0;
    const int mp = merge_path<1, Tie>(keys + x0_end, x_end - x0_end, keys + y0_end, y_end - y0_end, d, comp);
    x = x0_end + mp;
    y = y0_end + d - mp;
  }
  serial_merge_loop<VT, true, Tie>(keys, x, x0_end, x_end, y, y0_end, y_end, results, indices, comp);
}

// One thread's share of a merge held in shared memory: the VT items of the merge of
// keys[a_begin, a_end) with keys[a_end, b_end) from output position `diag` on (clamped to the
// merge's length), found by a merge-path search and merged serially. `indices` are positions
// in `keys`. Returns the thread's split: its first item is A's item `split.a` and B's item
// `split.b` (counted from a_begin and from a_end), the items of A and B before it; and
// `split.a_end`, the items of A before its end where its VT items stay inside the merge.
template <int VT, tie Tie = tie::a_first, class K, class Comp>
__device__ __forceinline__ merge_split serial_merge_at(const K* keys, int a_begin, int a_end, int b_end, int diag,
                                                       K (&results)[VT], int (&indices)[VT], Comp comp) {
  if (diag > b_end - a_begin) diag = b_end - a_begin;
  const int mp = merge_path<1, Tie>(keys + a_begin, a_end - a_begin, keys + a_end, b_end - a_end, diag, comp);
  const int a_stop = serial_merge<VT, Tie>(keys, a_begin + mp, a_end, a_end + diag - mp, b_end, results, indices, comp);
  return {mp, diag - mp, a_stop - a_begin};
}


// One thread's share of a round that merges consecutive sorted lists pairwise: keys[0..count)
// holds `lists` lists, list i at [bound(i), bound(i + 1)) (bound(0) = 0, bound(lists) = count);
// the round's output is merge(list 0, list 1), then merge(list 2, list 3), ... (an odd last
// list as it is), equal keys of the lower list first. The thread's VT items from output
// position `diag` on may straddle several pairs (lists can be short or empty): a merge-path
// search in the first pair, then the serial loop, moving to the next non-empty pair where one
// ends. Reads stay inside keys[0..count); results past `count` are unspecified and `indices`
// (positions in `keys`) stay below `count`. count >= 1.
template <int VT, class K, class Bound, class Comp>
__device__ __forceinline__ void serial_merge_pairs_at(const K* keys, Bound bound, int lists, int count, int diag,
                                                      K (&results)[VT], int (&indices)[VT], Comp comp) {
  const int pairs = (lists + 1) / 2;
  if (diag > count) diag = count;
  int q = 0, hi = pairs;  // the last pair starting at or before diag
  while (hi - q > 1) {
    const int mid = (q + hi) / 2;
    if (bound(2 * mid) <= diag) q = mid;
    else hi = mid;
  }
  const auto list_end = [&](int i) { return bound(i < lists ? i : lists); };
  int a_end = list_end(2 * q + 1), b_end = list_end(2 * q + 2);
  const int a_begin = bound(2 * q);
  const int mp = merge_path<1>(keys + a_begin, a_end - a_begin, keys + a_end, b_end - a_end, diag - a_begin, comp);
  int a = a_begin + mp, b = a_end + (diag - a_begin - mp);
  const int last = count - 1;
  K a_key = keys[a < last ? a : last];
  K b_key = keys[b < last ? b : last];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (a >= a_end && b >= b_end && q + 1 < pairs) {  // this pair is done: the next one starts at b_end
      do {
        ++q;
        a = bound(2 * q);
        a_end = list_end(2 * q + 1);
        b_end = list_end(2 * q + 2);
      } while (a == b_end && q + 1 < pairs);
      b = a_end;
      a_key = keys[a < last ? a : last];
      b_key = keys[b < last ? b : last];
    }
    const bool take_a = (b >= b_end) || ((a < a_end) && a_goes_first<tie::a_first>(a_key, b_key, comp));
    serial_merge_take(keys, last, take_a, a, b, a_key, b_key, results[i], indices[i]);
  }
}

// Which items a multiset operation outputs, as a bit set over the three kinds of step of
// serial_set_op: an A item with no partner in B, a B item with no partner in A, and a matched
// pair (whose A item goes out). Intersection: SET_MATCHED; union: all three; difference
// (A - B): SET_A_ONLY; symmetric difference: SET_A_ONLY | SET_B_ONLY. These are C++'s
// std::set_* multiset semantics (see balanced_path for the pairing). The flags are the
// contract's (contract.cuh).

// One thread's share of a multiset operation on a tile in shared memory: A is
// keys[a..a_end), B keys[b..b_end), both starting and ending at balanced-path splits, in at
// most VT steps (a step takes one unmatched item or one matched pair). Step i's candidate
// output goes to results[i] with its tile-local position in indices[i]; bit i of the returned
// mask says whether `emit` outputs it. keys[a_end] and keys[b_end] must be readable (their
// values are not used): the loop loads both heads every step instead of branching, since
// threads of a warp advance A and B differently.
template <int VT, class K, class Comp>
__device__ __forceinline__ unsigned serial_set_op(const K* keys, int a, int a_end, int b, int b_end, int emit,
                                                  K (&results)[VT], int (&indices)[VT], Comp comp) {
  static_assert(VT <= 32, "serial_set_op returns a 32-bit mask");
  unsigned mask = 0;
  const bool emit_a = emit & SET_A_ONLY, emit_b = emit & SET_B_ONLY, emit_matched = emit & SET_MATCHED;
  K a_key = keys[a], b_key = keys[b];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const bool has_a = a < a_end, has_b = b < b_end;
    // Inside balanced splits, heads that compare equal are a pair (see balanced_path): a step
    // takes the head that goes first, or both.
    const bool take_a = has_a && (!has_b || !comp(b_key, a_key));
    const bool take_b = has_b && (!has_a || !comp(a_key, b_key));
    results[i] = take_a ? a_key : b_key;
    indices[i] = take_a ? a : b;
    const bool out = take_a ? (take_b ? emit_matched : emit_a) : (take_b && emit_b);
    mask |= (unsigned)out << i;
    a += (int)take_a;
    b += (int)take_b;
    a_key = keys[a];
    b_key = keys[b];
  }
  return mask;
}


// The book's merge_sequential: merges A[0..m) and B[0..n) (pointers or indexable inputs) into
// out[0..m + n), stably (ties: A first), one item at a time, writing straight to `out`.
template <class Index, class KeysA, class KeysB, class K, class Comp>
__device__ __forceinline__ void merge_sequential(KeysA a, Index m, KeysB b, Index n, K* out, Comp comp) {
  Index i = 0, j = 0, k = 0;
  while (i < m && j < n) {
    if (!comp(b[j], a[i])) out[k++] = a[i++];
    else out[k++] = b[j++];
  }
  while (i < m) out[k++] = a[i++];
  while (j < n) out[k++] = b[j++];
}

}  // namespace mergepath

// Thread layer: Merge Path searches.
//
// The merge path of A and B crosses cross-diagonal `diag` at (a, diag - a); `merge_path`
// returns that `a`. Ties go to A by default (A's element of an equal pair is output first),
// which makes the merge stable; `tie::b_first` puts B's first instead, so a kernel that wants
// the other input first on ties keeps its inputs in place. The index type is a template
// parameter: `int` inside a tile (shared memory), `int64_t` over global memory.
#pragma once
#include <stdint.h>

namespace mergepath {

// The sorted sequence base, base + 1, ...: an implicit input of the searches and merges (output
// positions in a load-balancing search, array positions in a bulk insert).
struct counting_iterator {
  int64_t base;
  __device__ __forceinline__ int64_t operator[](int64_t i) const { return base + i; }
};

// Which input's item goes out first of two equal keys. A merge's partitions, splits and serial
// merges must all use the same one.
enum class tie { a_first, b_first };

// Does A[i] go out before B[j] in the merge? (`Tie` says which wins ties.)
template <tie Tie = tie::a_first, class K, class Comp>
__device__ __forceinline__ bool a_goes_first(K a_key, K b_key, Comp comp) {
  if constexpr (Tie == tie::a_first) return !comp(b_key, a_key);
  else return comp(a_key, b_key);
}

// Binary search of one cross-diagonal that decides the crossing's bits from the highest down:
// the probe for bit 2^k reads A at x + 2^k - 1, x a multiple of 2^(k+1), so every search of a
// partition kernel probes the same few A positions in its top levels (until the crossings
// part) and shares their loads through L2 instead of fetching a DRAM sector of its own per
// probe (B's probes stay its own). Probes outside [max(0, diag - b_count), min(diag, a_count))
// are decided without a load. Same result as binary search on sorted inputs; on unsorted ones,
// some crossing inside that range.
template <tie Tie = tie::a_first, class Index, class KeysA, class KeysB, class Comp>
__device__ __forceinline__ Index merge_path_aligned(KeysA a, Index a_count, KeysB b, Index b_count, Index diag,
                                                    Comp comp) {
  const Index lo = diag > b_count ? diag - b_count : 0;
  const Index hi = diag < a_count ? diag : a_count;
  if (hi <= 0) return 0;
  // The largest x <= hi with x <= lo or A[x - 1] going before B[diag - x]: the crossing.
  Index x = 0;
  const int top = sizeof(Index) == 8 ? 63 - __clzll((long long)hi) : 31 - __clz((int)hi);
  for (Index bit = Index(1) << top; bit > 0; bit >>= 1) {
    const Index next = x + bit;
    if (next <= hi && (next <= lo || a_goes_first<Tie>(a[next - 1], b[diag - next], comp))) x = next;
  }
  return x;
}

// Search of one cross-diagonal by one thread. Each round probes PROBES evenly spaced points of
// the remaining range at once (independent loads, in flight together) and keeps the gap that
// holds the crossing: PROBES = 1 is binary search; PROBES = 3 resolves two levels per round for
// three times the loads. Fewer rounds help only where latency, not traffic, bounds the search;
// for the library's partitions over global memory it is traffic (BENCHMARKS.md), so they use
// PROBES = 0, merge_path_aligned, whose probes share DRAM sectors across searches.
template <int PROBES = 1, tie Tie = tie::a_first, class Index, class KeysA, class KeysB, class Comp>
__device__ __forceinline__ Index merge_path(KeysA a, Index a_count, KeysB b, Index b_count,
                                            Index diag, Comp comp) {
  if constexpr (PROBES == 0) {
    return merge_path_aligned<Tie>(a, a_count, b, b_count, diag, comp);
  } else {
    Index begin = diag > b_count ? diag - b_count : 0;
    Index end = diag < a_count ? diag : a_count;
    while (begin < end) {
      const Index len = end - begin;
      Index mid[PROBES];
      bool take_a[PROBES];
#pragma unroll
      for (int j = 0; j < PROBES; ++j) {
        // begin + floor(len * (j + 1) / (PROBES + 1)), split so it cannot overflow; < end.
        mid[j] = begin + (len / (PROBES + 1)) * (j + 1) + ((len % (PROBES + 1)) * (j + 1)) / (PROBES + 1);
        take_a[j] = a_goes_first<Tie>(a[mid[j]], b[diag - 1 - mid[j]], comp);
      }
      // take_a is monotone in the probe position: true for a prefix of the probes.
      Index new_begin = begin, new_end = end;
#pragma unroll
      for (int j = 0; j < PROBES; ++j) {
        if (take_a[j]) new_begin = mid[j] + 1;
        else if (new_end == end) new_end = mid[j];
      }
      begin = new_begin;
      end = new_end;
    }
    return begin;
  }
}

// How many of the sorted keys0[0..count0), and of keys1[0..count1), go before `key` in a stable
// merge where `key` comes from a later list (Upper: the keys not after it, `!comp(key, k)`) or
// from an earlier one (lower bound: the keys strictly before it, `comp(k, key)`). Two binary
// searches in lockstep, so each round's two loads are in flight together.
template <bool Upper, class Index, class Keys, class K, class Comp>
__device__ __forceinline__ void sorted_bound2(Keys keys0, Index count0, Keys keys1, Index count1, K key,
                                              Index& bound0, Index& bound1, Comp comp) {
  Index b0 = 0, e0 = count0, b1 = 0, e1 = count1;
  while (b0 < e0 || b1 < e1) {
    const Index m0 = b0 + (e0 - b0) / 2, m1 = b1 + (e1 - b1) / 2;
    const bool live0 = b0 < e0, live1 = b1 < e1;
    const K k0 = live0 ? keys0[m0] : key, k1 = live1 ? keys1[m1] : key;
    const bool before0 = Upper ? !comp(key, k0) : comp(k0, key);
    const bool before1 = Upper ? !comp(key, k1) : comp(k1, key);
    if (live0) {
      if (before0) b0 = m0 + 1;
      else e0 = m0;
    }
    if (live1) {
      if (before1) b1 = m1 + 1;
      else e1 = m1;
    }
  }
  bound0 = b0;
  bound1 = b1;
}


// The number of the sorted keys[0..count) that go before `key` where `key` comes later (Upper:
// the keys not after it) or earlier (lower bound: the keys strictly before it).
template <bool Upper, class Index, class Keys, class K, class Comp>
__device__ __forceinline__ Index sorted_bound(Keys keys, Index count, K key, Comp comp) {
  Index begin = 0, end = count;
  while (begin < end) {
    const Index mid = begin + (end - begin) / 2;
    if (Upper ? !comp(key, keys[mid]) : comp(keys[mid], key)) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

// The end of the run of keys equal to `key` (neither goes before the other) that starts at
// keys[begin] (`keys` a pointer, to shared or global memory): the first i in [begin, end)
// whose key goes after `key`, or `end`. keys[begin..end) must be sorted and not go before
// `key`. A galloping search from `begin` (probes whose stride doubles, then a binary search of
// the last gap), so it costs O(log(run)) loads whatever `end - begin` is: a tile finishes the
// runs that cross its end in the rest of a global input this way, reading only the run.
template <class Index, class Keys, class K, class Comp>
__device__ __forceinline__ Index equal_run_end(Keys keys, Index begin, Index end, K key, Comp comp) {
  Index lo = begin, step = 1;  // keys[begin..lo) are equal to `key`
  while (lo < end && !comp(key, keys[lo])) {
    const Index probe = end - lo > step ? lo + step : end;
    if (probe == end || comp(key, keys[probe])) {
      // The run ends in (lo, probe]: keys[lo] is equal to `key`.
      return lo + 1 + sorted_bound<true>(keys + (lo + 1), probe - (lo + 1), key, comp);
    }
    lo = probe + 1;
    step *= 2;
  }
  return lo;
}

// Balanced Path (Baxter, Modern GPU): the merge path of A and B in the order where the k-th of
// the keys equal to x in A and the k-th equal to x in B are a "pair", adjacent (A's first).
// Items keep their merge order otherwise. Pairs are what multiset operations match, so a split
// must not separate them: where cross-diagonal `diag` falls inside a pair, the split moves one
// past it. Returns the split (a_split, b_split): a_split + b_split is diag or diag + 1, and
// every key equal to x before it on one side has its partner before it on the other (or none).
//
// Found from the stable merge path at `diag` (which takes all of A's x before B's), then, only
// where that crossing is inside a run of equal keys x spanning both inputs, by rebalancing the
// run's t taken items between A (i keys equal to x) and B (j keys): A takes
// max(t - j, min(i, ceil(t / 2))), B max(t - i, min(j, ceil(t / 2))).
// PROBES: the merge path search's (merge_path).
template <int PROBES = 1, class Index, class Keys, class Comp>
__device__ __forceinline__ void balanced_path(Keys a, Index a_count, Keys b, Index b_count, Index diag,
                                              Index& a_split, Index& b_split, Comp comp) {
  const Index ai = merge_path<PROBES>(a, a_count, b, b_count, diag, comp);
  const Index bi = diag - ai;
  a_split = ai;
  b_split = bi;
  if (bi >= b_count) return;  // B is all taken, so is every run it shares with A
  const auto x = b[bi];
  // The merge path took keys equal to x only if the last taken one of A or B equals x (all
  // taken keys go before or tie with x).
  const bool a_tail = ai > 0 && !comp(a[ai - 1], x);
  const bool b_tail = bi > 0 && !comp(b[bi - 1], x);
  if (!a_tail && !b_tail) return;
  Index a_start, b_start;
  sorted_bound2<false>(a, ai, b, bi, x, a_start, b_start, comp);
  const Index a_run = ai - a_start, b_run = bi - b_start, t = a_run + b_run;
  // i: A's keys equal to x; all are taken if B's are (b_run > 0), else only i >= t matters.
  const Index i = b_run > 0 ? a_run : t;
  // j, capped at t (only min(j, t) matters): B's taken ones and those after bi, up to b_start + t.
  const Index window_end = b_start + t < b_count ? b_start + t : b_count;
  const Index j = b_run + sorted_bound<true>(b + bi, window_end - bi, x, comp);
  const Index half = (t + 1) / 2;
  const Index a_take = t - j > (i < half ? i : half) ? t - j : (i < half ? i : half);
  const Index b_take = t - i > (j < half ? j : half) ? t - i : (j < half ? j : half);
  // Within the inputs even where unsorted inputs make the run counts meaningless.
  a_split = a_start + a_take < a_count ? a_start + a_take : a_count;
  b_split = b_start + b_take < b_count ? b_start + b_take : b_count;
}


// The A position where a span of the merge from diagonal d0 (at A position a0) to d1 ends,
// given the search's answer a1 at d1: a1 itself on sorted inputs; on unsorted ones, whose
// searches at two diagonals can cross, clamped so the span takes d1 - d0 items in all, none
// before a0 in A or d0 - a0 in B, within A's a_count and B's b_count. So every access stays in
// bounds whatever the inputs (their output is then unspecified).
template <class Index>
__device__ __forceinline__ Index clamp_split_end(Index a0, Index a1, Index d0, Index d1, Index a_count, Index b_count) {
  const Index lo = a0 > d1 - b_count ? a0 : d1 - b_count;
  const Index hi = a0 + (d1 - d0) < a_count ? a0 + (d1 - d0) : a_count;
  return a1 < lo ? lo : (a1 > hi ? hi : a1);
}

// Kirk & Hwu's co-rank (Programming Massively Parallel Processors, ch. 12): the i for which
// the first k outputs of the stable merge of A and B are A[0..i) and B[0..k - i). The same
// answer as merge_path(a, m, b, n, k), by the book's search, which moves i and j = k - i by
// halving steps from i = min(k, m) until A[i - 1] goes before B[j] (or ties it: A first) and
// B[j - 1] goes before A[i]. Used by the merge "ladder" (kernel/ladder.cuh); A and B are
// pointers or any indexable input (circular_buffer).
template <class Index, class KeysA, class KeysB, class Comp>
__device__ __forceinline__ Index co_rank(Index k, KeysA a, Index m, KeysB b, Index n, Comp comp) {
  Index i = k < m ? k : m;
  Index j = k - i;
  Index i_low = k - n > 0 ? k - n : 0;
  Index j_low = k - m > 0 ? k - m : 0;
  for (;;) {
    if (i > 0 && j < n && comp(b[j], a[i - 1])) {
      // A[i - 1] goes after B[j]: too many from A.
      const Index delta = (i - i_low + 1) / 2;
      j_low = j;
      j += delta;
      i -= delta;
    } else if (j > 0 && i < m && !comp(b[j - 1], a[i])) {
      // A[i] goes before (or ties) B[j - 1]: too few from A.
      const Index delta = (j - j_low + 1) / 2;
      i_low = i;
      i += delta;
      j -= delta;
    } else {
      return i;
    }
  }
}

// A circular view of a shared-memory tile of SIZE items starting at `start`: item i is at
// buf[(start + i) mod SIZE] (the circular tiles of the book's merge_circular_buffer_kernel).
template <int SIZE, class K>
struct circular_buffer {
  const K* buf;
  int start;
  __device__ __forceinline__ K operator[](int i) const {
    const int at = start + i;
    return buf[at >= SIZE ? at - SIZE : at];
  }
};

// The view of an input from item i on (0 <= i <= SIZE for circular buffers).
template <class T>
__device__ __forceinline__ T* advance(T* p, int i) {
  return p + i;
}
template <int SIZE, class K>
__device__ __forceinline__ circular_buffer<SIZE, K> advance(circular_buffer<SIZE, K> c, int i) {
  const int at = c.start + i;
  return {c.buf, at >= SIZE ? at - SIZE : at};
}

}  // namespace mergepath

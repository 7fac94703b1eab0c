//! The host backend's machinery: the one sequential merge kernel, and the parallel merge and
//! stable sort built on it, on the workers of [`crate::threads`].

use crate::key::{ordering_by, Comparator, Key};
use crate::partition::merge_path;
use crate::threads::{run, span_bounds, Plan};
use crate::types::SortIndex;
use std::mem::MaybeUninit;

/// A vector of `f(0), ..., f(n - 1)`, filled by the workers in parallel.
pub(crate) fn par_collect<T: Copy + Send>(plan: Plan, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    let bounds = span_bounds(n, plan.workers(n));
    let mut tasks = Vec::with_capacity(bounds.len());
    let mut rest = &mut v.spare_capacity_mut()[..n];
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        tasks.push((w[0], head));
        rest = tail;
    }
    run(plan.threads, tasks, |(start, chunk): (usize, &mut [MaybeUninit<T>])| {
        for (i, slot) in chunk.iter_mut().enumerate() {
            slot.write(f(start + i));
        }
    });
    // SAFETY: the chunks of the tasks cover `spare_capacity_mut()[..n]` exactly, and `run`
    // returns only after every task wrote every slot of its chunk (a panicking task propagates
    // out of `run`, before this line), so the first `n` elements are initialized.
    unsafe { v.set_len(n) };
    v
}

/// Where items go: one slice, or keys and values side by side (items are `(key, value)`).
pub(crate) trait Lanes: Send + Sync + Sized {
    /// What one position holds.
    type Item: Copy + Send + Sync;
    /// Positions.
    fn len(&self) -> usize;
    /// The first `mid` positions and the rest.
    fn split_at(self, mid: usize) -> (Self, Self);
    /// The item at `i`.
    fn get(&self, i: usize) -> Self::Item;
    /// Stores `item` at `i`.
    fn set(&mut self, i: usize, item: Self::Item);
    /// Stores `items` from position `at` on.
    fn write(&mut self, at: usize, items: &[Self::Item]);
    /// The positions as one slice of items, where they are one.
    fn as_items(&mut self) -> Option<&mut [Self::Item]>;
}

impl<T: Copy + Send + Sync> Lanes for &mut [T] {
    type Item = T;
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
    fn get(&self, i: usize) -> T {
        self[i]
    }
    #[inline(always)]
    fn set(&mut self, i: usize, item: T) {
        self[i] = item;
    }
    fn write(&mut self, at: usize, items: &[T]) {
        self[at..at + items.len()].copy_from_slice(items);
    }
    fn as_items(&mut self) -> Option<&mut [T]> {
        Some(self)
    }
}

/// Keys with their values, both the same length.
pub(crate) struct Pairs<'a, K, V>(pub &'a mut [K], pub &'a mut [V]);

impl<K: Copy + Send + Sync, V: Copy + Send + Sync> Lanes for Pairs<'_, K, V> {
    type Item = (K, V);
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (k0, k1) = self.0.split_at_mut(mid);
        let (v0, v1) = self.1.split_at_mut(mid);
        (Pairs(k0, v0), Pairs(k1, v1))
    }
    fn get(&self, i: usize) -> (K, V) {
        (self.0[i], self.1[i])
    }
    #[inline(always)]
    fn set(&mut self, i: usize, item: (K, V)) {
        self.0[i] = item.0;
        self.1[i] = item.1;
    }
    fn write(&mut self, at: usize, items: &[(K, V)]) {
        let keys = &mut self.0[at..at + items.len()];
        let values = &mut self.1[at..at + items.len()];
        for ((k, v), item) in keys.iter_mut().zip(values.iter_mut()).zip(items) {
            (*k, *v) = *item;
        }
    }
    fn as_items(&mut self) -> Option<&mut [(K, V)]> {
        None
    }
}

/// `out` split into consecutive parts of the lengths `bounds` says (part `i`:
/// `bounds[i]..bounds[i + 1]`, relative to `bounds[0]`).
pub(crate) fn split_lanes<L: Lanes>(out: L, bounds: &[usize]) -> Vec<L> {
    let mut parts = Vec::with_capacity(bounds.len());
    let mut rest = Some(out);
    for w in bounds.windows(2) {
        let (head, tail) = rest.take().expect("one rest per part").split_at(w[1] - w[0]);
        parts.push(head);
        rest = Some(tail);
    }
    parts
}

/// Stores `items` into `out` (at least as long), in parallel.
pub(crate) fn par_write<L: Lanes>(plan: Plan, items: &[L::Item], out: L) {
    let bounds = span_bounds(items.len(), plan.workers(items.len()));
    let parts = split_lanes(out, &bounds);
    let tasks: Vec<_> = bounds.windows(2).zip(parts).map(|(w, part)| (&items[w[0]..w[1]], part)).collect();
    run(plan.threads, tasks, |(items, mut part)| part.write(0, items));
}

/// The sequential merge kernel: the stable merge of `a` and `b` (ties take `a` first) into
/// `out[..a.len() + b.len()]`, without a branch on which input an item comes from.
pub(crate) fn merge_into<T: Copy, L: Lanes<Item = T>>(a: &[T], b: &[T], out: &mut L, is_less: &impl Fn(&T, &T) -> bool) {
    let (mut i, mut j) = (0, 0);
    loop {
        // Steps in which neither input can run out.
        let steps = (a.len() - i).min(b.len() - j);
        if steps == 0 {
            break;
        }
        for _ in 0..steps {
            let (x, y) = (a[i], b[j]);
            let take_b = is_less(&y, &x);
            out.set(i + j, if take_b { y } else { x });
            i += usize::from(!take_b);
            j += usize::from(take_b);
        }
    }
    out.write(i + j, &a[i..]);
    out.write(a.len() + j, &b[j..]);
}

/// Appends to `tasks` the merge of `a` and `b` into `out` cut into `pieces` spans of about
/// equal output by Merge Path, each a (piece of a, piece of b, piece of out) to merge on its
/// own. Splits are kept non-decreasing, so unsorted inputs still give valid pieces.
pub(crate) fn merge_tasks<'a, T, L: Lanes<Item = T>>(
    a: &'a [T],
    b: &'a [T],
    out: L,
    pieces: usize,
    is_less: &impl Fn(&T, &T) -> bool,
    tasks: &mut Vec<(&'a [T], &'a [T], L)>,
) {
    let total = a.len() + b.len();
    let diags = span_bounds(total, pieces.max(1));
    let mut prev = (0, 0);
    let mut rest = Some(out);
    for (s, &d) in diags.iter().enumerate().skip(1) {
        let split = if s == diags.len() - 1 {
            (a.len(), b.len())
        } else {
            let ai = merge_path(a, b, d, is_less);
            (ai.max(prev.0), (d - ai).max(prev.1))
        };
        let (head, tail) = rest.take().expect("one rest per piece").split_at(split.0 - prev.0 + split.1 - prev.1);
        tasks.push((&a[prev.0..split.0], &b[prev.1..split.1], head));
        rest = Some(tail);
        prev = split;
    }
}

/// Runs merge tasks of [`merge_tasks`] on the workers.
pub(crate) fn run_merges<T: Copy + Sync, L: Lanes<Item = T>>(threads: usize, tasks: Vec<(&[T], &[T], L)>, is_less: &(impl Fn(&T, &T) -> bool + Sync)) {
    run(threads, tasks, |(a, b, mut out)| merge_into(a, b, &mut out, is_less));
}

/// The stable merge of `a` and `b` into `out` (exactly `a.len() + b.len()` long), in parallel.
pub(crate) fn par_merge<T: Copy + Send + Sync, L: Lanes<Item = T>>(plan: Plan, a: &[T], b: &[T], out: L, is_less: &(impl Fn(&T, &T) -> bool + Sync)) {
    let mut tasks = Vec::new();
    merge_tasks(a, b, out, plan.workers(a.len() + b.len()), is_less, &mut tasks);
    run_merges(plan.threads, tasks, is_less);
}

/// Sorts one run per worker of `v` with `slice::sort_by`, in parallel: the run boundaries, or
/// `None` after sorting `v` on the calling thread when it has one worker.
fn sort_runs<T: Copy + Send + Sync>(plan: Plan, v: &mut [T], is_less: &(impl Fn(&T, &T) -> bool + Sync)) -> Option<Vec<usize>> {
    let ord = |x: &T, y: &T| ordering_by(is_less, x, y);
    let workers = plan.workers(v.len());
    if workers <= 1 {
        v.sort_by(ord);
        return None;
    }
    let runs = span_bounds(v.len(), workers);
    run(plan.threads, split_lanes(&mut *v, &runs), |chunk: &mut [T]| chunk.sort_by(ord));
    Some(runs)
}

/// One round of a sort: the sorted runs of `src` (boundaries `runs`) merged pairwise into
/// `dst`, a last run without a partner copied, each merge cut into spans of about `span` items
/// by Merge Path; the new runs' boundaries.
fn merge_round<T: Copy + Send + Sync, L: Lanes<Item = T>>(
    threads: usize,
    runs: &[usize],
    src: &[T],
    dst: L,
    span: usize,
    is_less: &(impl Fn(&T, &T) -> bool + Sync),
) -> Vec<usize> {
    let n = src.len();
    let (mut tasks, mut next) = (Vec::new(), vec![0]);
    let mut rest = Some(dst);
    let pairs = runs.windows(3).step_by(2).map(|w| (w[0], w[1], w[2]));
    let lone = runs.len().is_multiple_of(2).then(|| (runs[runs.len() - 2], n, n));
    for (r0, r1, r2) in pairs.chain(lone) {
        let (out, tail) = rest.take().expect("one rest per pair").split_at(r2 - r0);
        merge_tasks(&src[r0..r1], &src[r1..r2], out, (r2 - r0).div_ceil(span), is_less, &mut tasks);
        rest = Some(tail);
        next.push(r2);
    }
    run_merges(threads, tasks, is_less);
    next
}

/// Sorts `v` stably by `is_less`, in place, in parallel: one run per worker sorted by
/// `slice::sort_by`, then rounds of pairwise merges (each cut into spans by Merge Path) between
/// `v` and one scratch buffer.
pub(crate) fn par_sort<T: Copy + Send + Sync>(plan: Plan, v: &mut [T], is_less: &(impl Fn(&T, &T) -> bool + Sync)) {
    let Some(mut runs) = sort_runs(plan, v, is_less) else { return };
    let span = v.len().div_ceil(runs.len() - 1);
    // The rounds ping-pong, and the last must write `v`: with an odd number of rounds the
    // runs start in the scratch copy.
    let rounds = usize::BITS - (runs.len() - 2).leading_zeros();
    let mut scratch = par_collect(plan, v.len(), |i| v[i]);
    let (mut src, mut dst) = if rounds % 2 == 1 { (&mut scratch[..], v) } else { (v, &mut scratch[..]) };
    while runs.len() > 2 {
        runs = merge_round(plan.threads, &runs, src, &mut *dst, span, is_less);
        std::mem::swap(&mut src, &mut dst);
    }
}

/// Sorts `items` stably by `is_less` into `out` (as long): as [`par_sort`], the last round
/// merging straight into `out` (so keys and values come out of one merge pass, not a sort and a
/// copy).
pub(crate) fn par_sort_into<L: Lanes>(plan: Plan, mut items: Vec<L::Item>, out: L, is_less: &(impl Fn(&L::Item, &L::Item) -> bool + Sync)) {
    let Some(mut runs) = sort_runs(plan, &mut items, is_less) else {
        par_write(plan, &items, out);
        return;
    };
    let span = items.len().div_ceil(runs.len() - 1);
    let mut scratch = if runs.len() > 3 { par_collect(plan, items.len(), |i| items[i]) } else { Vec::new() };
    let (mut src, mut dst) = (&mut items[..], &mut scratch[..]);
    while runs.len() > 3 {
        runs = merge_round(plan.threads, &runs, src, &mut *dst, span, is_less);
        std::mem::swap(&mut src, &mut dst);
    }
    merge_round(plan.threads, &runs, src, out, span, is_less);
}

/// The first position at or after `from` where `pred` turns false (`pred` true then false over
/// `h`): galloping steps from `from`, then a binary search, O(log(distance)). Any `pred` gives
/// a position in `from..=h.len()`.
fn gallop<K>(h: &[K], from: usize, pred: impl Fn(&K) -> bool) -> usize {
    let rest = &h[from..];
    let mut hi = 1;
    while hi <= rest.len() && pred(&rest[hi - 1]) {
        hi *= 2;
    }
    let lo = hi / 2;
    from + lo + rest[lo..hi.min(rest.len())].partition_point(pred)
}

/// Writes `f(lower, upper)` of each needle to `out` (at least the needles' length): spans of
/// needles in parallel, each walking the haystack from its start. Only the bounds asked for
/// are searched (the others are 0).
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_each<K: Key, O: Copy + Send + Sync, C: Comparator<K>>(
    needles: &[K],
    haystack: &[K],
    out: &mut [O],
    lower: bool,
    upper: bool,
    comp: C,
    f: impl Fn(usize, usize) -> O + Sync,
) {
    let plan = Plan::current();
    let bounds = span_bounds(needles.len(), plan.workers(needles.len()));
    let tasks: Vec<_> = bounds.windows(2).zip(split_lanes(&mut out[..needles.len()], &bounds)).map(|(w, o)| (&needles[w[0]..w[1]], o)).collect();
    run(plan.threads, tasks, |(needles, out): (&[K], &mut [O])| {
        let (mut lo, mut hi) = (0, 0);
        for (n, o) in needles.iter().zip(out) {
            if lower {
                lo = gallop(haystack, lo, |h| comp.is_less(h, n));
            }
            if upper {
                hi = gallop(haystack, hi.max(lo), |h| !comp.is_less(n, h));
            }
            *o = f(lo, hi);
        }
    });
}

/// Writes `item(segment, rank)` to `out[i]` for each item `i` in `0..out.len()` on the host
/// threads: each span finds its first item's segment by a binary search over the starts
/// (checked: at least one, sorted), then walks them.
pub(crate) fn load_balance<T: Copy + Send + Sync>(starts: &[impl SortIndex], out: &mut [T], item: impl Fn(usize, u64) -> T + Sync) {
    let count = out.len();
    if count == 0 {
        return;
    }
    let plan = Plan::current();
    let bounds = span_bounds(count, plan.workers(count));
    let tasks: Vec<_> = bounds.windows(2).zip(split_lanes(out, &bounds)).map(|(w, o)| (w[0], o)).collect();
    let start = |s: usize| starts[s].value();
    run(plan.threads, tasks, |(first, out): (usize, &mut [T])| {
        let mut s = starts[1..].partition_point(|&b| b.value() <= first as u64);
        for (k, o) in out.iter_mut().enumerate() {
            let i = (first + k) as u64;
            while s + 1 < starts.len() && start(s + 1) <= i {
                s += 1;
            }
            *o = item(s, i - start(s));
        }
    });
}

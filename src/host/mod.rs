//! The host backend: every algorithm of the crate on CPU threads, with the GPU functions'
//! semantics and errors, on slices. Code written against mergepath runs (and its tests pass)
//! where there is no CUDA device, and [`crate::cpu`]'s sequential oracle checks it.
//!
//! The parallelism is the two-phase idea Merge Path was first published for (Odeh, Green,
//! Mwassi, Shmueli and Birk, on multicore CPUs): the output is cut into equal spans by
//! [`merge_path`](crate::merge_path) (multiset operations by
//! [`balanced_path`], the GPU kernels' partition math), and each worker
//! thread merges its span on its own with a sequential, branch-free loop. Sorts sort one run
//! per worker with `slice::sort_by` and merge the runs pairwise in rounds, each merge cut into
//! spans the same way; sorted search walks each worker's span of needles through the
//! haystack with galloping steps; segmented sort gives each worker whole segments of about
//! equal total length, and a segment longer than a worker's share the parallel sort.
//!
//! Workers are scoped `std` threads, as many as `std::thread::available_parallelism()` (or
//! [`with_threads`]); a call with less than about 2^15 items per worker stays on the calling
//! thread. Keys are any [`Key`] with any [`Comparator`] (derived ones through their Rust twin);
//! values are any `Copy` type. Comparators must be strict weak orders, as on the GPU. Nothing
//! here needs a GPU or the CUDA driver.
//!
//! ```
//! use mergepath::{host, Less};
//! # fn main() -> Result<(), mergepath::Error> {
//! let mut out = [0u32; 7];
//! host::merge_keys(&[1, 3, 5, 7], &[2, 3, 4], &mut out, Less)?;
//! assert_eq!(out, [1, 2, 3, 3, 4, 5, 7]);
//! let mut keys = [3.5f32, -1.0, 2.0];
//! host::sort_keys(&mut keys, Less)?;
//! assert_eq!(keys, [-1.0, 2.0, 3.5]);
//! # Ok(()) }
//! ```

pub(crate) mod parallel;

pub use crate::bulk::host::{bulk_insert, bulk_remove};
pub use crate::interval::host::{interval_gather, interval_move, interval_scatter};
pub use crate::join::host::{join, join_len};
use crate::cpu::{set_operation_each, SetSource};
use crate::key::ordering_by;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key, Value};
use crate::partition::balanced_path;
use crate::reduce::{check_reduce, check_reduction, fold_op, Reduction};
use crate::runs::check_lengths;
use crate::search::check_search;
use crate::types::{Bound, SetOperation, SortIndex};
use crate::segmented::validate_segment_offsets;
use crate::threads::{run, span_bounds, Plan};
use crate::checks::{check_indices, check_load_balancing, check_merge_pairs, check_multiway_pairs, check_output, check_pair_inputs, check_starts, check_values};
use parallel::{load_balance, par_collect, par_merge, par_sort, par_sort_into, par_write, search_each, split_lanes, Lanes, Pairs};
pub use crate::threads::threads;

/// Runs `f` with the host calls it makes on this thread using `threads` worker threads at most
/// (0: the default, `std::thread::available_parallelism()`), and returns its result. Results
/// do not depend on the thread count.
pub fn with_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    crate::threads::with_threads(threads, f)
}

/// Runs `f` with host calls on this thread handing work to another thread from `grain` items
/// per worker on (0: the default), so tests can take the parallel paths with small inputs.
#[doc(hidden)]
pub fn with_grain<R>(grain: usize, f: impl FnOnce() -> R) -> R {
    crate::threads::with_grain(grain, f)
}

/// Keys and values as `(key, value)` items, gathered in parallel.
fn zip<K: Copy + Send + Sync, V: Copy + Send + Sync>(plan: Plan, keys: &[K], values: &[V]) -> Vec<(K, V)> {
    par_collect(plan, keys.len(), |i| (keys[i], values[i]))
}

/// `comp` on the keys of `(key, value)` items.
fn by_key<K: Key, V, C: Comparator<K>>(comp: C) -> impl Fn(&(K, V), &(K, V)) -> bool + Sync {
    move |x, y| comp.is_less(&x.0, &y.0)
}

/// Merges `a` and `b`, both sorted by `comp`, into `out[..a.len() + b.len()]`: stable (of equal
/// keys, those from `a` first, each input's in its own order), the rest of `out` left as it is.
/// [`Error::OutputTooSmall`] if `out` is shorter. Unsorted inputs give an unspecified order of
/// the same keys, never a panic.
pub fn merge_keys<K: Key, C: Comparator<K>>(a: &[K], b: &[K], out: &mut [K], comp: C) -> Result<()> {
    let total = a.len() + b.len();
    check_output("out", out.len(), total)?;
    par_merge(Plan::current(), a, b, &mut out[..total], &|x: &K, y: &K| comp.is_less(x, y));
    Ok(())
}

/// Merges key/value pairs: keys as [`merge_keys`], each value following its key. Each value
/// slice must have its keys' length ([`Error::LengthMismatch`]); both outputs must hold the
/// result ([`Error::OutputTooSmall`]).
#[allow(clippy::too_many_arguments)]
pub fn merge_pairs<K: Key, V: Copy + Send + Sync, C: Comparator<K>>(
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
    out_keys: &mut [K],
    out_values: &mut [V],
    comp: C,
) -> Result<()> {
    let total = check_merge_pairs((a_keys.len(), a_values.len()), (b_keys.len(), b_values.len()), out_keys.len(), out_values.len())?;
    let plan = Plan::current();
    let (a, b) = (zip(plan, a_keys, a_values), zip(plan, b_keys, b_values));
    par_merge(plan, &a, &b, Pairs(&mut out_keys[..total], &mut out_values[..total]), &by_key(comp));
    Ok(())
}

/// Sorts `lanes` stably, in parallel: in place for keys, through `(key, value)` items for pairs.
fn sort_lanes<L: Lanes>(plan: Plan, mut lanes: L, is_less: &(impl Fn(&L::Item, &L::Item) -> bool + Sync)) {
    if let Some(items) = lanes.as_items() {
        par_sort(plan, items, is_less);
        return;
    }
    let items = par_collect(plan, lanes.len(), |i| lanes.get(i));
    par_sort_into(plan, items, lanes, is_less);
}

/// Sorts `keys` in place by `comp`, stably (equal keys keep their order). Returns `Result` as
/// the GPU's `sort_keys` does (it cannot fail here), so code runs on either backend unchanged.
pub fn sort_keys<K: Key, C: Comparator<K>>(keys: &mut [K], comp: C) -> Result<()> {
    par_sort(Plan::current(), keys, &|x: &K, y: &K| comp.is_less(x, y));
    Ok(())
}

/// Sorts `input` into `output[..input.len()]` by `comp`, stably; the rest of `output` is left as
/// it is ([`Error::OutputTooSmall`] if it is shorter).
pub fn sort_keys_copy<K: Key, C: Comparator<K>>(input: &[K], output: &mut [K], comp: C) -> Result<()> {
    check_output("output", output.len(), input.len())?;
    let output = &mut output[..input.len()];
    let plan = Plan::current();
    par_write(plan, input, &mut *output);
    par_sort(plan, output, &|x: &K, y: &K| comp.is_less(x, y));
    Ok(())
}

/// Sorts `keys` in place by `comp`, stably, moving `values` (the keys' length,
/// [`Error::LengthMismatch`] otherwise) with their keys.
pub fn sort_pairs<K: Key, V: Copy + Send + Sync, C: Comparator<K>>(keys: &mut [K], values: &mut [V], comp: C) -> Result<()> {
    check_values("values", keys.len(), values.len())?;
    sort_lanes(Plan::current(), Pairs(keys, values), &by_key(comp));
    Ok(())
}

/// Sorts `keys_in`/`values_in` pairs into `keys_out`/`values_out` (at least as long; the rest
/// left as it is) by `comp`, stably, leaving the inputs as they are.
pub fn sort_pairs_copy<K: Key, V: Copy + Send + Sync, C: Comparator<K>>(
    keys_in: &[K],
    values_in: &[V],
    keys_out: &mut [K],
    values_out: &mut [V],
    comp: C,
) -> Result<()> {
    check_values("values_in", keys_in.len(), values_in.len())?;
    let n = keys_in.len();
    check_output("keys_out", keys_out.len(), n)?;
    check_output("values_out", values_out.len(), n)?;
    let plan = Plan::current();
    par_sort_into(plan, zip(plan, keys_in, values_in), Pairs(&mut keys_out[..n], &mut values_out[..n]), &by_key(comp));
    Ok(())
}

/// `i` as an index of type `I` (`i` fits: checked against `I::MAX_COUNT` by the caller).
fn index<I: SortIndex>(i: usize) -> I {
    if std::mem::size_of::<I>() == 4 {
        bytemuck::cast(i as u32)
    } else {
        bytemuck::cast(i as u64)
    }
}

/// Sorts `keys` in place by `comp`, stably, and writes to `indices` (the keys' length) the
/// original position of each sorted key: afterwards `keys[i]` was at `indices[i]`.
/// [`Error::TooLarge`] for `u32` indices past 2^32 keys.
pub fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(keys: &mut [K], indices: &mut [I], comp: C) -> Result<()> {
    check_indices(keys.len(), indices.len(), I::MAX_COUNT)?;
    let plan = Plan::current();
    let items = par_collect(plan, keys.len(), |i| (keys[i], index::<I>(i)));
    par_sort_into(plan, items, Pairs(keys, indices), &by_key(comp));
    Ok(())
}

/// Writes to `indices` (the keys' length) the positions that sort `keys` by `comp`, stably,
/// leaving the keys as they are (an argsort): `keys[indices[0]]`, `keys[indices[1]]`, ... are
/// in order. [`Error::TooLarge`] for `u32` indices past 2^32 keys. Sorts a copy of the keys.
pub fn argsort<K: Key, I: SortIndex, C: Comparator<K>>(keys: &[K], indices: &mut [I], comp: C) -> Result<()> {
    check_values("indices", keys.len(), indices.len())?;
    sort_indices(&mut keys.to_vec(), indices, comp)
}

/// Writes to `segments[i]` the segment of each of the `count` work items `i`: the last `s` with
/// `starts[s] <= i`, `starts` holding the segments' first items (see [`crate::load_balancing`]);
/// the rest of `segments` is left as it is. Errors as [`crate::load_balancing_search`]'s, and
/// starts that are not non-decreasing from 0 to at most `count` are
/// [`Error::InvalidArgument`].
pub fn load_balancing_search<I: SortIndex>(count: usize, starts: &[I], segments: &mut [I]) -> Result<()> {
    check_load_balancing(count, starts.len(), I::MAX_COUNT, &[("segments", segments.len())])?;
    check_starts(starts, count)?;
    load_balance(starts, &mut segments[..count], |s, _| index(s));
    Ok(())
}

/// [`load_balancing_search`] writing also each item's rank in its segment, `ranks[i] = i -
/// starts[segments[i]]`.
pub fn load_balancing_search_ranks<I: SortIndex>(count: usize, starts: &[I], segments: &mut [I], ranks: &mut [I]) -> Result<()> {
    check_load_balancing(count, starts.len(), I::MAX_COUNT, &[("segments", segments.len()), ("ranks", ranks.len())])?;
    check_starts(starts, count)?;
    load_balance(starts, &mut segments[..count], |s, _| index(s));
    load_balance(starts, &mut ranks[..count], |_, rank| index(rank as usize));
    Ok(())
}

/// Interval expand: writes to `out[i]` the value of the segment of each of the `count` work
/// items, `values[s]` repeated over segment `s`'s items (see [`crate::interval_expand`]); one
/// value per segment ([`Error::LengthMismatch`]), starts checked as
/// [`load_balancing_search`]'s; the rest of `out` is left as it is.
pub fn interval_expand<I: SortIndex, V: Value>(count: usize, starts: &[I], values: &[V], out: &mut [V]) -> Result<()> {
    check_load_balancing(count, starts.len(), I::MAX_COUNT, &[("out", out.len())])?;
    check_values("values", starts.len(), values.len())?;
    check_starts(starts, count)?;
    load_balance(starts, &mut out[..count], |s, _| values[s]);
    Ok(())
}

/// Segmented reduction: writes to `out[s]` the fold of segment `s`'s values by `reduction`,
/// `empty` where it has none (see [`crate::segmented_reduce`]), the segments given by their
/// first items `starts` over the `values.len()` items, checked as [`load_balancing_search`]'s;
/// the rest of `out` is left as it is. Segments are folded on the host threads in order, so
/// float sums are sequential sums.
pub fn segmented_reduce<K: Key, I: SortIndex, C: Comparator<K>>(starts: &[I], values: &[K], out: &mut [K], reduction: Reduction, empty: K, comp: C) -> Result<()> {
    check_reduce::<K>(values.len(), starts.len(), out.len(), I::MAX_COUNT, reduction)?;
    check_starts(starts, values.len())?;
    let op = fold_op(reduction, comp);
    let end = |s: usize| starts.get(s + 1).map_or(values.len(), |e| e.value() as usize);
    let segments = starts.len();
    if segments == 0 {
        return Ok(()); // and no values (checked)
    }
    let plan = Plan::current();
    let bounds = span_bounds(segments, plan.workers(segments + values.len()));
    let tasks: Vec<_> = bounds.windows(2).zip(split_lanes(&mut out[..segments], &bounds)).map(|(w, o)| (w[0], o)).collect();
    run(plan.threads, tasks, |(first, out): (usize, &mut [K])| {
        for (s, o) in (first..).zip(out.iter_mut()) {
            *o = values[starts[s].value() as usize..end(s)].iter().copied().reduce(op).unwrap_or(empty);
        }
    });
    Ok(())
}

/// Writes the first key of each run of equal keys (see [`crate::runs`]) to `out` and returns the
/// number of runs; `out` must hold them ([`Error::OutputTooSmall`], nothing written).
pub fn unique<K: Key, C: Comparator<K>>(keys: &[K], out: &mut [K], comp: C) -> Result<usize> {
    let starts = run_starts(keys, comp);
    check_output("out", out.len(), starts.len())?;
    out.iter_mut().zip(&starts).for_each(|(o, &s)| *o = keys[s]);
    Ok(starts.len())
}

/// Writes each run's first key to `out_keys` and its length to `lengths` and returns the number
/// of runs; outputs as [`unique`]'s, `u32` lengths for at most 2^32 - 1 keys
/// ([`Error::TooLarge`]).
pub fn run_length_encode<K: Key, I: SortIndex, C: Comparator<K>>(keys: &[K], out_keys: &mut [K], lengths: &mut [I], comp: C) -> Result<usize> {
    check_lengths::<I>(keys.len())?;
    let starts = run_starts(keys, comp);
    check_output("out_keys", out_keys.len(), starts.len())?;
    check_output("lengths", lengths.len(), starts.len())?;
    for (j, &s) in starts.iter().enumerate() {
        out_keys[j] = keys[s];
        lengths[j] = index(starts.get(j + 1).unwrap_or(&keys.len()) - s);
    }
    Ok(starts.len())
}

/// Writes each run's first key to `out_keys` and the fold of its values by `reduction` to
/// `out_values` (ordered by `value_order` for `Min` and `Max`) and returns the number of runs
/// (see [`crate::reduce_by_key`]); outputs as [`unique`]'s.
#[allow(clippy::too_many_arguments)]
pub fn reduce_by_key<K: Key, V: Key, C: Comparator<K>, D: Comparator<V>>(keys: &[K], values: &[V], out_keys: &mut [K], out_values: &mut [V], reduction: Reduction, comp: C, value_order: D) -> Result<usize> {
    check_values("values", keys.len(), values.len())?;
    check_reduction::<V>(reduction)?;
    let starts = run_starts(keys, comp);
    check_output("out_keys", out_keys.len(), starts.len())?;
    check_output("out_values", out_values.len(), starts.len())?;
    let op = fold_op(reduction, value_order);
    for (j, &s) in starts.iter().enumerate() {
        out_keys[j] = keys[s];
        let end = *starts.get(j + 1).unwrap_or(&keys.len());
        out_values[j] = values[s + 1..end].iter().fold(values[s], |acc, &v| op(acc, v));
    }
    Ok(starts.len())
}

/// The position of each run's first key: key 0 and every key unequal to the one before it.
fn run_starts<K: Key, C: Comparator<K>>(keys: &[K], comp: C) -> Vec<usize> {
    (0..keys.len()).filter(|&i| i == 0 || comp.is_less(&keys[i - 1], &keys[i]) || comp.is_less(&keys[i], &keys[i - 1])).collect()
}

/// Writes to `out[j]` the `bound` of `needles[j]` in `haystack` (both sorted by `comp`), for
/// every needle, in O(needles + haystack) work; the rest of `out` is left as it is.
/// [`Error::OutputTooSmall`] if `out` is shorter than the needles, [`Error::TooLarge`] for
/// `u32` indices and a haystack of 2^32 items or more. Unsorted inputs give unspecified
/// indices in `0..=haystack.len()`, never a panic.
pub fn sorted_search<K: Key, I: SortIndex, C: Comparator<K>>(needles: &[K], haystack: &[K], bound: Bound, out: &mut [I], comp: C) -> Result<()> {
    check_search::<I>(needles.len(), haystack.len(), &[("out", out.len())])?;
    match bound {
        Bound::Lower => search_each(needles, haystack, out, true, false, comp, |lo, _| index(lo)),
        Bound::Upper => search_each(needles, haystack, out, false, true, comp, |_, hi| index(hi)),
    }
    Ok(())
}

/// Both bounds of every needle: `lower[j]..upper[j]` is the range of haystack items equal to
/// `needles[j]`. Otherwise as [`sorted_search`].
pub fn sorted_search_range<K: Key, I: SortIndex, C: Comparator<K>>(
    needles: &[K],
    haystack: &[K],
    lower: &mut [I],
    upper: &mut [I],
    comp: C,
) -> Result<()> {
    check_search::<I>(needles.len(), haystack.len(), &[("lower", lower.len()), ("upper", upper.len())])?;
    sorted_search(needles, haystack, Bound::Lower, lower, comp)?;
    sorted_search(needles, haystack, Bound::Upper, upper, comp)
}

/// Writes to `counts[j]` how many haystack items are equal to `needles[j]` (neither goes
/// before the other). Otherwise as [`sorted_search`].
pub fn sorted_search_count<K: Key, I: SortIndex, C: Comparator<K>>(needles: &[K], haystack: &[K], counts: &mut [I], comp: C) -> Result<()> {
    check_search::<I>(needles.len(), haystack.len(), &[("counts", counts.len())])?;
    search_each(needles, haystack, counts, true, true, comp, |lo, hi| index(hi - lo));
    Ok(())
}

/// Writes to `found[j]` 1 if `haystack` holds an item equal to `needles[j]`, else 0. Otherwise
/// as [`sorted_search`].
pub fn sorted_search_contains<K: Key, C: Comparator<K>>(needles: &[K], haystack: &[K], found: &mut [u8], comp: C) -> Result<()> {
    check_search::<u64>(needles.len(), haystack.len(), &[("found", found.len())])?;
    search_each(needles, haystack, found, true, true, comp, |lo, hi| u8::from(lo < hi));
    Ok(())
}

/// Where a piece's item comes from, as indices into the whole inputs.
fn shift(s: SetSource, a0: usize, b0: usize) -> SetSource {
    match s {
        SetSource::A(i) => SetSource::A(a0 + i),
        SetSource::B(j) => SetSource::B(b0 + j),
    }
}

/// `a` and `b` cut by Balanced Path into one piece per worker, `piece(a0, b0, a piece, b
/// piece)` run on each (the piece starting at `a[a0]` and `b[b0]`); the results, in order.
fn set_pieces<K: Key, R: Send, C: Comparator<K>>(a: &[K], b: &[K], comp: C, piece: impl Fn(usize, usize, &[K], &[K]) -> R + Sync) -> Vec<R> {
    let plan = Plan::current();
    let diags = span_bounds(a.len() + b.len(), plan.workers(a.len() + b.len()));
    let mut splits = vec![(0, 0)];
    for (s, &d) in diags.iter().enumerate().skip(1) {
        let prev = splits[s - 1];
        let (ai, bi) = if s == diags.len() - 1 { (a.len(), b.len()) } else { balanced_path(a, b, d, |x, y| comp.is_less(x, y)) };
        // Non-decreasing, so unsorted inputs still give valid pieces (a no-op on sorted ones).
        splits.push((ai.max(prev.0), bi.max(prev.1)));
    }
    let mut results: Vec<Option<R>> = (1..splits.len()).map(|_| None).collect();
    let tasks: Vec<_> = splits.windows(2).zip(results.iter_mut()).collect();
    run(plan.threads, tasks, |(w, slot)| {
        let ((a0, b0), (a1, b1)) = (w[0], w[1]);
        *slot = Some(piece(a0, b0, &a[a0..a1], &b[b0..b1]));
    });
    results.into_iter().map(|r| r.expect("every piece ran")).collect()
}

/// `op`'s result, each item made by `pick` from its source, written into `out` (truncated to
/// it) in parallel: the result's length, or [`Error::OutputTooSmall`] with it when `out` is
/// shorter.
fn set_into<K: Key, L: Lanes, C: Comparator<K>>(op: SetOperation, a: &[K], b: &[K], out: L, comp: C, pick: impl Fn(SetSource) -> L::Item + Sync) -> Result<usize> {
    let pieces = set_pieces(a, b, comp, |a0, b0, ap, bp| {
        let mut items = Vec::new();
        set_operation_each(op, ap, bp, |x, y| comp.is_less(x, y), |s| items.push(pick(shift(s, a0, b0))));
        items
    });
    let mut ends = vec![0];
    for p in &pieces {
        ends.push(ends[ends.len() - 1] + p.len());
    }
    let (len, capacity) = (ends[ends.len() - 1], out.len());
    let bounds: Vec<usize> = ends.iter().map(|&e| e.min(capacity)).collect();
    let parts = split_lanes(out.split_at(capacity.min(len)).0, &bounds);
    run(Plan::current().threads, pieces.iter().zip(parts).collect(), |(items, mut part)| {
        let n = part.len();
        part.write(0, &items[..n]);
    });
    if len > capacity {
        return Err(Error::OutputTooSmall { what: "set operation output", needed: len, got: capacity });
    }
    Ok(len)
}

/// Writes `op` of `a` and `b` (both sorted by `comp`) to `out` and returns its length (see
/// [`SetOperation`] for the multiset semantics). `out` may have any length:
/// [`SetOperation::max_len`] never truncates; a shorter one receives the result's first
/// `out.len()` keys and the call returns [`Error::OutputTooSmall`] with the full length.
/// Unsorted inputs give an unspecified result, never a panic.
pub fn set_operation_keys<K: Key, C: Comparator<K>>(op: SetOperation, a: &[K], b: &[K], out: &mut [K], comp: C) -> Result<usize> {
    set_into(op, a, b, out, comp, |s| match s {
        SetSource::A(i) => a[i],
        SetSource::B(j) => b[j],
    })
}

/// `op` on key/value pairs: keys as [`set_operation_keys`], each output key with its value
/// (from A's values where the key comes from A, else from B's). Each value slice must have its
/// keys' length ([`Error::LengthMismatch`]); the result is truncated to the shorter of
/// `out_keys` and `out_values`.
#[allow(clippy::too_many_arguments)]
pub fn set_operation_pairs<K: Key, V: Copy + Send + Sync, C: Comparator<K>>(
    op: SetOperation,
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
    out_keys: &mut [K],
    out_values: &mut [V],
    comp: C,
) -> Result<usize> {
    check_pair_inputs((a_keys.len(), a_values.len()), (b_keys.len(), b_values.len()))?;
    let capacity = out_keys.len().min(out_values.len());
    let out = Pairs(&mut out_keys[..capacity], &mut out_values[..capacity]);
    set_into(op, a_keys, b_keys, out, comp, |s| match s {
        SetSource::A(i) => (a_keys[i], a_values[i]),
        SetSource::B(j) => (b_keys[j], b_values[j]),
    })
}

/// The length of `op`'s result on `a` and `b` (sorted by `comp`), without writing it. Returns
/// `Result` as the GPU's does (it cannot fail here).
pub fn set_operation_len<K: Key, C: Comparator<K>>(op: SetOperation, a: &[K], b: &[K], comp: C) -> Result<usize> {
    let counts = set_pieces(a, b, comp, |_, _, ap, bp| {
        let mut n = 0;
        set_operation_each(op, ap, bp, |x, y| comp.is_less(x, y), |_| n += 1);
        n
    });
    Ok(counts.into_iter().sum())
}

/// Sorts the segments of `lanes` (validated `offsets`): whole segments of about equal total
/// length per worker, each sorted sequentially, and a segment longer than a worker's share by
/// the parallel sort afterwards.
fn sort_segments<L: Lanes>(lanes: L, offsets: &[usize], is_less: &(impl Fn(&L::Item, &L::Item) -> bool + Sync)) {
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else { return };
    let plan = Plan::current();
    let total = last - first;
    let workers = plan.workers(total);
    let share = total.div_ceil(workers).max(1);
    let mut rest = lanes.split_at(last).0.split_at(first).1;
    // Groups: (segment lengths, their items); huge: one segment each.
    let (mut groups, mut huge) = (Vec::new(), Vec::new());
    let mut group = (Vec::new(), 0);
    for w in offsets.windows(2) {
        let len = w[1] - w[0];
        let is_huge = workers > 1 && len > share;
        if (is_huge || group.1 >= share) && group.1 > 0 {
            let (items, tail) = rest.split_at(group.1);
            groups.push((std::mem::take(&mut group.0), items));
            (group.1, rest) = (0, tail);
        }
        if is_huge {
            let (items, tail) = rest.split_at(len);
            huge.push(items);
            rest = tail;
        } else {
            group.0.push(len);
            group.1 += len;
        }
    }
    groups.push((group.0, rest));
    run(plan.threads, groups, |(lens, mut items): (Vec<usize>, L)| {
        let mut scratch = Vec::new();
        for len in lens {
            let (mut seg, tail) = items.split_at(len);
            items = tail;
            if let Some(keys) = seg.as_items() {
                keys.sort_by(|x, y| ordering_by(is_less, x, y));
            } else {
                scratch.clear();
                scratch.extend((0..len).map(|i| seg.get(i)));
                scratch.sort_by(|x, y| ordering_by(is_less, x, y));
                seg.write(0, &scratch);
            }
        }
    });
    for seg in huge {
        sort_lanes(plan, seg, is_less);
    }
}

/// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` in place by `comp`, stably. `offsets`
/// must be non-decreasing and end at most at `keys.len()` ([`Error::InvalidArgument`]); items
/// before `offsets[0]` and after the last offset are left as they are. Empty segments, one
/// segment, and fewer than 2 offsets (no segments) all work.
pub fn sort_segments_keys<K: Key, C: Comparator<K>>(keys: &mut [K], offsets: &[usize], comp: C) -> Result<()> {
    validate_segment_offsets(offsets, keys.len())?;
    sort_segments(keys, offsets, &|x: &K, y: &K| comp.is_less(x, y));
    Ok(())
}

/// [`sort_segments_keys`] moving `values` (the keys' length, [`Error::LengthMismatch`]
/// otherwise) with their keys.
pub fn sort_segments_pairs<K: Key, V: Copy + Send + Sync, C: Comparator<K>>(keys: &mut [K], values: &mut [V], offsets: &[usize], comp: C) -> Result<()> {
    check_values("values", keys.len(), values.len())?;
    validate_segment_offsets(offsets, keys.len())?;
    sort_segments(Pairs(keys, values), offsets, &by_key(comp));
    Ok(())
}

/// Each worker's span of a multiway merge of `total` items: the span's output bounds and the
/// slices of every input it merges (multiway Merge Path at each bound).
fn multiway_spans<'a, T>(plan: Plan, inputs: &[&'a [T]], total: usize, is_less: impl Fn(&T, &T) -> bool) -> (Vec<usize>, Vec<Vec<&'a [T]>>) {
    let bounds = span_bounds(total, plan.workers(total));
    let mut splits: Vec<Vec<usize>> = bounds.iter().map(|&r| crate::partition::multiway_split(inputs, r, &is_less)).collect();
    // Unsorted inputs can make the splits cross: clamped into rows that cut every item once.
    let lengths: Vec<usize> = inputs.iter().map(|s| s.len()).collect();
    crate::partition::clamp_multiway_splits(&mut splits, &bounds, &lengths);
    let slices = splits.windows(2).map(|w| inputs.iter().enumerate().map(|(t, s)| &s[w[0][t]..w[1][t]]).collect()).collect();
    (bounds, slices)
}

/// Merges `inputs` (each sorted by `comp`) into `out[..total]`, stably: of equal keys, those of
/// a lower input first. The output is cut into one span per worker by multiway Merge Path
/// ([`crate::partition::multiway_split`]) and each span's slices are merged on their own.
/// [`Error::OutputTooSmall`] if `out` is shorter than the total.
pub fn merge_multiway_keys<K: Key, C: Comparator<K>>(inputs: &[&[K]], out: &mut [K], comp: C) -> Result<()> {
    let total: usize = inputs.iter().map(|s| s.len()).sum();
    check_output("out", out.len(), total)?;
    let plan = Plan::current();
    let is_less = |x: &K, y: &K| comp.is_less(x, y);
    let (bounds, slices) = multiway_spans(plan, inputs, total, is_less);
    let tasks: Vec<_> = slices.into_iter().zip(split_lanes(&mut out[..total], &bounds)).collect();
    run(plan.threads, tasks, |(slices, out): (Vec<&[K]>, &mut [K])| {
        let mut merged = slices.concat();
        // A stable sort of sorted runs merges them.
        merged.sort_by(|x, y| ordering_by(is_less, x, y));
        out.copy_from_slice(&merged);
    });
    Ok(())
}

/// One thread's part of [`merge_multiway_pairs`]: its slice of every input (key/value pairs)
/// and its lanes of the outputs.
type PairsTask<'a, K, V> = (Vec<&'a [(K, V)]>, (&'a mut [K], &'a mut [V]));

/// [`merge_multiway_keys`] with `values[t]` (one per key input, each its keys' length:
/// [`Error::LengthMismatch`]) following their keys into `out_values`.
pub fn merge_multiway_pairs<K: Key, V: Copy + Send + Sync, C: Comparator<K>>(
    keys: &[&[K]],
    values: &[&[V]],
    out_keys: &mut [K],
    out_values: &mut [V],
    comp: C,
) -> Result<()> {
    let (key_lengths, value_lengths): (Vec<usize>, Vec<usize>) = (keys.iter().map(|s| s.len()).collect(), values.iter().map(|s| s.len()).collect());
    let total = check_multiway_pairs(&key_lengths, &value_lengths, out_keys.len(), out_values.len())?;
    let plan = Plan::current();
    let items: Vec<Vec<(K, V)>> = keys.iter().zip(values).map(|(k, v)| k.iter().copied().zip(v.iter().copied()).collect()).collect();
    let inputs: Vec<&[(K, V)]> = items.iter().map(|v| v.as_slice()).collect();
    let is_less = by_key(comp);
    let (bounds, slices) = multiway_spans(plan, &inputs, total, &is_less);
    let tasks: Vec<_> = slices.into_iter().zip(split_lanes(&mut out_keys[..total], &bounds).into_iter().zip(split_lanes(&mut out_values[..total], &bounds))).collect();
    run(plan.threads, tasks, |(slices, (out_k, out_v)): PairsTask<'_, K, V>| {
        let mut merged = slices.concat();
        merged.sort_by(|x, y| ordering_by(&is_less, x, y));
        for ((k, v), (ok, ov)) in merged.into_iter().zip(out_k.iter_mut().zip(out_v.iter_mut())) {
            *ok = k;
            *ov = v;
        }
    });
    Ok(())
}

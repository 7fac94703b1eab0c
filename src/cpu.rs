//! CPU reference implementations with exactly the GPU semantics: simple sequential code, the
//! oracle of the tests. [`crate::host`] is the fast, parallel CPU backend checked against it.

pub use crate::bulk::cpu::{bulk_insert, bulk_remove};
pub use crate::interval::cpu::interval_move;
pub use crate::join::cpu::join;
use crate::device::contract::{SET_A_ONLY, SET_B_ONLY, SET_MATCHED};
use crate::key::{Comparator, Key};

/// Stable sequential merge of `a` and `b` (ties: `a` first) by `comp`.
pub fn merge_keys<K: Key, C: Comparator<K>>(a: &[K], b: &[K], comp: C) -> Vec<K> {
    merge_by(a, b, |x, y| comp.is_less(x, y))
}

/// Stable sequential merge of key/value pairs by `comp`; values follow their keys.
pub fn merge_pairs<K: Key, V: Copy, C: Comparator<K>>(
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
    comp: C,
) -> (Vec<K>, Vec<V>) {
    check_pair_lengths(a_keys, a_values, b_keys, b_values);
    let a: Vec<(K, V)> = a_keys.iter().copied().zip(a_values.iter().copied()).collect();
    let b: Vec<(K, V)> = b_keys.iter().copied().zip(b_values.iter().copied()).collect();
    merge_by(&a, &b, |x, y| comp.is_less(&x.0, &y.0)).into_iter().unzip()
}

/// Panics unless each value slice has its keys' length.
fn check_pair_lengths<K, V>(a_keys: &[K], a_values: &[V], b_keys: &[K], b_values: &[V]) {
    assert_eq!(a_keys.len(), a_values.len(), "a_values must have a_keys' length");
    assert_eq!(b_keys.len(), b_values.len(), "b_values must have b_keys' length");
}

/// Stable sequential merge by a strict-weak-order predicate (`is_less(x, y)`: x goes strictly
/// before y). Ties take from `a` first.
pub fn merge_by<T: Copy>(a: &[T], b: &[T], is_less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if is_less(&b[j], &a[i]) {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Stable sort by `comp` (the oracle of the GPU sorts).
pub fn sort_keys<K: Key, C: Comparator<K>>(keys: &[K], comp: C) -> Vec<K> {
    let mut v = keys.to_vec();
    v.sort_by(|x, y| ordering(&comp, x, y));
    v
}

/// Stable sort of key/value pairs by key.
pub fn sort_pairs<K: Key, V: Copy, C: Comparator<K>>(keys: &[K], values: &[V], comp: C) -> (Vec<K>, Vec<V>) {
    assert_eq!(keys.len(), values.len(), "values must have the keys' length");
    let mut v: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
    v.sort_by(|x, y| ordering(&comp, &x.0, &y.0));
    v.into_iter().unzip()
}

/// `comp` as an `Ordering` (equal: neither goes before the other), for `sort_by`.
pub fn ordering<K: Key, C: Comparator<K>>(comp: &C, x: &K, y: &K) -> std::cmp::Ordering {
    ordering_by(|a, b| comp.is_less(a, b), x, y)
}

pub use crate::key::ordering_by;

/// The `bound` of each needle in `haystack` (both sorted by `comp`), as
/// [`crate::sorted_search`] computes it, by a binary search per needle.
pub fn sorted_search<K: Key, C: Comparator<K>>(needles: &[K], haystack: &[K], bound: crate::types::Bound, comp: C) -> Vec<usize> {
    needles
        .iter()
        .map(|n| match bound {
            crate::types::Bound::Lower => haystack.partition_point(|h| comp.is_less(h, n)),
            crate::types::Bound::Upper => haystack.partition_point(|h| !comp.is_less(n, h)),
        })
        .collect()
}

/// Where an item of a multiset operation's result comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetSource {
    /// `a[i]`.
    A(usize),
    /// `b[j]`.
    B(usize),
}

/// The sources of `op`'s result on `a` and `b` (sorted by `is_less`), in order: C++'s
/// sequential `std::set_*` loop, where equal keys met at the heads of both inputs are a pair.
pub fn set_operation_by<T>(op: crate::types::SetOperation, a: &[T], b: &[T], is_less: impl Fn(&T, &T) -> bool) -> Vec<SetSource> {
    let mut out = Vec::new();
    set_operation_each(op, a, b, is_less, |s| out.push(s));
    out
}

/// [`set_operation_by`] handing each source to `emit` as it goes, in order (the loop the host
/// backend runs on each Balanced Path piece).
pub fn set_operation_each<T>(op: crate::types::SetOperation, a: &[T], b: &[T], is_less: impl Fn(&T, &T) -> bool, mut emit: impl FnMut(SetSource)) {
    let flags = op.emit();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && is_less(&a[i], &b[j])) {
            if flags & SET_A_ONLY != 0 {
                emit(SetSource::A(i));
            }
            i += 1;
        } else if i == a.len() || is_less(&b[j], &a[i]) {
            if flags & SET_B_ONLY != 0 {
                emit(SetSource::B(j));
            }
            j += 1;
        } else {
            if flags & SET_MATCHED != 0 {
                emit(SetSource::A(i));
            }
            i += 1;
            j += 1;
        }
    }
}

/// `op`'s result on keys `a` and `b` sorted by `comp` (the oracle of
/// [`crate::set_operation_keys`]).
pub fn set_operation_keys<K: Key, C: Comparator<K>>(op: crate::types::SetOperation, a: &[K], b: &[K], comp: C) -> Vec<K> {
    set_operation_by(op, a, b, |x, y| comp.is_less(x, y))
        .into_iter()
        .map(|s| match s {
            SetSource::A(i) => a[i],
            SetSource::B(j) => b[j],
        })
        .collect()
}

/// `op`'s result on key/value pairs (the oracle of [`crate::set_operation_pairs`]).
pub fn set_operation_pairs<K: Key, V: Copy, C: Comparator<K>>(
    op: crate::types::SetOperation,
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
    comp: C,
) -> (Vec<K>, Vec<V>) {
    check_pair_lengths(a_keys, a_values, b_keys, b_values);
    set_operation_by(op, a_keys, b_keys, |x, y| comp.is_less(x, y))
        .into_iter()
        .map(|s| match s {
            SetSource::A(i) => (a_keys[i], a_values[i]),
            SetSource::B(j) => (b_keys[j], b_values[j]),
        })
        .unzip()
}

/// Each segment `keys[offsets[s]..offsets[s + 1]]` sorted stably by `comp` (the oracle of
/// [`crate::sort_segments_keys`]); the rest of `keys` as it is.
pub fn sort_segments_keys<K: Key, C: Comparator<K>>(keys: &[K], offsets: &[usize], comp: C) -> Vec<K> {
    let mut out = keys.to_vec();
    for w in offsets.windows(2) {
        out[w[0]..w[1]].sort_by(|x, y| ordering(&comp, x, y));
    }
    out
}

/// [`sort_segments_keys`] with values following their keys.
pub fn sort_segments_pairs<K: Key, V: Copy, C: Comparator<K>>(keys: &[K], values: &[V], offsets: &[usize], comp: C) -> (Vec<K>, Vec<V>) {
    assert_eq!(keys.len(), values.len(), "values must have the keys' length");
    let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
    for w in offsets.windows(2) {
        pairs[w[0]..w[1]].sort_by(|x, y| ordering(&comp, &x.0, &y.0));
    }
    pairs.into_iter().unzip()
}

/// The stable merge of `inputs` (each sorted by `comp`): of equal keys, those of a lower input
/// first (the oracle of [`crate::merge_multiway_keys`]).
pub fn merge_multiway_keys<K: Key, C: Comparator<K>>(inputs: &[&[K]], comp: C) -> Vec<K> {
    sort_keys(&inputs.concat(), comp)
}

/// [`merge_multiway_keys`] with values following their keys.
pub fn merge_multiway_pairs<K: Key, V: Copy, C: Comparator<K>>(keys: &[&[K]], values: &[&[V]], comp: C) -> (Vec<K>, Vec<V>) {
    assert_eq!(keys.len(), values.len(), "one value input per key input");
    for (k, v) in keys.iter().zip(values) {
        assert_eq!(k.len(), v.len(), "values must have their keys' length");
    }
    sort_pairs(&keys.concat(), &values.concat(), comp)
}

/// The segment and the rank of every item of a load-balancing search over `offsets`
/// (non-decreasing, from 0 to the item count, one more than the segments: the segments'
/// starts, then the count; item `i` belongs to the last segment `s` with `offsets[s] <= i`, at
/// rank `i - offsets[s]`): the oracle of [`crate::load_balancing_search_ranks`].
pub fn load_balancing_search(offsets: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let (mut segments, mut ranks) = (Vec::new(), Vec::new());
    for (s, w) in offsets.windows(2).enumerate() {
        for i in w[0]..w[1] {
            segments.push(s);
            ranks.push(i - w[0]);
        }
    }
    (segments, ranks)
}

/// Each segment's value repeated over its items (`offsets` as for
/// [`load_balancing_search`]): the oracle of [`crate::interval_expand`].
pub fn interval_expand<T: Copy>(values: &[T], offsets: &[usize]) -> Vec<T> {
    load_balancing_search(offsets).0.into_iter().map(|s| values[s]).collect()
}

/// The fold of each segment's values by `op` in order (`identity` for an empty segment;
/// `offsets` as for [`load_balancing_search`]): the oracle of [`crate::segmented_reduce`].
pub fn segmented_reduce<T: Copy>(values: &[T], offsets: &[usize], identity: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    offsets.windows(2).map(|w| values[w[0]..w[1]].iter().copied().reduce(&op).unwrap_or(identity)).collect()
}

/// The runs of consecutive keys equal by `comp` (neither orders before the other), as
/// `slice::chunk_by` groups them: each run's first key and length (the oracle of
/// [`crate::unique`] and [`crate::run_length_encode`]).
pub fn run_length_encode<K: Key, C: Comparator<K>>(keys: &[K], comp: C) -> (Vec<K>, Vec<usize>) {
    keys.chunk_by(|a, b| !comp.is_less(a, b) && !comp.is_less(b, a)).map(|run| (run[0], run.len())).unzip()
}

/// Each run's first key and the fold of its values by `op` in order (the oracle of
/// [`crate::reduce_by_key`]).
pub fn reduce_by_key<K: Key, V: Copy, C: Comparator<K>>(keys: &[K], values: &[V], op: impl Fn(V, V) -> V, comp: C) -> (Vec<K>, Vec<V>) {
    assert_eq!(keys.len(), values.len(), "a value per key");
    let (run_keys, lengths) = run_length_encode(keys, comp);
    let mut at = 0;
    let folds = lengths.iter().map(|&len| {
        let fold = values[at..at + len].iter().copied().reduce(&op).expect("runs are not empty");
        at += len;
        fold
    });
    (run_keys, folds.collect())
}

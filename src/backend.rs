//! One trait over the two backends that work on host slices: a [`Gpu`] (the data streamed
//! through the device) and [`Host`] (CPU threads, [`crate::host`]). Code written against
//! [`Backend`] runs on either, with the same results and the same errors.

use crate::error::Result;
use crate::join::JoinKind;
use crate::key::{Comparator, Key, Value};
use crate::reduce::Reduction;
use crate::search::Bound;
use crate::sets::SetOperation;
use crate::sort::SortIndex;
use crate::Gpu;

/// The host backend as a value: [`crate::host`]'s functions behind [`Backend`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Host;

/// Declares the trait from one list of signatures and implements it for `Gpu` (its host-slice
/// methods) and `Host` (the `host` module's functions), so neither can drift from the list.
macro_rules! backend_trait {
    ($($(#[$doc:meta])* fn $name:ident<$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        /// The algorithms on host slices, on a [`Gpu`] or on CPU threads ([`Host`]): write a
        /// program or a test once and run it on either. Each method is the `Gpu` method and the
        /// [`crate::host`] function of the same name, with their semantics and errors.
        ///
        /// ```
        /// use mergepath::{Backend, Gpu, Host, Less};
        ///
        /// fn sorted_and_merged(backend: &impl Backend) -> Result<Vec<u32>, mergepath::Error> {
        ///     let mut a = vec![5u32, 1, 3];
        ///     backend.sort_keys(&mut a, Less)?;
        ///     let mut out = vec![0; 5];
        ///     backend.merge_keys(&a, &[2, 4], &mut out, Less)?;
        ///     Ok(out)
        /// }
        ///
        /// # fn main() -> Result<(), mergepath::Error> {
        /// assert_eq!(sorted_and_merged(&Host)?, [1, 2, 3, 4, 5]);
        /// if let Ok(gpu) = Gpu::new(0) {
        ///     assert_eq!(sorted_and_merged(&gpu)?, [1, 2, 3, 4, 5]);
        /// }
        /// # Ok(()) }
        /// ```
        pub trait Backend {
            /// `"gpu"` or `"host"`, for messages.
            fn name(&self) -> &'static str;
            $($(#[$doc])*
            #[allow(clippy::too_many_arguments)]
            fn $name<$($g: $bound),*>(&self, $($arg: $ty),*) -> $ret;)*
        }

        impl Backend for Gpu {
            fn name(&self) -> &'static str {
                "gpu"
            }
            $(#[allow(clippy::too_many_arguments)]
            fn $name<$($g: $bound),*>(&self, $($arg: $ty),*) -> $ret {
                Gpu::$name(self, $($arg),*)
            })*
        }

        impl Backend for Host {
            fn name(&self) -> &'static str {
                "host"
            }
            $(#[allow(clippy::too_many_arguments)]
            fn $name<$($g: $bound),*>(&self, $($arg: $ty),*) -> $ret {
                crate::host::$name($($arg),*)
            })*
        }
    };
}

backend_trait! {
    /// Sorts `keys` in place, stably.
    fn sort_keys<K: Key, C: Comparator<K>>(keys: &mut [K], comp: C) -> Result<()>;
    /// Sorts keys with their values, stably.
    fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(keys: &mut [K], values: &mut [V], comp: C) -> Result<()>;
    /// Sorts `keys` in place and writes each one's input position to `indices` (an argsort).
    fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(keys: &mut [K], indices: &mut [I], comp: C) -> Result<()>;
    /// Writes the positions that sort `keys` to `indices`, leaving the keys as they are.
    fn argsort<K: Key, I: SortIndex, C: Comparator<K>>(keys: &[K], indices: &mut [I], comp: C) -> Result<()>;
    /// Merges two sorted inputs into `out[..a.len() + b.len()]`, stably (`a`'s first on ties).
    fn merge_keys<K: Key, C: Comparator<K>>(a: &[K], b: &[K], out: &mut [K], comp: C) -> Result<()>;
    /// Merges key/value pairs, each value following its key.
    fn merge_pairs<K: Key, V: Value, C: Comparator<K>>(a_keys: &[K], a_values: &[V], b_keys: &[K], b_values: &[V], out_keys: &mut [K], out_values: &mut [V], comp: C) -> Result<()>;
    /// Merges any number of sorted inputs into `out[..total]`, stably (a lower input's first on ties).
    fn merge_multiway_keys<K: Key, C: Comparator<K>>(inputs: &[&[K]], out: &mut [K], comp: C) -> Result<()>;
    /// Merges any number of sorted key/value inputs, each value following its key.
    fn merge_multiway_pairs<K: Key, V: Value, C: Comparator<K>>(keys: &[&[K]], values: &[&[V]], out_keys: &mut [K], out_values: &mut [V], comp: C) -> Result<()>;
    /// For each sorted needle, its lower or upper bound in the sorted haystack.
    fn sorted_search<K: Key, I: SortIndex, C: Comparator<K>>(needles: &[K], haystack: &[K], bound: Bound, out: &mut [I], comp: C) -> Result<()>;
    /// Both bounds of each needle.
    fn sorted_search_range<K: Key, I: SortIndex, C: Comparator<K>>(needles: &[K], haystack: &[K], lower: &mut [I], upper: &mut [I], comp: C) -> Result<()>;
    /// How many haystack items equal each needle.
    fn sorted_search_count<K: Key, I: SortIndex, C: Comparator<K>>(needles: &[K], haystack: &[K], counts: &mut [I], comp: C) -> Result<()>;
    /// 1 where a needle is in the haystack, else 0.
    fn sorted_search_contains<K: Key, C: Comparator<K>>(needles: &[K], haystack: &[K], found: &mut [u8], comp: C) -> Result<()>;
    /// A multiset operation of two sorted inputs into `out`; returns the result's length.
    fn set_operation_keys<K: Key, C: Comparator<K>>(op: SetOperation, a: &[K], b: &[K], out: &mut [K], comp: C) -> Result<usize>;
    /// A multiset operation on pairs, values from `a` where the key is; returns the length.
    fn set_operation_pairs<K: Key, V: Value, C: Comparator<K>>(op: SetOperation, a_keys: &[K], a_values: &[V], b_keys: &[K], b_values: &[V], out_keys: &mut [K], out_values: &mut [V], comp: C) -> Result<usize>;
    /// The length of a multiset operation's result.
    fn set_operation_len<K: Key, C: Comparator<K>>(op: SetOperation, a: &[K], b: &[K], comp: C) -> Result<usize>;
    /// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` on its own, stably.
    fn sort_segments_keys<K: Key, C: Comparator<K>>(keys: &mut [K], offsets: &[usize], comp: C) -> Result<()>;
    /// The segment of each of `count` work items, given the segments' first items.
    fn load_balancing_search<I: SortIndex>(count: usize, starts: &[I], segments: &mut [I]) -> Result<()>;
    /// The segment and the rank in it of each of `count` work items.
    fn load_balancing_search_ranks<I: SortIndex>(count: usize, starts: &[I], segments: &mut [I], ranks: &mut [I]) -> Result<()>;
    /// Each of `count` work items' segment's value (interval expand).
    fn interval_expand<I: SortIndex, V: Value>(count: usize, starts: &[I], values: &[V], out: &mut [V]) -> Result<()>;
    /// Each interval's values copied from its own place in `input` to its place in the items.
    fn interval_gather<I: SortIndex, V: Value>(count: usize, starts: &[I], sources: &[I], input: &[V], out: &mut [V]) -> Result<()>;
    /// Each interval's values copied from its place in the items to its own place in `out`.
    fn interval_scatter<I: SortIndex, V: Value>(count: usize, starts: &[I], destinations: &[I], input: &[V], out: &mut [V]) -> Result<()>;
    /// Each interval's values copied from its own place in `input` to its own place in `out`.
    fn interval_move<I: SortIndex, V: Value>(count: usize, starts: &[I], sources: &[I], destinations: &[I], input: &[V], out: &mut [V]) -> Result<()>;
    /// The array with each value inserted before the item at its position (bulk insert).
    fn bulk_insert<I: SortIndex, V: Value>(array: &[V], positions: &[I], values: &[V], out: &mut [V]) -> Result<()>;
    /// The array without the items at the positions (bulk remove); returns how many are kept.
    fn bulk_remove<I: SortIndex, V: Value>(array: &[V], positions: &[I], out: &mut [V]) -> Result<usize>;
    /// The pairs of rows of two sorted columns with equal keys, and the unmatched rows `kind` keeps.
    fn join<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> Result<(Vec<i64>, Vec<i64>)>;
    /// The number of pairs `join` outputs, without writing them.
    fn join_len<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> Result<usize>;
    /// The first key of each run of equal keys; returns the number of runs.
    fn unique<K: Key, C: Comparator<K>>(keys: &[K], out: &mut [K], comp: C) -> Result<usize>;
    /// Each run's first key and length; returns the number of runs.
    fn run_length_encode<K: Key, I: SortIndex, C: Comparator<K>>(keys: &[K], out_keys: &mut [K], lengths: &mut [I], comp: C) -> Result<usize>;
    /// Each run's first key and its values folded; returns the number of runs.
    fn reduce_by_key<K: Key, V: Key, C: Comparator<K>, D: Comparator<V>>(keys: &[K], values: &[V], out_keys: &mut [K], out_values: &mut [V], reduction: Reduction, comp: C, value_order: D) -> Result<usize>;
    /// Each segment's values folded into one (segmented reduction).
    fn segmented_reduce<K: Key, I: SortIndex, C: Comparator<K>>(starts: &[I], values: &[K], out: &mut [K], reduction: Reduction, empty: K, comp: C) -> Result<()>;
    /// Sorts each segment of pairs on its own, stably.
    fn sort_segments_pairs<K: Key, V: Value, C: Comparator<K>>(keys: &mut [K], values: &mut [V], offsets: &[usize], comp: C) -> Result<()>;
}

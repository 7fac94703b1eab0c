//! Interval move, gather and scatter (Modern GPU's): copying variable-length intervals of
//! values between arrays, each interval's items spread over the GPU by the load-balancing
//! search whatever the intervals' lengths.
//!
//! ```no_run
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = mergepath::Gpu::new(0)?;
//! // Two intervals of 2 and 3 values: their starts in the output are the exclusive scan of
//! // the lengths, and each is read from its own place in the input.
//! let input = gpu.upload(&[10u32, 11, 12, 13, 14, 15, 16])?;
//! let (starts, sources) = (gpu.upload(&[0u32, 2])?, gpu.upload(&[5u32, 0])?);
//! let mut out = gpu.alloc_zeros::<u32>(5)?;
//! mergepath::interval_gather(&gpu, 5, &starts, &sources, &input, &mut out)?;
//! assert_eq!(gpu.download(&out)?, [15, 16, 10, 11, 12]);
//! # Ok(())
//! # }
//! ```
//!
//! Semantics: `count` items in intervals given by their first items `starts` (non-decreasing
//! from 0, as [`crate::load_balancing_search`]'s): interval `s` holds items `starts[s]` up to
//! `starts[s + 1]` (the last up to `count`). The item of rank `r` in interval `s` moves
//! - by [`interval_gather`], from `input[sources[s] + r]` to `out[starts[s] + r]`;
//! - by [`interval_scatter`], from `input[starts[s] + r]` to `out[destinations[s] + r]`;
//! - by [`interval_move`], from `input[sources[s] + r]` to `out[destinations[s] + r]`.
//!
//! Items of `out` no interval writes are left as they are; where destination intervals
//! overlap, the items written more than once are unspecified on the GPU (a value moves as
//! several words, so it can mix the words of two values written there; on the host backend the
//! later interval's). Values of any size. The host backend ([`crate::host::interval_gather`], ...) and host slices
//! ([`crate::Gpu::interval_gather`], ...) take the same arguments and check every interval
//! against its arrays, and against the index type: an interval's positions are `I`s below its
//! largest value, so with `u32` indices none may reach `u32::MAX` ([`Error::InvalidArgument`]).
//! The device calls do not check, as that would wait for the GPU: a move whose source or
//! destination is outside its array, or at or past `I`'s largest value, is skipped, never an
//! access out of bounds.
//!
//! Each is a kernel of its own on the load-balancing search's tiles: each run of a tile's items
//! in one interval is marked at its first item, which keeps the run's moves, and each warp
//! takes its items 32 at a time, finding an item's run from the marks, with several values a
//! lane in flight.

pub(crate) mod cpu;
pub(crate) mod host;
#[cfg(feature = "testing")]
pub(crate) mod properties;
mod slices;

use crate::checks::{check_load_balancing, check_output, check_starts, check_values};
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::IntervalMoveParams;
use crate::device::kernels::{Entry, Kernels};
use crate::device::launch::{grid_ctas, widest_word};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::Value;
use crate::load_balancing::{launch_load_balancing_partitions, load_balancing_params, load_balancing_tile_count};
use crate::tuning::{interval_gather_shape, interval_move_shape, interval_scatter_shape};
use crate::types::SortIndex;
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};

/// Gathers `count` items in intervals (see the module's semantics): `out[starts[s] + r] =
/// input[sources[s] + r]` for the item of rank `r` in interval `s`. `sources` holds one index
/// per interval ([`Error::LengthMismatch`] otherwise), `out` at
/// least `count` values ([`Error::OutputTooSmall`]) and must not
/// overlap the others. Indices are `u32` (up to 2^32 items and intervals,
/// [`Error::TooLarge`] past that) or `u64`. O(count + intervals) work
/// in tiles of equal size. Device arguments are not checked (see the module). Returns without
/// waiting for the GPU.
pub fn interval_gather<I: SortIndex, V: Value>(
    gpu: &Gpu,
    count: usize,
    starts: &impl DevicePtr<I>,
    sources: &impl DevicePtr<I>,
    input: &impl DevicePtr<V>,
    out: &mut impl DevicePtrMut<V>,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let (starts, sources) = (gpu.input("starts", starts, word)?, gpu.input("sources", sources, word)?);
    let input = gpu.input("input", input, std::mem::align_of::<V>())?;
    let out = gpu.output("out", out, std::mem::align_of::<V>(), count, &[&starts, &sources, &input])?;
    check_intervals::<I>(count, starts.len, &[("sources", sources.len)], 0, input.len)?;
    launch_interval_move::<I, V>(gpu, count, &starts, Some(&sources), None, &input, &out)
}

/// Scatters `count` items in intervals (see the module's semantics): `out[destinations[s] + r]
/// = input[starts[s] + r]`. `destinations` holds one index per interval, `input` at least
/// `count` values ([`Error::InvalidArgument`]); otherwise as
/// [`interval_gather`].
pub fn interval_scatter<I: SortIndex, V: Value>(
    gpu: &Gpu,
    count: usize,
    starts: &impl DevicePtr<I>,
    destinations: &impl DevicePtr<I>,
    input: &impl DevicePtr<V>,
    out: &mut impl DevicePtrMut<V>,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let (starts, destinations) = (gpu.input("starts", starts, word)?, gpu.input("destinations", destinations, word)?);
    let input = gpu.input("input", input, std::mem::align_of::<V>())?;
    let out = gpu.output("out", out, std::mem::align_of::<V>(), 0, &[&starts, &destinations, &input])?;
    check_intervals::<I>(count, starts.len, &[("destinations", destinations.len)], count, input.len)?;
    launch_interval_move::<I, V>(gpu, count, &starts, None, Some(&destinations), &input, &out)
}

/// Moves `count` items in intervals (see the module's semantics): `out[destinations[s] + r] =
/// input[sources[s] + r]`. `sources` and `destinations` hold one index per interval; otherwise
/// as [`interval_gather`].
pub fn interval_move<I: SortIndex, V: Value>(
    gpu: &Gpu,
    count: usize,
    starts: &impl DevicePtr<I>,
    sources: &impl DevicePtr<I>,
    destinations: &impl DevicePtr<I>,
    input: &impl DevicePtr<V>,
    out: &mut impl DevicePtrMut<V>,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let starts = gpu.input("starts", starts, word)?;
    let (sources, destinations) = (gpu.input("sources", sources, word)?, gpu.input("destinations", destinations, word)?);
    let input = gpu.input("input", input, std::mem::align_of::<V>())?;
    let out = gpu.output("out", out, std::mem::align_of::<V>(), 0, &[&starts, &sources, &destinations, &input])?;
    check_intervals::<I>(count, starts.len, &[("sources", sources.len), ("destinations", destinations.len)], 0, input.len)?;
    launch_interval_move::<I, V>(gpu, count, &starts, Some(&sources), Some(&destinations), &input, &out)
}

/// The checks every front end makes: the item and interval counts within `I`, items only with
/// intervals, one index per interval in each of `per_interval`, and an input of at least
/// `input_needed` values (a scatter reads the items' own indices).
fn check_intervals<I: SortIndex>(count: usize, intervals: usize, per_interval: &[(&'static str, usize)], input_needed: usize, input: usize) -> Result<()> {
    check_load_balancing(count, intervals, I::MAX_COUNT, &[])?;
    for &(what, len) in per_interval {
        check_values(what, intervals, len)?;
    }
    if input < input_needed {
        return Err(Error::invalid("input", format!("{input} values, fewer than the {input_needed} items")));
    }
    Ok(())
}

/// An interval move's host arguments (the host backend's and the host slices'): the items,
/// their intervals' starts, and each interval's first source and destination where the
/// operation has them (else the items' own indices).
#[derive(Clone, Copy)]
struct HostIntervals<'a, I> {
    count: usize,
    starts: &'a [I],
    sources: Option<&'a [I]>,
    destinations: Option<&'a [I]>,
}

impl<I: SortIndex> HostIntervals<'_, I> {
    /// The device calls' checks in their order ([`check_intervals`], a gather's output first),
    /// then the starts (as [`crate::host::load_balancing_search`]'s) and every interval inside
    /// the array it reads or writes.
    fn check(&self, input: usize, out: usize) -> Result<()> {
        let (count, intervals) = (self.count, self.starts.len());
        if self.destinations.is_none() {
            check_output("out", out, count)?;
        }
        let firsts = [("sources", self.sources, input), ("destinations", self.destinations, out)];
        let given: Vec<(&'static str, &[I], usize)> = firsts.into_iter().filter_map(|(what, f, len)| f.map(|f| (what, f, len))).collect();
        let lengths: Vec<(&'static str, usize)> = given.iter().map(|&(what, f, _)| (what, f.len())).collect();
        check_intervals::<I>(count, intervals, &lengths, if self.sources.is_none() { count } else { 0 }, input)?;
        check_starts(self.starts, count)?;
        // The index type's largest value is no position (the kernels mark skipped moves with it).
        let positions = I::MAX_COUNT - 1;
        for (what, firsts, len) in given {
            for (s, (&first, length)) in firsts.iter().zip(self.lengths()).enumerate() {
                let first = first.value() as usize;
                if first.checked_add(length).is_none_or(|end| end > len.min(positions)) {
                    let past = if len <= positions { format!("the {len} values") } else { format!("the largest index of {} bytes", size_of::<I>()) };
                    return Err(Error::invalid(what, format!("interval {s} of {length} values at {first} ends past {past}")));
                }
            }
        }
        Ok(())
    }

    /// Each interval's length, from checked starts.
    fn lengths(&self) -> impl Iterator<Item = usize> + '_ {
        let ends = self.starts.iter().skip(1).map(|e| e.value() as usize).chain([self.count]);
        self.starts.iter().zip(ends).map(|(s, e)| e - s.value() as usize)
    }

    /// The length of `out` the move writes in: the items for a gather, else all of it.
    fn written(&self, out: usize) -> usize {
        if self.destinations.is_none() { self.count } else { out }
    }
}

/// An interval kind's kernel for values of `word` bytes by indices of `index_bytes`.
type KindEntry = fn(&Kernels, usize, usize) -> Result<Entry<IntervalMoveParams>>;

/// Enqueues the move of the `count` items of the intervals `starts` from `input` to `out`:
/// from `sources` and to `destinations` where given, else at the items' own indices.
fn launch_interval_move<I: SortIndex, V: Value>(
    gpu: &Gpu,
    count: usize,
    starts: &CheckedBuffer<'_>,
    sources: Option<&CheckedBuffer<'_>>,
    destinations: Option<&CheckedBuffer<'_>>,
    input: &CheckedBuffer<'_>,
    out: &CheckedBuffer<'_>,
) -> Result<()> {
    let value_bytes = std::mem::size_of::<V>();
    if count == 0 || value_bytes == 0 {
        return Ok(());
    }
    let index_bytes = std::mem::size_of::<I>();
    let kernels = gpu.index_kernels()?;
    let word = widest_word(value_bytes, input.ptr | out.ptr);
    let (one_word, several_words, tile): (KindEntry, KindEntry, _) = match (sources, destinations) {
        (Some(_), None) => (Kernels::interval_gather, Kernels::interval_gather_words, interval_gather_shape(kernels.arch, index_bytes)),
        (None, Some(_)) => (Kernels::interval_scatter, Kernels::interval_scatter_words, interval_scatter_shape(kernels.arch, index_bytes)),
        (Some(_), Some(_)) => (Kernels::interval_move, Kernels::interval_move_words, interval_move_shape(kernels.arch, index_bytes)),
        (None, None) => {
            let reason = "an interval move needs sources, destinations or both".to_string();
            return Err(Error::InvalidArgument { argument: "sources", reason });
        }
    };
    // Values of one word and of several have kernels of their own.
    let func = if value_bytes == word { one_word(&kernels, word, index_bytes)? } else { several_words(&kernels, word, index_bytes)? };
    let tiles = load_balancing_tile_count(starts.len, count, tile.tile());
    let grid = grid_ctas(tiles, "interval move grid")?;
    let mut temp = gpu.temp((tiles + 1) * 8)?;
    let (partitions, _guard) = temp.device_ptr_mut();
    let search = load_balancing_params(starts.ptr, starts.len, count, tile.tile(), partitions);
    launch_load_balancing_partitions(gpu, &kernels, index_bytes, &search)?;
    let params = IntervalMoveParams {
        starts: starts.ptr,
        segments: starts.len as i64,
        count: count as i64,
        partitions,
        sources: sources.map_or(0, |s| s.ptr),
        destinations: destinations.map_or(0, |d| d.ptr),
        input: input.ptr,
        input_len: input.len as i64,
        output: out.ptr,
        output_len: out.len as i64,
        words: (value_bytes / word) as i64,
    };
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (tile.threads, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: `IntervalMoveParams` is `mergepath_interval_{gather,scatter,move}[_words]_{word}_{4,8}`'s
    // parameter struct, the kernel chosen by which of `sources` and `destinations` are given
    // (and `_words` by `words` > 1);
    // its tile is that kind's shape of the index width (the partitions' spacing above, enqueued
    // before it), one CTA per tile of the boundaries' and items' merge over `starts.len >= 1`
    // starts (check_intervals: items need intervals); `sources` and `destinations`, where not
    // null, hold one index per start; the kernel moves only within `input_len` and `output_len`
    // values, both arrays aligned to the word, which divides the value.
    unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gather of 4 items from one interval: its source checked against an input longer than
    /// `u32` positions reach.
    fn gather_from(source: u32) -> Result<()> {
        let (starts, sources) = ([0u32], [source]);
        HostIntervals { count: 4, starts: &starts, sources: Some(&sources), destinations: None }.check(1 << 33, 4)
    }

    #[test]
    fn u32_positions_end_below_u32_max() {
        assert!(gather_from(u32::MAX - 4).is_ok());
        assert!(matches!(gather_from(u32::MAX - 3), Err(Error::InvalidArgument { argument: "sources", .. })));
    }
}

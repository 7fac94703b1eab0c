//! Load-balancing search (Modern GPU's): for each of `count` work items, the segment it belongs
//! to and its rank there, given the segments' first items — the primitive under interval
//! expand, segmented reduction and joins, which spreads irregular work (segments of any
//! lengths, empty ones included) evenly over the GPU.
//!
//! ```no_run
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = mergepath::Gpu::new(0)?;
//! // Three segments of 2, 0 and 3 items: their starts are the exclusive scan of the lengths.
//! let starts = gpu.upload(&[0u32, 2, 2])?;
//! let (mut segments, mut ranks) = (gpu.alloc_zeros::<u32>(5)?, gpu.alloc_zeros::<u32>(5)?);
//! mergepath::load_balancing_search_ranks(&gpu, 5, &starts, &mut segments, &mut ranks)?;
//! assert_eq!(gpu.download(&segments)?, [0, 0, 2, 2, 2]);
//! assert_eq!(gpu.download(&ranks)?, [0, 1, 0, 1, 2]);
//! # Ok(())
//! # }
//! ```
//!
//! Semantics: `starts` holds one index per segment, non-decreasing, `starts[0] = 0` (an
//! exclusive scan of the segments' lengths, whose sum is `count`); item `i` belongs to the last
//! segment `s` with `starts[s] <= i` and has rank `i - starts[s]` in it. Empty segments own no
//! item. The host backend ([`crate::host::load_balancing_search`]) and host slices
//! ([`crate::Gpu::load_balancing_search`]) take the same arguments.
//!
//! The two-phase schedule: the items `0, 1, ..., n - 1` (an implicit counting sequence, never
//! stored) are merged with the segment boundaries `starts[1..]`, a boundary before an
//! item equal to it. Passing a boundary moves to the next segment, so every output of the
//! merge is either an item, whose segment is the count of boundaries before it, or a
//! boundary. The merge is cut into tiles of `tile` outputs by Merge Path (a search per tile
//! over the counting sequence and the boundaries), so each tile's work is bounded whatever the
//! segment lengths: a run of empty segments costs its boundaries, a long segment its items.
//! Inside a tile each thread takes `vt` outputs from its own Merge Path split, with the tile's
//! boundaries in shared memory, and walks them serially.
//!
//! Built on it: [`interval_expand`] (each segment's value repeated over its items, in the
//! search's own tiles) and [`crate::segmented_reduce`] (each tile folds its runs of one segment;
//! a segment crossing tiles folds its tiles' partial results in order, so the operation need
//! only be associative). Both are modelled on the CPU too (feature `models`).

mod launch;
#[cfg(any(test, feature = "models"))]
mod model;

pub(crate) use launch::{launch_load_balancing, launch_load_balancing_partitions, load_balancing_params, load_balancing_tile_count, LoadBalancingOutput};
use crate::checks::{check_load_balancing, check_values};
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Value;
use crate::types::SortIndex;
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// Writes to `segments[i]` the segment of each of the `count` work items `i`: the last `s`
/// with `starts[s] <= i`, where `starts` (device memory) holds the segments' first items (see
/// the module's semantics). `segments` may be longer (the rest is left as it is,
/// [`Error::OutputTooSmall`](crate::Error::OutputTooSmall) if shorter) and must not overlap
/// `starts`. Indices are `u32` (up to 2^32 items and segments,
/// [`Error::TooLarge`](crate::Error::TooLarge) past that) or `u64`; items with no segment
/// (`count > 0`, `starts` empty) are [`Error::InvalidArgument`](crate::Error::InvalidArgument).
/// O(count + segments) work in tiles of equal size whatever the segments' lengths. Returns
/// without waiting for the GPU.
///
/// Device `starts` are not checked (that would wait for the GPU): starts that are not
/// non-decreasing from 0 give unspecified segments in `0..starts.len()`, never an
/// out-of-bounds access. The host-slice and host-backend calls check theirs
/// ([`Error::InvalidArgument`](crate::Error::InvalidArgument)).
pub fn load_balancing_search<I: SortIndex>(gpu: &Gpu, count: usize, starts: &impl DevicePtr<I>, segments: &mut impl DevicePtrMut<I>) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let starts = gpu.input("starts", starts, word)?;
    let out = gpu.output("segments", segments, word, 0, &[&starts])?;
    check_load_balancing(count, starts.len, I::MAX_COUNT, &[("segments", out.len)])?;
    if count == 0 {
        return Ok(());
    }
    launch_load_balancing(gpu, word, count, &starts, LoadBalancingOutput::Search { segments: out.ptr, ranks: 0 })
}

/// [`load_balancing_search`] writing also each item's rank in its segment, `ranks[i] = i -
/// starts[segments[i]]` (unspecified where `starts` are not non-decreasing from 0). `ranks` as
/// `segments`, and apart from both.
pub fn load_balancing_search_ranks<I: SortIndex>(
    gpu: &Gpu,
    count: usize,
    starts: &impl DevicePtr<I>,
    segments: &mut impl DevicePtrMut<I>,
    ranks: &mut impl DevicePtrMut<I>,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let starts = gpu.input("starts", starts, word)?;
    let seg = gpu.output("segments", segments, word, 0, &[&starts])?;
    let rank = gpu.output("ranks", ranks, word, 0, &[&starts, &seg])?;
    check_load_balancing(count, starts.len, I::MAX_COUNT, &[("segments", seg.len), ("ranks", rank.len)])?;
    if count == 0 {
        return Ok(());
    }
    launch_load_balancing(gpu, word, count, &starts, LoadBalancingOutput::Search { segments: seg.ptr, ranks: rank.ptr })
}
#[cfg(any(test, feature = "models"))]
pub use model::{interval_expand_tiles, load_balancing_tiles, segmented_reduce_tiles};

/// Interval expand (Modern GPU's): writes to `out[i]` the value of the segment of each of the
/// `count` work items, `values[s]` repeated over segment `s`'s items — the segments given by
/// their first items `starts` as in [`load_balancing_search`], one value per segment
/// ([`Error::LengthMismatch`](crate::Error::LengthMismatch) otherwise). Values of any size.
/// `out` may be longer (the rest is left as it is) and must not overlap the inputs. One pass:
/// the search's tiles write each item's value, not its segment. Errors and unchecked starts as
/// [`load_balancing_search`]'s (bad starts give values of some segment, never an access out of
/// bounds). Returns without waiting for the GPU.
pub fn interval_expand<I: SortIndex, V: Value>(
    gpu: &Gpu,
    count: usize,
    starts: &impl DevicePtr<I>,
    values: &impl DevicePtr<V>,
    out: &mut impl DevicePtrMut<V>,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let starts = gpu.input("starts", starts, word)?;
    let values = gpu.input("values", values, std::mem::align_of::<V>())?;
    let out = gpu.output("out", out, std::mem::align_of::<V>(), 0, &[&starts, &values])?;
    check_load_balancing(count, starts.len, I::MAX_COUNT, &[("out", out.len)])?;
    check_values("values", starts.len, values.len)?;
    if count == 0 {
        return Ok(());
    }
    launch_load_balancing(gpu, word, count, &starts, LoadBalancingOutput::Expand { values: values.ptr, out: out.ptr, value_bytes: std::mem::size_of::<V>() })
}

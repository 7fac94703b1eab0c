//! Segmented sort: many independent arrays sorted in one call. Segment `s` is
//! `keys[offsets[s]..offsets[s + 1]]`; each is sorted stably by the comparator (any, derived
//! ones included), and nothing moves across a segment boundary.
//!
//! Everything is planned on the device, so the offsets may stay in device memory and nothing
//! is done per segment on the host:
//!
//! 0. Tiles start every `stride` positions (`segment_geometry`: the merge passes' tile less
//!    `small`); a segment of at most `small` items crossing a tile's start is taken whole by
//!    the tile before (`segmented_tile_start`), so a tile holds at most a merge tile of items
//!    and every short segment is inside one tile.
//! 1. One CTA per tile sorts it in place (`segmented_blocksort_tile`), one of three ways, each
//!    a launch of its own over the tiles so each runs at its own occupancy: a tile inside one
//!    segment as mergesort's first pass; a tile whose segments (or pieces of them) are all
//!    short, each item placed by counting the items of its segment ordered before it (one
//!    comparison per pair; a thread counts for four neighbouring items at once, and the
//!    threads take their items by segment length so a warp's loops are equally long; equal
//!    keys sorted out afterwards from the places they leave unclaimed); else by (segment, key), as
//!    mergesort's first pass with each item's segment as the leading key (the HPCA "Batch
//!    Sort" project's one block per batch of small arrays): keys alone under a built-in order
//!    without stability (equal items are the same bits), those of at most 4 bytes as one u64
//!    word an item, the segment high. Every segment inside a tile is then sorted; a long
//!    segment crossing tile starts is sorted piecewise.
//! 2. Merge levels finish the long segments: level k merges pairs of runs of 2^k pieces of each
//!    segment still needing it (`segment_levels`, `segment_level_merge`), runs counted from
//!    the segment's first tile, so no merge crosses a segment boundary. They ping-pong with a
//!    temporary buffer; segments that needed an odd number of levels are copied back at the end.
//!
//! Host offsets (`&[usize]`) are validated (more than 4,096 on the GPU, after their upload) and
//! give the exact number of levels; device offsets ([`CudaSlice<u64>`](cudarc::driver::CudaSlice),
//! [`CudaView<u64>`](cudarc::driver::CudaView)) are used as they are, with as many levels as the
//! longest possible segment needs: the tile sorts record the levels really needed on the
//! device. The levels a segment of twice the mean length needs where it starts just before a
//! tile start are launched one by one, each a search kernel (a thread per tile and job,
//! writing the merge ranges) and a merge kernel of one CTA per range, which returns at
//! once past the recorded count. The levels after them, and the copy back, run in one launch
//! of resident CTAs taking work items in order (`segmented_levels_body`), so the levels that
//! turn out not to be needed cost nothing. Run independent batches concurrently by calling
//! this on [`Gpu`]s made with [`Gpu::with_stream`] on different streams (each has its own
//! temporary storage).


pub(crate) mod launch;
#[cfg(any(test, feature = "models"))]
mod model;
pub(crate) mod offsets;
pub(crate) mod plan;

use crate::device::Gpu;
use crate::error::Result;
use crate::gather::{sort_values, ValueSources};
use crate::key::{sort_value_align, Comparator, Key, Value};
use crate::sort::move_records;
pub(crate) use launch::{launch_segmented, launch_segmented_with};
pub use offsets::SegmentOffsets;
#[cfg(any(test, feature = "models"))]
pub use model::segment_level_merge;
pub use plan::validate_segment_offsets;
// The plan, for the CPU tests of the tiles and levels (`models`): not part of the API.
#[cfg(any(test, feature = "models"))]
pub use plan::{segment_geometry, segment_levels, segmented_tile_start};
use cudarc::driver::DevicePtrMut;

/// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` in place by `comp`, stably; items
/// before `offsets[0]` and after the last offset are left as they are. Empty segments, one
/// segment, and fewer than 2 offsets (no segments) all work; at most 2^31 - 1 segments
/// ([`Error::TooLarge`](crate::Error::TooLarge)). With device offsets, returns without waiting
/// for the GPU.
///
/// `offsets` is a host slice of `usize` or device memory of `u64` (see [`SegmentOffsets`]).
/// Host offsets must be non-decreasing and end at most at `keys.len()`
/// ([`Error::InvalidArgument`](crate::Error::InvalidArgument), the keys as they were): they are
/// checked before any key moves (more than 4,096 of them on the GPU after their upload), and
/// their upload waits for the work before it on the stream. Device offsets are not checked
/// (that would wait for the GPU): ones that decrease or pass the end give unspecified contents
/// of the keys, never an out-of-bounds access (every segment is clamped into the keys).
pub fn sort_segments_keys<K: Key, C: Comparator<K>, O: SegmentOffsets + ?Sized>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    offsets: &O,
    comp: C,
) -> Result<()> {
    let n = keys.len();
    let keys = gpu.output("keys", keys, K::DEVICE_ALIGN, n, &[])?;
    sort_segments::<K, C, O>(gpu, keys.ptr, None, n, offsets, comp)
}

/// [`sort_segments_keys`] moving `values` (the keys' length, any [`Value`]) with their keys.
pub fn sort_segments_pairs<K: Key, V: Value, C: Comparator<K>, O: SegmentOffsets + ?Sized>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    offsets: &O,
    comp: C,
) -> Result<()> {
    let (keys, values) = gpu.inplace_pairs(keys, values, "values", const { sort_value_align::<V>() })?;
    let kernels = gpu.kernels::<K, C>()?;
    sort_values::<V>(gpu, &kernels, values.ptr, values.ptr, keys.len, |values| {
        sort_segments::<K, C, O>(gpu, keys.ptr, values.map(|(v, _, word)| (v, word)), keys.len, offsets, comp)
    })
}

/// The segmented sort of `n` keys at `keys` in place, values (address, word) following; records
/// wider than the key tiles by their comparable keys ([`move_records`]): the keys sorted by
/// their module's kernels with the records' positions, then the records and values gathered.
pub(crate) fn sort_segments<K: Key, C: Comparator<K>, O: SegmentOffsets + ?Sized>(gpu: &Gpu, keys: u64, values: Option<(u64, usize)>, n: usize, offsets: &O, comp: C) -> Result<()> {
    let Some(order) = &C::RECORD else {
        return launch_segmented::<K, C, O>(gpu, keys, values, n, offsets, comp);
    };
    let values = values.map(|(v, word)| (ValueSources { a: (v, n), b: None }, v, word));
    move_records::<K>(gpu, order, ValueSources { a: (keys, n), b: None }, keys, values, |o| {
        launch_segmented_with(gpu, o.kernels, 8, o.keys, Some((o.positions, o.word)), n, offsets)?;
        Ok((n, o.positions))
    })
}


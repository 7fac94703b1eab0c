//! Segmented sort: many independent arrays sorted in one call. Segment `s` is
//! `keys[offsets[s]..offsets[s + 1]]`; each is sorted stably by the comparator (any, derived
//! ones included), and nothing moves across a segment boundary.
//!
//! Everything is planned on the device, so the offsets may stay in device memory and nothing
//! is done per segment on the host:
//!
//! 0. Tiles start every `stride` positions ([`segment_geometry`]: the merge passes' tile less
//!    `small`); a segment of at most `small` items crossing a tile's start is taken whole by
//!    the tile before ([`segmented_tile_start`]), so a tile holds at most a merge tile of items
//!    and every short segment is inside one tile.
//! 1. One CTA per tile sorts it in place (`segmented_blocksort_tile`), one of three ways, each
//!    a launch of its own over the tiles so each runs at its own occupancy: a tile inside one
//!    segment as mergesort's first pass; a tile whose segments (or pieces of them) are all
//!    short, each item placed by counting the items of its segment ordered before it (one
//!    comparison per pair; a thread counts for four neighbouring items at once, and the
//!    threads take their items by segment length so a warp's loops are equally long; equal
//!    keys sorted out afterwards from the places they leave unclaimed); else by (segment, key), as
//!    mergesort's first pass with each item's segment as the leading key (the HPCA "Batch
//!    Sort" project's one block per batch of small arrays). Every segment inside a tile is then
//!    sorted; a long segment crossing tile starts is sorted piecewise.
//! 2. Merge levels finish the long segments: level k merges pairs of runs of 2^k pieces of each
//!    segment still needing it ([`segment_levels`], [`segment_level_merge`]), runs counted from
//!    the segment's first tile, so no merge crosses a segment boundary. They ping-pong with a
//!    temporary buffer; segments that needed an odd number of levels are copied back at the end.
//!
//! Host offsets (`&[usize]`) are validated and uploaded, and give the exact number of levels;
//! device offsets ([`CudaSlice<u64>`], [`CudaView<u64>`]) are used as they are, with as many
//! levels as the longest possible segment needs: the tile sorts record the levels really
//! needed on the device. The levels a segment of twice the mean length needs (all of them
//! with host offsets) are launched one by one, each a search kernel (a thread per tile and
//! job, writing the merge ranges) and a merge kernel of one CTA per range, which returns at
//! once past the recorded count. The levels after them, and the copy back, run in one launch
//! of resident CTAs taking work items in order (`segmented_levels_body`), so the levels that
//! turn out not to be needed cost nothing. Run independent batches concurrently by calling
//! this on [`Gpu`]s made with [`Gpu::with_stream`] on different streams (each has its own
//! temporary storage).

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{value_word, Comparator, Key, Value};
use crate::tuning::{sort_pairs_shape, sort_shape};
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, LaunchConfig};
use std::ops::Range;

/// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` in place by `comp`, stably; items
/// before `offsets[0]` and after the last offset are left as they are. Empty segments, one
/// segment, and fewer than 2 offsets (no segments) all work; at most 2^31 - 1 segments
/// ([`Error::TooLarge`]). Returns without waiting for the GPU.
///
/// `offsets` is a host slice of `usize` or device memory of `u64` (see [`SegmentOffsets`]).
/// Host offsets must be non-decreasing and end at most at `keys.len()`
/// ([`Error::InvalidArgument`]). Device offsets are not checked (that would wait for the
/// GPU): ones that decrease or pass the end give unspecified contents of the keys, never an
/// out-of-bounds access (every segment is clamped into the keys).
pub fn sort_segments_keys<K: Key, C: Comparator<K>, O: SegmentOffsets + ?Sized>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    offsets: &O,
    comp: C,
) -> Result<()> {
    let n = keys.len();
    let keys = gpu.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
    launch_segmented::<K, C, O>(gpu, keys.ptr, None, n, offsets, comp)
}

/// [`sort_segments_keys`] moving `values` (the keys' length, any [`Value`]) with their keys.
pub fn sort_segments_pairs<K: Key, V: Value, C: Comparator<K>, O: SegmentOffsets + ?Sized>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    offsets: &O,
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let (keys, values) = gpu.inplace_pairs(keys, values, "values", word)?;
    launch_segmented::<K, C, O>(gpu, keys.ptr, Some((values.ptr, word)), keys.len, offsets, comp)
}

/// Where a segmented sort's offsets are: a host slice of `usize` (`[usize]`, `[usize; N]`,
/// `Vec<usize>`: validated, then uploaded) or device memory of `u64` ([`CudaSlice<u64>`],
/// [`CudaView<u64>`], [`CudaViewMut<u64>`]: used in place, not validated). Sealed.
pub trait SegmentOffsets: sealed::Sealed {}

mod sealed {
    use super::*;

    /// Offsets ready for the kernels. (Named only inside the crate: the module is private.)
    #[allow(private_interfaces)]
    pub enum Resolved<'a> {
        /// Uploaded host offsets and the most merge levels a segment needs.
        Host(CudaSlice<u64>, u32),
        /// Device offsets as they are.
        Device(BufArg<'a>),
    }

    pub trait Sealed {
        /// Checks and readies the offsets of a sort of `len` keys in tiles of `tile` items.
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>>;
    }

    impl Sealed for [usize] {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>> {
            validate_segment_offsets(self, len)?;
            let (stride, small) = segment_geometry(tile);
            let levels = self.windows(2).map(|w| segment_levels(w[0], w[1], stride, small)).max().unwrap_or(0);
            // usize is u64 on 64-bit hosts: no copy.
            let offsets: std::borrow::Cow<[u64]> = match bytemuck::try_cast_slice(self) {
                Ok(same) => std::borrow::Cow::Borrowed(same),
                Err(_) => std::borrow::Cow::Owned(self.iter().map(|&o| o as u64).collect()),
            };
            Ok(Resolved::Host(gpu.upload(&offsets)?, levels))
        }
    }

    impl<const N: usize> Sealed for [usize; N] {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>> {
            self.as_slice().resolve(gpu, len, tile)
        }
    }

    impl Sealed for Vec<usize> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>> {
            self.as_slice().resolve(gpu, len, tile)
        }
    }

    /// Device offsets: the context checked, nothing else.
    fn device<'a>(gpu: &'a Gpu, offsets: &'a impl DevicePtr<u64>) -> Result<Resolved<'a>> {
        Ok(Resolved::Device(gpu.input("offsets", offsets, 8)?))
    }

    impl Sealed for CudaSlice<u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }

    impl Sealed for CudaView<'_, u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }

    impl Sealed for CudaViewMut<'_, u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }
}

impl SegmentOffsets for [usize] {}
impl<const N: usize> SegmentOffsets for [usize; N] {}
impl SegmentOffsets for Vec<usize> {}
impl SegmentOffsets for CudaSlice<u64> {}
impl SegmentOffsets for CudaView<'_, u64> {}
impl SegmentOffsets for CudaViewMut<'_, u64> {}

/// Checks host offsets against a buffer of `len` items: non-decreasing, within it, fewer than
/// 2^31 segments.
pub fn validate_segment_offsets(offsets: &[usize], len: usize) -> Result<()> {
    if offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::InvalidArgument("segment offsets must be non-decreasing"));
    }
    if offsets.last().is_some_and(|&last| last > len) {
        return Err(Error::InvalidArgument("segment offsets past the end of the keys"));
    }
    check_segment_count(offsets.len())
}

fn check_segment_count(offsets: usize) -> Result<()> {
    if offsets > i32::MAX as usize {
        return Err(Error::TooLarge { what: "segments (at most 2^31 - 1)" });
    }
    Ok(())
}

/// Segments of at most this many items never need a merge level (up to half a tile).
const SMALL_SEGMENT: usize = 64;

/// The segmented sort's tiles for a merge tile of `tile` items: `(stride, small)`, tiles
/// starting every `stride` positions and short segments (at most `small` items, taken whole
/// by one tile) with `stride + small == tile`.
pub fn segment_geometry(tile: usize) -> (usize, usize) {
    let small = SMALL_SEGMENT.min(tile / 2).max(1);
    (tile - small, small)
}

/// Where tile `t` of a segmented sort starts (`segmented_tile_start` in the kernels), for
/// valid `offsets`: at `t * stride`, unless a segment of at most `small` items crosses that
/// position, which then goes whole to tile `t - 1` (the tile starts at its end); never before
/// `offsets[0]` nor after the last offset.
pub fn segmented_tile_start(offsets: &[usize], t: usize, stride: usize, small: usize) -> usize {
    let (Some(&lo), Some(&hi)) = (offsets.first(), offsets.last()) else { return 0 };
    let p = t.saturating_mul(stride);
    let mut start = p;
    if p > lo && p < hi {
        let s = offsets.partition_point(|&o| o <= p) - 1;
        let (b, e) = (offsets[s], offsets[s + 1]);
        if b < p && e - b <= small {
            start = e;
        }
    }
    start.clamp(lo, hi)
}

/// The merge levels segment `begin..end` needs after the tiles are sorted (`segment_levels`
/// in the kernels): none for at most `small` items; else its pieces are the tiles it touches
/// (cut every `stride` positions) and level k merges pairs of runs of 2^k pieces, so
/// ceil(log2(pieces)).
pub fn segment_levels(begin: usize, end: usize, stride: usize, small: usize) -> u32 {
    if end - begin <= small {
        return 0;
    }
    let pieces = (end - 1) / stride - begin / stride + 1;
    pieces.next_power_of_two().trailing_zeros()
}

/// What tile `tile_index` (positions `tile_index * stride ..`) does for segment `begin..end` at
/// merge level `level` (`segmented_merge_level_tile` in the kernels): the two sorted runs
/// merged (A, then B; B may be empty) and the output range in the tile that it writes, where
/// the merge of A and B is laid out from A's start. `None` where the segment needs no merge at
/// that level or has no items in the tile.
pub fn segment_level_merge(
    begin: usize,
    end: usize,
    stride: usize,
    small: usize,
    tile_index: usize,
    level: u32,
) -> Option<(Range<usize>, Range<usize>, Range<usize>)> {
    let t0 = tile_index * stride;
    if segment_levels(begin, end, stride, small) <= level || t0 >= end || t0 + stride <= begin {
        return None;
    }
    let first_tile = begin / stride;
    let pair = (tile_index - first_tile) >> (level + 1);
    let pair_begin = (first_tile + (pair << (level + 1))) * stride;
    let mid = pair_begin + (stride << level);
    let (a_begin, b_begin, b_end) = (pair_begin.max(begin), mid.min(end), (mid + (stride << level)).min(end));
    Some((a_begin..b_begin, b_begin..b_end, t0.max(begin)..(t0 + stride).min(end)))
}

/// Enqueues the tile starts, the tile sorts, the merge levels and the copy back.
pub(crate) fn launch_segmented<K: Key, C: Comparator<K>, O: SegmentOffsets + ?Sized>(
    gpu: &Gpu,
    keys: u64,
    values: Option<(u64, usize)>,
    n: usize,
    offsets: &O,
    _comp: C,
) -> Result<()> {
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
    let tile = shape.tile();
    let (stride, small) = segment_geometry(tile);
    let resolved = offsets.resolve(gpu, n, tile)?;
    let (offsets_ptr, offsets_len, levels, _guard) = match &resolved {
        sealed::Resolved::Host(buf, levels) => {
            let (ptr, guard) = buf.device_ptr(gpu.stream());
            (ptr, buf.len(), *levels, Some(guard))
        }
        // As many levels as a segment of all the keys would need.
        sealed::Resolved::Device(arg) => (arg.ptr, arg.len, segment_levels(0, n, stride, small), None),
    };
    // The levels launched one by one (each a search and a merge kernel, the fastest merges but
    // CTAs that cost even where the level turns out empty): all with host offsets; with device
    // offsets, those a segment of twice the mean length needs. The levels past them, needed
    // only by longer segments if any, run in the launch that also copies back.
    let launched_levels = match &resolved {
        sealed::Resolved::Host(..) => levels,
        sealed::Resolved::Device(arg) => {
            let mean = n / arg.len.saturating_sub(1).max(1);
            segment_levels(0, mean.saturating_mul(2).min(n), stride, small).min(levels)
        }
    };
    check_segment_count(offsets_len)?;
    if offsets_len < 2 || n == 0 {
        return Ok(());
    }
    let segments = KernelArg::I64(offsets_len as i64 - 1);
    let tiles = n.div_ceil(stride);
    let grid = grid_ctas(tiles, "segmented sort grid")?;
    let too_large = || Error::TooLarge { what: "segmented sort length" };
    let count = KernelArg::I64(i64::try_from(n).map_err(|_| too_large())?);
    let (stride_arg, small_arg) = (KernelArg::I64(stride as i64), KernelArg::I64(small as i64));

    // Temp: the tile starts (3 i64 each, one more than the tiles), the tiles' jobs (3 i64
    // each), the level count (an i32) and the merge levels' progress counters (an u64 and 128
    // u32, `mergepath::segmented_levels_progress`), the tiles' kinds (a byte each), then, where
    // there are levels, the level's merges (two of 5 i64 per tile), keys and values.
    const PROGRESS_AT: usize = 256;
    const KINDS_AT: usize = PROGRESS_AT + 1024;
    let round = |b: usize| b.div_ceil(256) * 256;
    let (bounds_bytes, jobs_bytes, levels_bytes) = (round((tiles + 1) * 24), round(tiles * 24), KINDS_AT + round(tiles));
    let (merges_bytes, tmp_keys_bytes, tmp_values_bytes) = if levels > 0 {
        (round(tiles * 80), round(n * key_bytes), values.map_or(0, |(_, w)| round(n * w)))
    } else {
        (0, 0, 0)
    };
    let mut temp = gpu.temp(bounds_bytes + jobs_bytes + levels_bytes + merges_bytes + tmp_keys_bytes + tmp_values_bytes)?;
    let (base, _temp_guard) = temp.device_ptr_mut();
    let jobs = base + bounds_bytes as u64;
    let max_levels = jobs + jobs_bytes as u64;
    let merges = max_levels + levels_bytes as u64;
    let (tmp_keys, tmp_values) = (merges + merges_bytes as u64, merges + (merges_bytes + tmp_keys_bytes) as u64);
    let (offsets_arg, bounds_arg, jobs_arg, levels_arg, progress_arg, kinds_arg) = (
        KernelArg::Ptr(offsets_ptr),
        KernelArg::Ptr(base),
        KernelArg::Ptr(jobs),
        KernelArg::Ptr(max_levels),
        KernelArg::Ptr(max_levels + PROGRESS_AT as u64),
        KernelArg::Ptr(max_levels + KINDS_AT as u64),
    );

    // The tile starts: a thread each.
    const BOUNDS_THREADS: u32 = 256;
    let bounds_cfg = LaunchConfig {
        grid_dim: (grid_ctas((tiles + 1).div_ceil(BOUNDS_THREADS as usize), "segmented sort grid")?, 1, 1),
        block_dim: (BOUNDS_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let args =
        [offsets_arg, segments, count, stride_arg, small_arg, KernelArg::I64(tiles as i64), bounds_arg, levels_arg, progress_arg];
    let func = kernels.function("mergepath_segmented_bounds")?;
    // SAFETY: matches `mergepath_segmented_bounds`; one thread per tile start (tiles + 1),
    // each writing its own bound (tiles + 1 of 24 bytes fit `bounds_bytes`), thread 0 the
    // level count and the first CTA the progress counters (520 bytes, inside the 1024 before
    // the kinds); the offsets are only read, `offsets_len` of them (segments clamped into
    // the keys by the kernel).
    unsafe { gpu.launch(&func, bounds_cfg, &args) }?;

    // The tiles inside one segment, the tiles of short pieces, then the others (marked in
    // `kinds` by the second launch): three launches over all the tiles.
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    for kind in ["one_", "", "items_"] {
        match values {
            None => {
                let args = [KernelArg::Ptr(keys), count, offsets_arg, segments, stride_arg, bounds_arg, kinds_arg, jobs_arg, levels_arg];
                let func = kernels.function(&format!("mergepath_segmented_blocksort_{kind}keys"))?;
                // SAFETY: matches `mergepath_segmented_blocksort_{one_,,items_}keys`; one CTA
                // per tile, each sorting the keys between its two bounds (at most stride +
                // small = the kernel's tile, from the same table row as `shape`) if the tile
                // is of the launch's kind, and writing its job and its kind (a byte each, in
                // `kinds`, written by the second launch before the third reads it).
                unsafe { gpu.launch(&func, cfg, &args) }?;
            }
            Some((vals, word)) => {
                let args = [
                    KernelArg::Ptr(keys), KernelArg::Ptr(vals), count, offsets_arg, segments, stride_arg, bounds_arg, kinds_arg,
                    jobs_arg, levels_arg,
                ];
                let func = kernels.for_values(&format!("mergepath_segmented_blocksort_{kind}pairs"), word)?;
                // SAFETY: as above for `mergepath_segmented_blocksort_{one_,,items_}pairs_{4,8,16}`;
                // the values have the keys' length and the word alignment.
                unsafe { gpu.launch(&func, cfg, &args) }?;
            }
        }
    }
    if levels == 0 {
        return Ok(());
    }
    // Level k reads where level k - 1 wrote: the keys for even k, the temporary buffer for odd.
    let buffer = |level: u32| if level % 2 == 0 { (keys, values.map(|(v, _)| v)) } else { (tmp_keys, values.map(|_| tmp_values)) };
    let splits_cfg = LaunchConfig {
        grid_dim: (grid_ctas((2 * tiles).div_ceil(BOUNDS_THREADS as usize), "segmented sort grid")?, 1, 1),
        ..bounds_cfg
    };
    let merge_cfg = LaunchConfig { grid_dim: (grid_ctas(2 * tiles, "segmented sort grid")?, 1, 1), ..cfg };
    for level in 0..launched_levels {
        let ((src_k, src_v), (dst_k, dst_v)) = (buffer(level), buffer(level + 1));
        let level_arg = KernelArg::I64(level as i64);
        let args = [KernelArg::Ptr(src_k), count, offsets_arg, stride_arg, small_arg, jobs_arg, levels_arg, level_arg, KernelArg::Ptr(merges)];
        let func = kernels.function("mergepath_segmented_level_splits")?;
        // SAFETY: matches `mergepath_segmented_level_splits`; one thread per (tile, job),
        // 2 * tiles in all, each writing its own merge (two of 40 bytes per tile fit
        // `merges_bytes`); reads the n keys where the previous level wrote them.
        unsafe { gpu.launch(&func, splits_cfg, &args) }?;
        let mut args = vec![KernelArg::Ptr(src_k)];
        args.extend(src_v.map(KernelArg::Ptr));
        args.extend([levels_arg, level_arg, KernelArg::Ptr(merges), KernelArg::Ptr(dst_k)]);
        args.extend(dst_v.map(KernelArg::Ptr));
        let func = match values {
            None => kernels.function("mergepath_segmented_merge_keys")?,
            Some((_, word)) => kernels.for_values("mergepath_segmented_merge_pairs", word)?,
        };
        // SAFETY: matches `mergepath_segmented_merge_{keys,pairs_4,8,16}` (keys in, [values
        // in], level count, level, merges, keys out, [values out]): one CTA per merge just
        // written, each inside its tile; both buffers hold n keys (and n values of `word`
        // bytes) at the same positions.
        unsafe { gpu.launch(&func, merge_cfg, &args) }?;
    }
    // The levels from `launched_levels` on and the copy back: one launch of the CTAs that fit
    // the device at once, taking work items in order (any number of CTAs is correct; this many
    // keeps all busy).
    let func = match values {
        None => kernels.function("mergepath_segmented_levels_keys")?,
        Some((_, word)) => kernels.for_values("mergepath_segmented_levels_pairs", word)?,
    };
    let per_sm = func.occupancy_max_active_blocks_per_multiprocessor(shape.threads, 0, None)?.max(1);
    let sms = gpu.context().attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let levels_cfg = LaunchConfig { grid_dim: (grid.min(per_sm.saturating_mul(sms.max(1) as u32)), 1, 1), ..cfg };
    let mut args = vec![KernelArg::Ptr(keys)];
    args.extend(values.map(|(v, _)| KernelArg::Ptr(v)));
    args.push(KernelArg::Ptr(tmp_keys));
    args.extend(values.map(|_| KernelArg::Ptr(tmp_values)));
    args.extend([count, offsets_arg, stride_arg, jobs_arg, levels_arg, KernelArg::I64(launched_levels as i64)]);
    args.extend([KernelArg::Ptr(merges), progress_arg]);
    // SAFETY: matches `mergepath_segmented_levels_{keys,pairs_4,8,16}` (keys, [values],
    // temporary keys, [temporary values], count, offsets, stride, jobs, level count, first
    // level, merges, progress): both buffers hold n keys (and n values of `word` bytes) at
    // the same positions, the merges two of 40 bytes per tile (`merges_bytes`), and every merge
    // writes inside its tile; the progress counters were zeroed by the bounds launch on this
    // stream, and the levels before the first were launched before this.
    unsafe { gpu.launch(&func, levels_cfg, &args) }?;
    Ok(())
}

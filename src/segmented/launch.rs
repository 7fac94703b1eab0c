//! The launches of a segmented sort: tile starts, tile sorts, merge levels, copy back.

use super::offsets::{sealed, SegmentOffsets};
use super::plan::{check_segment_count, segment_geometry, segment_levels};
use crate::error::{Error, Result};
use crate::device::contract::{
    SegmentBound, SegmentMerge, SegmentTileJobs, SegmentedBlocksortKeysParams, SegmentedBlocksortPairsParams, SegmentedBoundsParams, SegmentedLevelSplitsParams,
    SegmentedLevelsKeysParams, SegmentedLevelsPairsParams, SegmentedLevelsProgress, SegmentedMergeKeysParams, SegmentedMergePairsParams, SEGMENTED_MAX_LEVELS,
};
use crate::device::launch::grid_ctas;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::key::{Comparator, Key};
use crate::tuning::{sort_pairs_shape, sort_shape};
use cudarc::driver::{DevicePtr, LaunchConfig};
use std::mem::size_of;

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
        sealed::Resolved::Temp(ptr, len) => (*ptr, *len, segment_levels(0, n, stride, small), None),
    };
    // The levels launched one by one (each a search and a merge kernel, the fastest merges but
    // CTAs that cost even where the level turns out empty): all with host offsets; with device
    // offsets, those a segment of twice the mean length needs. The levels past them, needed
    // only by longer segments if any, run in the launch that also copies back.
    let launched_levels = match &resolved {
        sealed::Resolved::Host(..) => levels,
        sealed::Resolved::Device(_) | sealed::Resolved::Temp(..) => {
            let mean = n / offsets_len.saturating_sub(1).max(1);
            segment_levels(0, mean.saturating_mul(2).min(n), stride, small).min(levels)
        }
    };
    check_segment_count(offsets_len)?;
    debug_assert!(levels as usize <= SEGMENTED_MAX_LEVELS, "the progress counters have room for SEGMENTED_MAX_LEVELS levels");
    if offsets_len < 2 || n == 0 {
        return Ok(());
    }
    let num_segments = offsets_len as i64 - 1;
    let tiles = n.div_ceil(stride);
    let grid = grid_ctas(tiles, "segmented sort grid")?;
    let count = i64::try_from(n).map_err(|_| Error::TooLarge { what: "segmented sort length" })?;
    let (stride_arg, small_arg) = (stride as i64, small as i64);

    // Temp: the tile starts (one more than the tiles), the tiles' jobs, the level count, the
    // merge levels' progress counters, the tiles' kinds (a byte each), then, where there are
    // levels, the level's merges (two per tile), keys and values.
    let mut layout = TempLayout::default();
    let bounds_at = layout.region((tiles + 1) * size_of::<SegmentBound>());
    let jobs_at = layout.region(tiles * size_of::<SegmentTileJobs>());
    let max_levels_at = layout.region(size_of::<i32>());
    let progress_at = layout.region(size_of::<SegmentedLevelsProgress>());
    let kinds_at = layout.region(tiles);
    let (merges_at, tmp_keys_at, tmp_values_at) = if levels > 0 {
        (layout.region(2 * tiles * size_of::<SegmentMerge>()), layout.region(n * key_bytes), layout.region(values.map_or(0, |(_, w)| n * w)))
    } else {
        (0, 0, 0)
    };
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _temp_guard) = temp.device_ptr_mut();
    let at = |offset: usize| base + offset as u64;
    let (bounds, jobs, max_levels, progress, kinds) = (at(bounds_at), at(jobs_at), at(max_levels_at), at(progress_at), at(kinds_at));
    let (merges, tmp_keys, tmp_values) = (at(merges_at), at(tmp_keys_at), at(tmp_values_at));

    // The tile starts: a thread each.
    const BOUNDS_THREADS: u32 = 256;
    let bounds_cfg = LaunchConfig {
        grid_dim: (grid_ctas((tiles + 1).div_ceil(BOUNDS_THREADS as usize), "segmented sort grid")?, 1, 1),
        block_dim: (BOUNDS_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let params = SegmentedBoundsParams {
        offsets: offsets_ptr,
        num_segments,
        count,
        stride: stride_arg,
        small: small_arg,
        num_tiles: tiles as i64,
        bounds,
        max_levels,
        progress,
    };
    let func = kernels.function("mergepath_segmented_bounds")?;
    // SAFETY: `SegmentedBoundsParams` is `mergepath_segmented_bounds`'s parameter struct; one
    // thread per tile start (tiles + 1), each writing its own bound (tiles + 1 fit their
    // region), thread 0 the level count and the first CTA the progress counters (each in its
    // region); the offsets are only read, `offsets_len` of them (segments clamped into the keys
    // by the kernel).
    unsafe { gpu.launch(&func, bounds_cfg, &params) }?;

    // The tiles inside one segment, the tiles of short pieces, then the others (marked in
    // `kinds` by the second launch): three launches over all the tiles.
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    for kind in ["one_", "", "items_"] {
        match values {
            None => {
                let params = SegmentedBlocksortKeysParams { keys, count, offsets: offsets_ptr, num_segments, stride: stride_arg, bounds, kinds, jobs, max_levels };
                let func = kernels.function(&format!("mergepath_segmented_blocksort_{kind}keys"))?;
                // SAFETY: `SegmentedBlocksortKeysParams` is the parameter struct of
                // `mergepath_segmented_blocksort_{one_,,items_}keys`; one CTA per tile, each
                // sorting the keys between its two bounds (at most stride + small = the kernel's
                // tile, from the same table row as `shape`) if the tile is of the launch's kind,
                // and writing its job and its kind (a byte each, in `kinds`, written by the
                // second launch before the third reads it).
                unsafe { gpu.launch(&func, cfg, &params) }?;
            }
            Some((vals, word)) => {
                let params = SegmentedBlocksortPairsParams {
                    keys,
                    values: vals,
                    count,
                    offsets: offsets_ptr,
                    num_segments,
                    stride: stride_arg,
                    bounds,
                    kinds,
                    jobs,
                    max_levels,
                };
                let func = kernels.for_values(&format!("mergepath_segmented_blocksort_{kind}pairs"), word)?;
                // SAFETY: as above for `mergepath_segmented_blocksort_{one_,,items_}pairs_{4,8,16}`
                // (`SegmentedBlocksortPairsParams`); the values have the keys' length and the
                // word alignment.
                unsafe { gpu.launch(&func, cfg, &params) }?;
            }
        }
    }
    if levels == 0 {
        return Ok(());
    }
    // Level k reads where level k - 1 wrote: the keys for even k, the temporary buffer for odd.
    let buffer = |level: u32| if level.is_multiple_of(2) { (keys, values.map(|(v, _)| v)) } else { (tmp_keys, values.map(|_| tmp_values)) };
    let splits_cfg = LaunchConfig {
        grid_dim: (grid_ctas((2 * tiles).div_ceil(BOUNDS_THREADS as usize), "segmented sort grid")?, 1, 1),
        ..bounds_cfg
    };
    let merge_cfg = LaunchConfig { grid_dim: (grid_ctas(2 * tiles, "segmented sort grid")?, 1, 1), ..cfg };
    for level in 0..launched_levels {
        let ((src_k, src_v), (dst_k, dst_v)) = (buffer(level), buffer(level + 1));
        let level = i64::from(level);
        let params = SegmentedLevelSplitsParams { keys: src_k, count, offsets: offsets_ptr, stride: stride_arg, small: small_arg, jobs, max_levels, level, merges };
        let func = kernels.function("mergepath_segmented_level_splits")?;
        // SAFETY: `SegmentedLevelSplitsParams` is `mergepath_segmented_level_splits`'s parameter
        // struct; one thread per (tile, job), 2 * tiles in all, each writing its own merge (two
        // per tile fit their region); reads the n keys where the previous level wrote them.
        unsafe { gpu.launch(&func, splits_cfg, &params) }?;
        match values {
            None => {
                let params = SegmentedMergeKeysParams { keys_in: src_k, max_levels, level, merges, keys_out: dst_k };
                let func = kernels.function("mergepath_segmented_merge_keys")?;
                // SAFETY: `SegmentedMergeKeysParams` is `mergepath_segmented_merge_keys`'s
                // parameter struct: one CTA per merge just written, each inside its tile; both
                // buffers hold n keys at the same positions.
                unsafe { gpu.launch(&func, merge_cfg, &params) }?;
            }
            Some((_, word)) => {
                let params = SegmentedMergePairsParams {
                    keys_in: src_k,
                    values_in: src_v.unwrap(),
                    max_levels,
                    level,
                    merges,
                    keys_out: dst_k,
                    values_out: dst_v.unwrap(),
                };
                let func = kernels.for_values("mergepath_segmented_merge_pairs", word)?;
                // SAFETY: as above for `mergepath_segmented_merge_pairs_{4,8,16}`
                // (`SegmentedMergePairsParams`), with n values of `word` bytes in both buffers.
                unsafe { gpu.launch(&func, merge_cfg, &params) }?;
            }
        }
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
    let first_level = i64::from(launched_levels);
    // SAFETY (both arms): the parameter struct of `mergepath_segmented_levels_{keys,pairs_4,8,16}`;
    // both buffers hold n keys (and n values of `word` bytes) at the same positions, the
    // merges two per tile (their region), and every merge writes inside its tile; the progress
    // counters were zeroed by the bounds launch on this stream, and the levels before the first
    // were launched before this.
    match values {
        None => {
            let params = SegmentedLevelsKeysParams { keys, tmp_keys, count, offsets: offsets_ptr, stride: stride_arg, jobs, max_levels, first_level, merges, progress };
            // SAFETY: see above (`SegmentedLevelsKeysParams`).
            unsafe { gpu.launch(&func, levels_cfg, &params) }?;
        }
        Some((vals, _)) => {
            let params = SegmentedLevelsPairsParams {
                keys,
                values: vals,
                tmp_keys,
                tmp_values,
                count,
                offsets: offsets_ptr,
                stride: stride_arg,
                jobs,
                max_levels,
                first_level,
                merges,
                progress,
            };
            // SAFETY: see above (`SegmentedLevelsPairsParams`).
            unsafe { gpu.launch(&func, levels_cfg, &params) }?;
        }
    }
    Ok(())
}

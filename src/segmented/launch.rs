//! The launches of a segmented sort: tile starts, tile sorts, merge levels, copy back.

use super::offsets::{sealed, SegmentOffsets};
use super::plan::{check_segment_count, segment_geometry, segment_levels};
use crate::error::{Error, Result};
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{Comparator, Key};
use crate::tuning::{sort_pairs_shape, sort_shape};
use cudarc::driver::{DevicePtr, LaunchConfig};

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

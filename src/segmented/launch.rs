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
use crate::device::kernels::{Entry, Kernels};
use crate::device::Gpu;
use crate::key::{Comparator, Key};
use crate::tuning::{sort_pairs_shape, sort_shape, LaunchShape};
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
    launch_segmented_with(gpu, &*gpu.kernels::<K, C>()?, std::mem::size_of::<K>(), keys, values, n, offsets)
}

/// [`launch_segmented`] by the kernels of `kernels`, whose keys are `key_bytes` wide.
pub(crate) fn launch_segmented_with<O: SegmentOffsets + ?Sized>(
    gpu: &Gpu,
    kernels: &Kernels,
    key_bytes: usize,
    keys: u64,
    values: Option<(u64, usize)>,
    n: usize,
    offsets: &O,
) -> Result<()> {
    let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
    let (stride, small) = segment_geometry(shape.tile());
    let resolved = offsets.resolve(gpu, kernels, n, (stride, small))?;
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
    // CTAs that cost even where the level turns out empty): those a segment of twice the mean
    // length needs. The levels past them, needed only by longer segments if any, run in the
    // launch that also copies back.
    let mean = n / offsets_len.saturating_sub(1).max(1);
    // At its worst alignment: starting just before a tile start, so one piece more.
    let launched_levels = segment_levels(stride - 1, stride - 1 + mean.saturating_mul(2).min(n), stride, small).min(levels);
    check_segment_count(offsets_len)?;
    debug_assert!(levels as usize <= SEGMENTED_MAX_LEVELS, "the progress counters have room for SEGMENTED_MAX_LEVELS levels");
    if offsets_len < 2 || n == 0 {
        return Ok(());
    }
    let tiles = n.div_ceil(stride);
    let (layout, regions) = SegmentedTemp::regions(tiles, n, key_bytes, values.map_or(0, |(_, w)| w), levels > 0);
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _temp_guard) = temp.device_ptr_mut();
    let sort = SegmentedLaunch {
        gpu,
        kernels,
        shape,
        keys,
        values,
        count: i64::try_from(n).map_err(|_| Error::TooLarge { what: "segmented sort length" })?,
        offsets: offsets_ptr,
        num_segments: offsets_len as i64 - 1,
        stride: stride as i64,
        small: small as i64,
        tiles,
        grid: grid_ctas(tiles, "segmented sort grid")?,
        temp: SegmentedTemp::at(base, regions),
    };
    sort.tile_starts()?;
    sort.tile_sorts()?;
    if levels == 0 {
        return Ok(());
    }
    for level in 0..launched_levels {
        sort.level(level)?;
    }
    sort.later_levels(launched_levels)
}

/// Where a segmented sort's temporaries live: the tile starts (one more than the tiles), the
/// tiles' jobs, the level count, the merge levels' progress counters, the tiles' kinds (a byte
/// each), then, where there are levels, the level's merges (two per tile), keys and values.
struct SegmentedTemp {
    bounds: u64,
    jobs: u64,
    max_levels: u64,
    progress: u64,
    kinds: u64,
    merges: u64,
    tmp_keys: u64,
    tmp_values: u64,
}

impl SegmentedTemp {
    /// The layout, and each region's offset (in the field order; 0 for the level regions
    /// without levels).
    fn regions(tiles: usize, n: usize, key_bytes: usize, word: usize, levels: bool) -> (TempLayout, [usize; 8]) {
        let mut layout = TempLayout::default();
        let mut at = [0; 8];
        let sizes = [(tiles + 1) * size_of::<SegmentBound>(), tiles * size_of::<SegmentTileJobs>(), size_of::<i32>(), size_of::<SegmentedLevelsProgress>(), tiles];
        for (i, bytes) in sizes.into_iter().enumerate() {
            at[i] = layout.region(bytes);
        }
        if levels {
            for (i, bytes) in [2 * tiles * size_of::<SegmentMerge>(), n * key_bytes, n * word].into_iter().enumerate() {
                at[5 + i] = layout.region(bytes);
            }
        }
        (layout, at)
    }

    /// The regions in the temporary buffer at `base`, at the offsets of [`SegmentedTemp::regions`].
    fn at(base: u64, regions: [usize; 8]) -> Self {
        let at = regions.map(|offset| base + offset as u64);
        SegmentedTemp { bounds: at[0], jobs: at[1], max_levels: at[2], progress: at[3], kinds: at[4], merges: at[5], tmp_keys: at[6], tmp_values: at[7] }
    }
}

type KeysTileSort = fn(&Kernels) -> Result<Entry<SegmentedBlocksortKeysParams>>;
type PairsTileSort = fn(&Kernels, usize) -> Result<Entry<SegmentedBlocksortPairsParams>>;

/// The tile sorts' entry points, in launch order: tiles inside one segment, tiles of short
/// pieces, the others (keys alone, and pairs by value word).
const TILE_SORTS: [(KeysTileSort, PairsTileSort); 3] = [
    (Kernels::segmented_blocksort_one_keys, Kernels::segmented_blocksort_one_pairs),
    (Kernels::segmented_blocksort_keys, Kernels::segmented_blocksort_pairs),
    (Kernels::segmented_blocksort_items_keys, Kernels::segmented_blocksort_items_pairs),
];

/// Threads per CTA of the kernels with a thread per tile start or per (tile, job).
const BOUNDS_THREADS: u32 = 256;

/// One segmented sort's geometry and buffers, and its launches.
struct SegmentedLaunch<'a> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    shape: LaunchShape,
    keys: u64,
    values: Option<(u64, usize)>,
    count: i64,
    offsets: u64,
    num_segments: i64,
    stride: i64,
    small: i64,
    tiles: usize,
    grid: u32,
    temp: SegmentedTemp,
}

impl SegmentedLaunch<'_> {
    /// `threads` threads per CTA over `ctas` CTAs.
    fn config(ctas: u32, threads: u32) -> LaunchConfig {
        LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
    }

    /// A thread per item of `items`.
    fn per_thread(items: usize) -> Result<LaunchConfig> {
        Ok(Self::config(grid_ctas(items.div_ceil(BOUNDS_THREADS as usize), "segmented sort grid")?, BOUNDS_THREADS))
    }

    /// The tile starts, the level count and the progress counters: a thread per tile start.
    fn tile_starts(&self) -> Result<()> {
        let t = &self.temp;
        let params = SegmentedBoundsParams {
            offsets: self.offsets,
            num_segments: self.num_segments,
            count: self.count,
            stride: self.stride,
            small: self.small,
            num_tiles: self.tiles as i64,
            bounds: t.bounds,
            max_levels: t.max_levels,
            progress: t.progress,
        };
        let func = self.kernels.segmented_bounds()?;
        // SAFETY: `SegmentedBoundsParams` is `mergepath_segmented_bounds`'s parameter struct; one
        // thread per tile start (tiles + 1), each writing its own bound (tiles + 1 fit their
        // region), thread 0 the level count and the first CTA the progress counters (each in its
        // region); the offsets are only read, `num_segments + 1` of them (segments clamped into
        // the keys by the kernel).
        unsafe { self.gpu.launch(&func, Self::per_thread(self.tiles + 1)?, &params) }
    }

    /// The tiles inside one segment, the tiles of short pieces, then the others (marked in
    /// `kinds` by the second launch): three launches over all the tiles.
    fn tile_sorts(&self) -> Result<()> {
        let (t, cfg) = (&self.temp, Self::config(self.grid, self.shape.threads));
        let (keys, count, offsets, num_segments, stride) = (self.keys, self.count, self.offsets, self.num_segments, self.stride);
        for (keys_entry, pairs_entry) in TILE_SORTS {
            let Some((values, word)) = self.values else {
                let params = SegmentedBlocksortKeysParams { keys, count, offsets, num_segments, stride, bounds: t.bounds, kinds: t.kinds, jobs: t.jobs, max_levels: t.max_levels };
                let func = keys_entry(self.kernels)?;
                // SAFETY: `SegmentedBlocksortKeysParams` is the parameter struct of
                // `mergepath_segmented_blocksort_{one_,,items_}keys`; one CTA per tile, each
                // sorting the keys between its two bounds (at most stride + small = the kernel's
                // tile, from the same table row as `shape`) if the tile is of the launch's kind,
                // and writing its job and its kind (a byte each, in `kinds`, written by the
                // second launch before the third reads it).
                unsafe { self.gpu.launch(&func, cfg, &params) }?;
                continue;
            };
            let params = SegmentedBlocksortPairsParams { keys, values, count, offsets, num_segments, stride, bounds: t.bounds, kinds: t.kinds, jobs: t.jobs, max_levels: t.max_levels };
            let func = pairs_entry(self.kernels, word)?;
            // SAFETY: as above for `mergepath_segmented_blocksort_{one_,,items_}pairs_{4,8,16}`
            // (`SegmentedBlocksortPairsParams`); the values have the keys' length and the word
            // alignment.
            unsafe { self.gpu.launch(&func, cfg, &params) }?;
        }
        Ok(())
    }

    /// Where level `level` reads (and level `level - 1` wrote): the keys and values for even
    /// levels, the temporary buffers for odd.
    fn buffer(&self, level: u32) -> (u64, Option<u64>) {
        if level.is_multiple_of(2) {
            (self.keys, self.values.map(|(v, _)| v))
        } else {
            (self.temp.tmp_keys, self.values.map(|_| self.temp.tmp_values))
        }
    }

    /// Merge level `level` launched on its own: its merges' splits, a thread per (tile, job),
    /// then a CTA per merge.
    fn level(&self, level: u32) -> Result<()> {
        let ((src_k, src_v), (dst_k, dst_v)) = (self.buffer(level), self.buffer(level + 1));
        let (t, level) = (&self.temp, i64::from(level));
        let params = SegmentedLevelSplitsParams { keys: src_k, count: self.count, offsets: self.offsets, stride: self.stride, small: self.small, jobs: t.jobs, max_levels: t.max_levels, level, merges: t.merges };
        let func = self.kernels.segmented_level_splits()?;
        // SAFETY: `SegmentedLevelSplitsParams` is `mergepath_segmented_level_splits`'s parameter
        // struct; one thread per (tile, job), 2 * tiles in all, each writing its own merge (two
        // per tile fit their region); reads the n keys where the previous level wrote them.
        unsafe { self.gpu.launch(&func, Self::per_thread(2 * self.tiles)?, &params) }?;
        let merge_cfg = Self::config(grid_ctas(2 * self.tiles, "segmented sort grid")?, self.shape.threads);
        let Some((_, word)) = self.values else {
            let params = SegmentedMergeKeysParams { keys_in: src_k, max_levels: t.max_levels, level, merges: t.merges, keys_out: dst_k };
            let func = self.kernels.segmented_merge_keys()?;
            // SAFETY: `SegmentedMergeKeysParams` is `mergepath_segmented_merge_keys`'s parameter
            // struct: one CTA per merge just written, each inside its tile; both buffers hold n
            // keys at the same positions.
            return unsafe { self.gpu.launch(&func, merge_cfg, &params) };
        };
        let (values_in, values_out) = (src_v.unwrap(), dst_v.unwrap());
        let params = SegmentedMergePairsParams { keys_in: src_k, values_in, max_levels: t.max_levels, level, merges: t.merges, keys_out: dst_k, values_out };
        let func = self.kernels.segmented_merge_pairs(word)?;
        // SAFETY: as above for `mergepath_segmented_merge_pairs_{4,8,16}`
        // (`SegmentedMergePairsParams`), with n values of `word` bytes in both buffers.
        unsafe { self.gpu.launch(&func, merge_cfg, &params) }
    }

    /// The levels from `first` on and the copy back: one launch of the CTAs that fit the device
    /// at once, taking work items in order (any number of CTAs is correct; this many keeps all
    /// busy).
    fn later_levels(&self, first: u32) -> Result<()> {
        let (t, first_level) = (&self.temp, i64::from(first));
        let (keys, count, offsets, stride) = (self.keys, self.count, self.offsets, self.stride);
        // SAFETY (both launches): both buffers hold n keys (and n values of `word` bytes) at the
        // same positions, the merges two per tile (their region), and every merge writes inside
        // its tile; the progress counters were zeroed by the tile starts' launch on this stream,
        // and the levels before `first` were launched before this.
        let Some((values, word)) = self.values else {
            let func = self.kernels.segmented_levels_keys()?;
            let params = SegmentedLevelsKeysParams { keys, tmp_keys: t.tmp_keys, count, offsets, stride, jobs: t.jobs, max_levels: t.max_levels, first_level, merges: t.merges, progress: t.progress };
            // SAFETY: see above.
            return unsafe { self.gpu.launch(&func, self.resident_config(&func)?, &params) };
        };
        let func = self.kernels.segmented_levels_pairs(word)?;
        let params = SegmentedLevelsPairsParams {
            keys,
            values,
            tmp_keys: t.tmp_keys,
            tmp_values: t.tmp_values,
            count,
            offsets,
            stride,
            jobs: t.jobs,
            max_levels: t.max_levels,
            first_level,
            merges: t.merges,
            progress: t.progress,
        };
        // SAFETY: see above.
        unsafe { self.gpu.launch(&func, self.resident_config(&func)?, &params) }
    }

    /// As many CTAs of `entry` as fit the device at once (at most one per tile).
    fn resident_config<P>(&self, entry: &Entry<P>) -> Result<LaunchConfig> {
        let per_sm = entry.function.occupancy_max_active_blocks_per_multiprocessor(self.shape.threads, 0, None)?.max(1);
        let sms = self.gpu.context().attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        Ok(Self::config(self.grid.min(per_sm.saturating_mul(sms.max(1) as u32)), self.shape.threads))
    }
}

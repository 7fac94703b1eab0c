//! The launches of a multiway merge in four-way passes ([`super::plan`]): the sort's four-way
//! kernels (coarse boundaries, tile splits, merge tiles guarded) over the host's table of frames, the
//! first pass reading the inputs where they are, the passes writing a temporary buffer and the
//! output in turn so that the last writes the output; then the guard's fallback.

use super::plan::{multiway_passes, MultiwayPass};
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{
    MultiwayFallbackParams, Sort4BoundariesParams, Sort4Frame, Sort4TileSplitsParams, SortMergeKeysParams, SortMergePairsParams, Split4,
};
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, merge_fallback_config};
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Key;
use crate::partition::launch::partition_launch_config;
use crate::tuning::{four_way_boundary_lanes, four_way_tile_split_lanes, sort_pairs_shape, sort_shape};
use crate::device::kernels::Entry;
use cudarc::driver::{CudaSlice, LaunchConfig};

/// Merges validated `keys` (and `values` of `word` bytes) into `out` (and `out_values`), which
/// hold their total, in four-way passes. Takes temporary device memory for the total's keys
/// and values (where there is more than one pass) and the passes' splits.
pub(crate) fn launch_passes<K: Key>(
    gpu: &Gpu,
    kernels: &Kernels,
    keys: &[CheckedBuffer<'_>],
    values: Option<(&[CheckedBuffer<'_>], usize)>,
    out: u64,
    out_values: Option<u64>,
) -> Result<()> {
    let key_bytes = std::mem::size_of::<K>();
    let word = values.map_or(0, |(_, w)| w);
    let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
    let spacing = shape.tile();
    // Empty inputs take no part (stability is among the items of the others, kept in order).
    let runs: Vec<&CheckedBuffer<'_>> = keys.iter().filter(|b| b.len > 0).collect();
    let run_values: Vec<u64> = keys.iter().enumerate().filter(|(_, b)| b.len > 0).map(|(t, _)| values.map_or(0, |(v, _)| v[t].ptr)).collect();
    let lengths: Vec<usize> = runs.iter().map(|b| b.len).collect();
    let total: usize = lengths.iter().sum();
    if total == 0 {
        return Ok(());
    }
    let plan = multiway_passes(&lengths, spacing);
    let passes = plan.len();
    let splits_len = plan.iter().map(|p| p.boundaries + p.tiles).max().unwrap_or(0);
    let between = if passes > 1 { total } else { 0 };
    let mut layout = TempLayout::default();
    let (keys_at, values_at, splits_at) = (layout.region(between * key_bytes), layout.region(between * word), layout.region(splits_len * std::mem::size_of::<Split4>()));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _sync) = temp.device_ptr_mut();
    // Pass j's output: the output where passes - 1 - j is even, so the last pass writes it.
    let stage = |j: usize| {
        if (passes - 1 - j).is_multiple_of(2) {
            (out, out_values.unwrap_or(0))
        } else {
            (base + keys_at as u64, base + values_at as u64)
        }
    };
    // Run `run` of pass j: an input, or frame `run` of pass j - 1's output.
    let run_at = |j: usize, run: usize| -> (u64, u64) {
        if j == 0 {
            return (runs[run].ptr, run_values[run]);
        }
        let (k, v) = stage(j - 1);
        let begin = plan[j - 1].frames[run].out_begin as u64;
        (k + begin * key_bytes as u64, if word > 0 { v + begin * word as u64 } else { 0 })
    };
    let (bases, rows) = frame_rows(&plan, run_at);
    let table = gpu.upload_table(&rows)?;
    let mut frames = gpu.input("multiway frames", &table, 8)?.ptr;
    let fallback = Fallback::new(gpu, kernels, keys, values, key_bytes)?;
    // Every pass's grids checked before the first runs (see Fallback).
    for pass in &plan {
        grid_ctas(pass.tiles, "multiway pass grid")?;
        let (boundary_lanes, split_lanes) = search_lanes(pass);
        partition_launch_config((boundary_lanes * pass.boundaries).max(split_lanes * pass.tiles))?;
    }
    // Held until the fallback is enqueued: this call's tiles and fallback stay adjacent.
    let (guard, _guard_lock) = gpu.merge_guard()?;
    for (j, pass) in plan.iter().enumerate() {
        let splits = base + splits_at as u64;
        let (dst_keys, dst_values) = stage(j);
        let pass_frames = PassFrames { table: frames, bases: bases[j], pass, splits, spacing, total };
        launch_pass_splits(gpu, kernels, &pass_frames)?;
        launch_pass_merge(gpu, kernels, &pass_frames, shape.threads, values.map(|_| (word, dst_values)), dst_keys, guard)?;
        frames += (pass.frames.len() * std::mem::size_of::<Sort4Frame>()) as u64;
    }
    fallback.launch(gpu, kernels.arch, out, out_values, guard)
}

/// The passes' frame rows, pass after pass, with each pass's base addresses: the rows hold its
/// runs' addresses (`run_at(pass, run)`: keys, values) as byte offsets from its first run's,
/// which the kernels add to their `keys` and `values` parameters so their loads stay global.
fn frame_rows(plan: &[MultiwayPass], run_at: impl Fn(usize, usize) -> (u64, u64)) -> (Vec<(u64, u64)>, Vec<Sort4Frame>) {
    let bases: Vec<(u64, u64)> = (0..plan.len()).map(|j| run_at(j, 0)).collect();
    let mut rows = Vec::new();
    for (j, pass) in plan.iter().enumerate() {
        for f in &pass.frames {
            let mut row = Sort4Frame { keys: [0; 4], values: [0; 4], count: [0; 4], out_begin: f.out_begin as i64, first_boundary: f.first_boundary as i64, first_tile: f.first_tile as i64 };
            for r in (0..4).filter(|&r| f.count[r] > 0) {
                let (keys_at, values_at) = run_at(j, f.first_run + r);
                row.keys[r] = keys_at.wrapping_sub(bases[j].0);
                row.values[r] = values_at.wrapping_sub(bases[j].1);
                row.count[r] = f.count[r] as i64;
            }
            rows.push(row);
        }
    }
    (bases, rows)
}

/// One pass's frames and split buffer on the device.
struct PassFrames<'a> {
    /// The device address of its frames' rows.
    table: u64,
    /// The addresses its rows' keys and values are offsets from.
    bases: (u64, u64),
    pass: &'a MultiwayPass,
    /// Its coarse boundaries, then its tiles' splits.
    splits: u64,
    spacing: usize,
    total: usize,
}

impl PassFrames<'_> {
    /// The tiles' splits, after the coarse boundaries.
    fn tile_splits(&self) -> u64 {
        self.splits + (self.pass.boundaries * std::mem::size_of::<Split4>()) as u64
    }
}

/// A pass's coarse boundaries, then its tiles' exact splits.
fn launch_pass_splits(gpu: &Gpu, kernels: &Kernels, p: &PassFrames<'_>) -> Result<()> {
    let (count, spacing, frames, num_frames) = (p.total as i64, p.spacing as i64, p.table, p.pass.frames.len() as i64);
    let (boundary_lanes, split_lanes) = search_lanes(p.pass);
    let params = Sort4BoundariesParams { keys: p.bases.0, count, spacing, run: 0, num_boundaries: p.pass.boundaries as i64, lanes: boundary_lanes as i32, splits: p.splits, frames, num_frames };
    let func = kernels.multiway4_boundaries()?;
    // SAFETY: `Sort4BoundariesParams` is `mergepath_multiway4_boundaries`'s parameter struct; the
    // table holds the pass's `num_frames` rows, whose runs are validated inputs or regions of the
    // pass before's output, and whose boundaries, counted as the kernel counts them, number
    // `boundaries`: the grid's groups of `boundary_lanes` threads (a power of two up to 32), and the
    // splits buffer's first rows.
    unsafe { gpu.launch(&func, partition_launch_config(boundary_lanes * p.pass.boundaries)?, &params) }?;
    let params = Sort4TileSplitsParams { keys: p.bases.0, count, spacing, tile: 2 * spacing, run: 0, coarse: p.splits, num_tiles: p.pass.tiles as i64, lanes: split_lanes as i32, splits: p.tile_splits(), frames, num_frames };
    let func = kernels.multiway4_tile_splits()?;
    // SAFETY: `Sort4TileSplitsParams` is `mergepath_multiway4_tile_splits`'s parameter struct; the
    // coarse boundaries were written just above for the same frames, the splits buffer holds
    // `tiles` more rows after them, and the grid covers `tiles` groups of `split_lanes` threads (a
    // power of two up to 32).
    unsafe { gpu.launch(&func, partition_launch_config(split_lanes * p.pass.tiles)?, &params) }
}

/// Threads per coarse boundary and per tile split of a pass.
fn search_lanes(pass: &MultiwayPass) -> (usize, usize) {
    (four_way_boundary_lanes(pass.boundaries), four_way_tile_split_lanes(pass.tiles))
}

/// A pass's merge tiles (CTAs of 2 * `threads`, the sort shape's four-way tiles), writing
/// `out` (and, with `values` = (word, address), the values), guarded.
fn launch_pass_merge(gpu: &Gpu, kernels: &Kernels, p: &PassFrames<'_>, threads: u32, values: Option<(usize, u64)>, out: u64, guard: u64) -> Result<()> {
    let cfg = LaunchConfig { grid_dim: (grid_ctas(p.pass.tiles, "multiway pass grid")?, 1, 1), block_dim: (2 * threads, 1, 1), shared_mem_bytes: 0 };
    let (count, partitions, frames, num_frames) = (p.total as i64, p.tile_splits(), p.table, p.pass.frames.len() as i64);
    match values {
        None => {
            let params = SortMergeKeysParams { input: p.bases.0, count, run: 0, partitions, out, frames, num_frames, guard };
            let func = kernels.multiway4_merge_keys()?;
            // SAFETY: `SortMergeKeysParams` is `mergepath_multiway4_merge_keys`'s parameter struct
            // (CTAs of twice the sort shape's threads); the frames' runs and the tiles' splits
            // are the pass's (above), `out` holds the total and overlaps no run of this pass,
            // and the guard is this handle's, zero between launches in its stream order.
            unsafe { gpu.launch(&func, cfg, &params) }
        }
        Some((word, out_vals)) => {
            let params = SortMergePairsParams { input: p.bases.0, input_vals: p.bases.1, count, run: 0, partitions, out, out_vals, frames, num_frames, guard };
            let func = kernels.multiway4_merge_pairs(word)?;
            // SAFETY: as above for `mergepath_multiway4_merge_pairs_{4,8,16}` (the sort_pairs shape),
            // the frames' value runs aligned to `word`, `out_vals` holding the total.
            unsafe { gpu.launch(&func, cfg, &params) }
        }
    }
}

/// The fallback after the last pass (where a tile reported unsorted inputs, the inputs one
/// after another over the output), made ready before any pass runs: once a tile may have
/// reported, nothing but the launches can fail before the fallback clears the guard.
struct Fallback {
    func: Entry<MultiwayFallbackParams>,
    addresses: CudaSlice<u64>,
    counts: CudaSlice<i64>,
    value_addresses: Option<CudaSlice<u64>>,
    key_bytes: usize,
    value_bytes: usize,
}

impl Fallback {
    /// The kernel and the tables of the inputs `keys` (and `values`).
    fn new(gpu: &Gpu, kernels: &Kernels, keys: &[CheckedBuffer<'_>], values: Option<(&[CheckedBuffer<'_>], usize)>, key_bytes: usize) -> Result<Self> {
        Ok(Fallback {
            func: kernels.multiway_fallback()?,
            addresses: gpu.upload_table(&keys.iter().map(|b| b.ptr).collect::<Vec<u64>>())?,
            counts: gpu.upload_table(&keys.iter().map(|b| b.len as i64).collect::<Vec<i64>>())?,
            value_addresses: values.map(|(v, _)| gpu.upload_table(&v.iter().map(|b| b.ptr).collect::<Vec<u64>>())).transpose()?,
            key_bytes,
            value_bytes: values.map_or(0, |(_, w)| w),
        })
    }

    fn launch(&self, gpu: &Gpu, arch: u32, out: u64, out_values: Option<u64>, guard: u64) -> Result<()> {
        let params = MultiwayFallbackParams {
            guard,
            inputs: gpu.input("multiway inputs", &self.addresses, 8)?.ptr,
            values: match &self.value_addresses {
                Some(table) => gpu.input("multiway values", table, 8)?.ptr,
                None => 0,
            },
            counts: gpu.input("multiway counts", &self.counts, 8)?.ptr,
            ways: self.counts.len() as i64,
            key_bytes: self.key_bytes as i64,
            value_bytes: self.value_bytes as i64,
            out,
            out_vals: out_values.unwrap_or(0),
        };
        // SAFETY: `MultiwayFallbackParams` is `mergepath_multiway_fallback`'s parameter struct;
        // the tables list the validated inputs (values null where there are none) and the
        // outputs hold their total; the kernel waits for the last pass and copies only where a
        // tile reported.
        unsafe { gpu.launch_dependent(&self.func, merge_fallback_config(), &params, arch) }
    }
}

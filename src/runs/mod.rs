//! Runs of equal keys: [`unique`] (the first key of each run), [`run_length_encode`] (each
//! run's key and length) and [`reduce_by_key`] (each run's key and its values folded), found in
//! one pass on the GPU.
//!
//! ```no_run
//! use mergepath::{Less, Reduction};
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = mergepath::Gpu::new(0)?;
//! let keys = gpu.upload(&[1u32, 1, 2, 5, 5, 5])?;
//! let values = gpu.upload(&[10u64, 20, 30, 40, 50, 60])?;
//! let (mut out_keys, mut sums) = (gpu.alloc_zeros::<u32>(6)?, gpu.alloc_zeros::<u64>(6)?);
//! let runs = mergepath::reduce_by_key(&gpu, &keys, &values, &mut out_keys, &mut sums, Reduction::Sum, Less, Less)?;
//! assert_eq!(runs, 3);
//! assert_eq!(gpu.download(&out_keys)?[..3], [1, 2, 5]);
//! assert_eq!(gpu.download(&sums)?[..3], [30, 30, 150]);
//! # Ok(())
//! # }
//! ```
//!
//! Semantics: a run is a maximal stretch of consecutive keys equal by the comparator (neither
//! orders before the other), as `slice::chunk_by` groups them; the keys need not be sorted
//! (on sorted keys the runs are the distinct keys). Each call returns the number of runs, and so
//! waits for the GPU to count them (not for its outputs, written in stream order as every
//! call's are); its outputs must hold that many items
//! ([`Error::OutputTooSmall`](crate::Error::OutputTooSmall) otherwise, with nothing written),
//! and what is past them is left as it is.
//!
//! How: one kernel over tiles of keys (staged in shared memory by one bulk copy) flags each
//! run's first key, counts the flags, and writes their positions compacted in order (a
//! single-pass scan of the tiles' counts, decoupled look-back), then the keys are gathered at
//! those positions and the lengths are their differences. A tile whose runs start at most at
//! one key in eight does not wait for the tiles before it to count: it leaves its runs in a
//! slot of its own, and a second kernel, once every tile has counted, moves them into place.
//! Where the outputs have room for a run per key, the kernel writes the runs' keys and lengths
//! itself as it finds them (the look-back also carrying the last run's start before each
//! tile). For reduce-by-key the same kernel writes the runs' boundaries as bits (a word for
//! each 32 keys, and the count before each word), and the values are reduced over them:
//! each lane of a warp folds a stretch of the values in a row, one segmented scan across the
//! warp joins the lanes' runs, and [`crate::segmented_reduce`]'s spine joins those that cross
//! tiles.

use crate::checks::{check_output, check_values};
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{RunsParams, PARTITION_THREADS, RUNS_DEFERRED_SHARE, RUNS_GROUP_TILES};
use crate::device::launch::grid_ctas;
use crate::device::Gpu;
use crate::error::Result;
use crate::gather::{launch_gather, position_bytes};
use crate::device::kernels::Kernels;
use crate::key::{Comparator, Key};
use crate::sort::with_comparable_keys;
use crate::reduce::{check_reduction, launch_segmented_reduce, Reduction, Segments};
use crate::tuning::{runs_shape, LaunchShape};
use crate::types::SortIndex;
use crate::device::temp::{Temp, TempLayout};
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};

/// Writes the first key of each run of equal keys of `keys` to `out` and returns the number of
/// runs (see the module's semantics; on sorted keys, the distinct keys). `out` must hold the
/// runs and not overlap `keys`. Waits for the GPU.
pub fn unique<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &impl DevicePtr<K>, out: &mut impl DevicePtrMut<K>, comp: C) -> Result<usize> {
    let _ = comp;
    let keys = gpu.input("keys", keys, K::DEVICE_ALIGN)?;
    let out = gpu.output("out", out, K::DEVICE_ALIGN, 0, &[&keys])?;
    runs_on::<K, C>(gpu, &keys, RunOutputs { keys: ("out", out.ptr, out.len), lengths: None, values: None })
}

/// Writes each run's first key to `out_keys` and its length to `lengths` (`u32` or `u64`;
/// `u32` lengths hold runs of up to 2^32 - 1 keys, [`Error::TooLarge`](crate::Error::TooLarge)
/// for more keys) and returns the number of runs. Outputs as [`unique`]'s.
pub fn run_length_encode<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &impl DevicePtr<K>,
    out_keys: &mut impl DevicePtrMut<K>,
    lengths: &mut impl DevicePtrMut<I>,
    comp: C,
) -> Result<usize> {
    let _ = comp;
    let keys = gpu.input("keys", keys, K::DEVICE_ALIGN)?;
    let out = gpu.output("out_keys", out_keys, K::DEVICE_ALIGN, 0, &[&keys])?;
    let lengths = gpu.output("lengths", lengths, std::mem::size_of::<I>(), 0, &[&keys, &out])?;
    check_lengths::<I>(keys.len)?;
    runs_on::<K, C>(gpu, &keys, RunOutputs { keys: ("out_keys", out.ptr, out.len), lengths: Some((lengths.ptr, lengths.len, std::mem::size_of::<I>())), values: None })
}

/// Writes each run's first key to `out_keys` and the fold of its values (`values`, one per
/// key) by `reduction` to `out_values`, and returns the number of runs. `value_order` orders
/// the values for `Min` and `Max`; `Sum` takes built-in number values (integers wrap). Outputs
/// as [`unique`]'s; values of any key type (records fold as in [`crate::segmented_reduce`]).
#[allow(clippy::too_many_arguments)]
pub fn reduce_by_key<K: Key, V: Key, C: Comparator<K>, D: Comparator<V>>(
    gpu: &Gpu,
    keys: &impl DevicePtr<K>,
    values: &impl DevicePtr<V>,
    out_keys: &mut impl DevicePtrMut<K>,
    out_values: &mut impl DevicePtrMut<V>,
    reduction: Reduction,
    comp: C,
    value_order: D,
) -> Result<usize> {
    let _ = (comp, value_order);
    let keys = gpu.input("keys", keys, K::DEVICE_ALIGN)?;
    let values = gpu.input("values", values, V::DEVICE_ALIGN)?;
    let out = gpu.output("out_keys", out_keys, K::DEVICE_ALIGN, 0, &[&keys, &values])?;
    let out_values = gpu.output("out_values", out_values, V::DEVICE_ALIGN, 0, &[&keys, &values, &out])?;
    check_values("values", keys.len, values.len)?;
    let reduce = ReduceValues::new::<V, D>(values.ptr, (out_values.ptr, out_values.len), reduction)?;
    runs_on::<K, C>(gpu, &keys, RunOutputs { keys: ("out_keys", out.ptr, out.len), lengths: None, values: Some(reduce) })
}

/// `u32` lengths hold the runs of at most 2^32 - 1 keys.
pub(crate) fn check_lengths<I: SortIndex>(keys: usize) -> Result<()> {
    if keys > I::MAX_COUNT {
        return Err(crate::Error::TooLarge { what: "run_length_encode: u32 lengths hold runs of at most 2^32 - 1 keys" });
    }
    Ok(())
}

/// What a runs call writes (device addresses and lengths in items): the runs' first keys (the
/// output's name first), and their lengths (of `.2` bytes) or their values' folds.
pub(crate) struct RunOutputs {
    pub keys: (&'static str, u64, usize),
    pub lengths: Option<(u64, usize, usize)>,
    pub values: Option<ReduceValues>,
}

/// The values of a reduce-by-key: the input, the output and its room, the reduction, and the
/// launch of the value type's segmented reduction over the runs.
pub(crate) struct ReduceValues {
    values: u64,
    out: (u64, usize),
    launch: fn(&Gpu, usize, Segments<'_>, u64, usize, u64, Reduction) -> Result<()>,
    reduction: Reduction,
}

impl ReduceValues {
    /// Values of `V` at `values` into `out`, checked for `reduction`, ordered by `D`.
    pub(crate) fn new<V: Key, D: Comparator<V>>(values: u64, out: (u64, usize), reduction: Reduction) -> Result<Self> {
        check_reduction::<V>(reduction)?;
        // No run is empty: the segmented reduction's empty value is never written.
        let launch = |gpu: &Gpu, index_bytes: usize, runs: Segments<'_>, values: u64, count: usize, out: u64, reduction: Reduction| {
            launch_segmented_reduce::<V, D>(gpu, index_bytes, runs, values, count, out, reduction, bytemuck::Zeroable::zeroed())
        };
        Ok(ReduceValues { values, out, launch, reduction })
    }
}

/// Finds the runs of the validated `keys` and writes `outputs`, each checked to hold the runs
/// before anything is written; returns the number of runs after the GPU is done.
pub(crate) fn runs_on<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &CheckedBuffer<'_>, outputs: RunOutputs) -> Result<usize> {
    let Some(order) = &C::RECORD else {
        return runs_by::<K, C>(gpu, keys, (keys, &*gpu.kernels::<K, C>()?, std::mem::size_of::<K>()), outputs);
    };
    // Records wider than the key tiles: the runs of their comparable keys, the records gathered.
    with_comparable_keys::<K, _>(gpu, order, &[(keys.ptr, keys.len)], |order_keys, kernels| {
        runs_by::<K, C>(gpu, keys, (&CheckedBuffer::raw(order_keys, keys.len, 8), kernels, 8), outputs)
    })
}

/// [`runs_on`] with the runs found in `found_by` (the keys, or the records' comparable keys;
/// its module, a key's bytes).
fn runs_by<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &CheckedBuffer<'_>, found_by: (&CheckedBuffer<'_>, &Kernels, usize), outputs: RunOutputs) -> Result<usize> {
    let index_bytes = outputs.lengths.map_or(position_bytes(keys.len), |l| l.2);
    // Room for a run per key (and the runs found in the keys themselves): the kernel writes
    // the runs' keys as it finds them; else they are gathered once the count says they fit.
    let direct = outputs.keys.2 >= keys.len && C::RECORD.is_none();
    // Room for a key and a length per key (so no output can be too small): the kernel writes
    // each run's length as it finds the run.
    let direct_lengths = outputs.lengths.filter(|l| l.1 >= keys.len && outputs.keys.2 >= keys.len).map_or(0, |l| l.0);
    let keep = Keep { starts: !direct || (outputs.lengths.is_some() && direct_lengths == 0), boundaries: outputs.values.is_some() };
    let runs = find_runs(gpu, found_by, index_bytes, (if direct { outputs.keys.1 } else { 0 }, direct_lengths), keep)?;
    check_output(outputs.keys.0, outputs.keys.2, runs.count)?;
    if let Some((_, len, _)) = outputs.lengths {
        check_output("lengths", len, runs.count)?;
    }
    if let Some(v) = &outputs.values {
        check_output("out_values", v.out.1, runs.count)?;
    }
    if !direct {
        runs.gather_keys::<K, C>(gpu, keys, outputs.keys.1)?;
    }
    if let (Some((lengths, _, _)), 0) = (outputs.lengths, direct_lengths) {
        runs.lengths::<K, C>(gpu, keys.len, lengths)?;
    }
    if let (Some(v), true) = (outputs.values, runs.count > 0) {
        let boundaries = Segments::Runs { bits: runs.boundary_bits, before: runs.boundaries_before, runs: runs.count };
        (v.launch)(gpu, runs.index_bytes, boundaries, v.values, keys.len, v.out.0, v.reduction)?;
    }
    Ok(runs.count)
}

/// What a runs search keeps beside the count: the runs' starts, and their boundary words (for
/// reduce-by-key).
#[derive(Clone, Copy)]
struct Keep {
    starts: bool,
    boundaries: bool,
}

/// The runs of a sequence of keys, found on the device: `count` run starts of `index_bytes`
/// each at `starts`, the boundary words at `boundary_bits` and `boundaries_before` (each 0
/// where not kept), and the count on the device at `runs`, all in the temporary buffer `_temp`.
struct FoundRuns<'a> {
    _temp: Temp<'a>,
    starts: u64,
    boundary_bits: u64,
    boundaries_before: u64,
    runs: u64,
    count: usize,
    index_bytes: usize,
}

/// Finds the runs of the validated `keys` (by the comparator of `kernels`, keys of
/// `key_bytes`), keeps what `keep` says (indices of `index_bytes`, which hold the keys'
/// count), and writes their first keys to `heads` and their lengths (of `index_bytes`) to
/// `lengths` unless 0 (room for a key or a length per key); waits for the kernels to report
/// the count.
fn find_runs<'a>(gpu: &'a Gpu, (keys, kernels, key_bytes): (&CheckedBuffer<'_>, &Kernels, usize), index_bytes: usize, (heads, lengths): (u64, u64), keep: Keep) -> Result<FoundRuns<'a>> {
    let n = keys.len;
    let shape = runs_shape(kernels.arch, key_bytes);
    let tiles = n.div_ceil(shape.tile());
    // The tiles' scan states, the ticket and the count, and the deferred tiles' counts (of
    // tiles, groups and spans; u32) and last heads (of groups and spans, with the lengths), all
    // zeroed; then the starts, the boundary words, the tiles' last heads.
    let words = if keep.boundaries { n.div_ceil(32) } else { 0 };
    let (groups, spans) = (tiles.div_ceil(RUNS_GROUP_TILES), tiles.div_ceil(RUNS_GROUP_TILES * RUNS_GROUP_TILES));
    let counted = (tiles + groups + spans).div_ceil(2);
    let zeroed = tiles + 2 + counted + if lengths != 0 { groups + spans } else { 0 };
    let mut layout = TempLayout::default();
    let (states_at, starts_at) = (layout.region(zeroed * 8), layout.region(if keep.starts { n * index_bytes } else { 0 }));
    let (bits_at, before_at) = (layout.region(words * 4), layout.region(words * index_bytes));
    let lasts_at = layout.region(if lengths != 0 { tiles * 8 } else { 0 });
    // The deferred tiles' slots: their heads' positions (u16), and their keys where the kernel
    // writes keys.
    let slot = shape.tile() / RUNS_DEFERRED_SHARE;
    let deferred_positions_at = layout.region(tiles * slot * 2);
    let deferred_heads_at = layout.region(if heads != 0 { tiles * slot * key_bytes } else { 0 });
    let mut temp = gpu.temp(layout.bytes())?;
    gpu.stream().memset_zeros(&mut temp.view_mut::<u64>(zeroed)?)?;
    let (base, guard) = temp.device_ptr_mut();
    drop(guard); // the kernels below are ordered after the memset on the same stream
    let (states, runs) = (base + states_at as u64, base + (states_at + 8 * (tiles + 1)) as u64);
    let kept = |yes: bool, at: usize| if yes { base + at as u64 } else { 0 };
    let (starts, boundary_bits, boundaries_before) = (kept(keep.starts, starts_at), kept(keep.boundaries, bits_at), kept(keep.boundaries, before_at));
    let tile_lasts = kept(lengths != 0, lasts_at);
    let (deferred_positions, deferred_heads) = (kept(true, deferred_positions_at), kept(heads != 0, deferred_heads_at));
    let deferred_counts = runs + 8;
    let deferred_lasts = if lengths != 0 { deferred_counts + 8 * counted as u64 } else { 0 };
    let mut found = FoundRuns { _temp: temp, starts, boundary_bits, boundaries_before, runs, count: 0, index_bytes };
    if n == 0 {
        return Ok(found);
    }
    let params = RunsParams {
        keys: keys.ptr,
        count: n as i64,
        num_tiles: tiles as i64,
        tile_states: states,
        starts,
        heads,
        runs,
        runs_host: 0,
        lengths,
        tile_lasts,
        boundary_bits,
        boundaries_before,
        deferred_positions,
        deferred_heads,
        deferred_counts,
        deferred_lasts,
    };
    // The count comes back as the kernel that knows it writes it, while the rest may still run.
    found.count = gpu.reported_count(|runs_host| launch_runs(gpu, kernels, shape, index_bytes, &RunsParams { runs_host, ..params }))? as usize;
    Ok(found)
}

/// Enqueues the runs' kernels over `params`' tiles (of `shape`, positions of `index_bytes`;
/// its rooms laid out by [`find_runs`]).
fn launch_runs(gpu: &Gpu, kernels: &Kernels, shape: LaunchShape, index_bytes: usize, params: &RunsParams) -> Result<()> {
    let tiles = params.num_tiles as usize;
    let cfg = LaunchConfig { grid_dim: (grid_ctas(tiles, "runs grid")?, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: `RunsParams` is `mergepath_run_starts_{4,8}`'s parameter struct; one CTA of the
    // runs shape (the kernel's, same table row) per tile of the `count` keys, `tile_states`
    // the tiles' zeroed states and ticket, `starts` (where not 0) room for `count` indices of
    // the entry's width (at most one run per key), `heads` and `lengths` (where not 0) for
    // `count` keys and lengths (the lengths of the entry's width, `tile_lasts` a slot a tile), the
    // boundary words (where not 0) room for a word and an index a 32 keys, the deferred tiles'
    // slots room for a tile's keys / RUNS_DEFERRED_SHARE positions (and keys where `heads` is
    // not 0) each, `runs` one zeroed u64 (and `runs_host`, where not 0, a u64 of mapped pinned
    // host memory, Gpu::reported_count's), `deferred_counts` zeroed u32s for the tiles, groups
    // and spans, `deferred_lasts` (where not 0) zeroed u64s for the groups and spans.
    unsafe { gpu.launch(&kernels.run_starts(index_bytes)?, cfg, params) }?;
    if tiles > 1 {
        // The first tile never defers.
        let deferred_cfg = LaunchConfig { grid_dim: (grid_ctas(tiles.div_ceil(shape.threads as usize / 32), "runs deferred grid")?, 1, 1), ..cfg };
        // SAFETY: the same parameters, a dependent of the kernel above on the stream (it waits
        // for it before reading): CTAs of the runs shape's threads, a warp a tile, writing the
        // deferred tiles' outputs to the rooms above.
        unsafe { gpu.launch_dependent(&kernels.run_deferred(index_bytes)?, deferred_cfg, params, kernels.arch) }?;
    }
    Ok(())
}

impl FoundRuns<'_> {
    /// The first key of each run into `out` (room checked by the caller).
    fn gather_keys<K: Key, C: Comparator<K>>(&self, gpu: &Gpu, keys: &CheckedBuffer<'_>, out: u64) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let kernels = gpu.kernels::<K, C>()?;
        launch_gather(gpu, &kernels, (keys.ptr, keys.len), None, (self.starts, self.index_bytes), out, self.count, std::mem::size_of::<K>())
    }

    /// Each run's length into `lengths` (indices of the starts' width, room checked by the
    /// caller), of `n` keys in all.
    fn lengths<K: Key, C: Comparator<K>>(&self, gpu: &Gpu, n: usize, lengths: u64) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let kernels = gpu.kernels::<K, C>()?;
        let params = RunsParams {
            keys: 0,
            count: n as i64,
            num_tiles: 0,
            tile_states: 0,
            starts: self.starts,
            heads: 0,
            runs: self.runs,
            runs_host: 0,
            lengths,
            tile_lasts: 0,
            boundary_bits: 0,
            boundaries_before: 0,
            deferred_positions: 0,
            deferred_heads: 0,
            deferred_counts: 0,
            deferred_lasts: 0,
        };
        let func = kernels.run_lengths(self.index_bytes)?;
        let cfg = LaunchConfig { grid_dim: (grid_ctas(self.count.div_ceil(PARTITION_THREADS), "run lengths grid")?, 1, 1), block_dim: (PARTITION_THREADS as u32, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: `RunsParams` is `mergepath_run_lengths_{4,8}`'s parameter struct; `starts`
        // holds the `count` run starts of the entry's width, `runs` the count, `lengths` room
        // for `count` (checked by the caller); one thread per run.
        unsafe { gpu.launch(&func, cfg, &params) }
    }
}

//! The launches of a segmented reduction: the load-balancing search's partitions at the
//! reduction's tile, the tiles, then the spine; or for runs of keys (reduce-by-key) the tiles
//! over the runs' boundary words, then the same spine.

use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{SegmentedReduceParams, REDUCE_PARTIAL_BYTES, REDUCE_SPINE_CARRY_BYTES, REDUCE_SPINE_THREADS, REDUCE_SPINE_TILES};
use crate::device::kernels::{Entry, Kernels};
use crate::device::launch::grid_ctas;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::gather::{launch_gather, launch_iota, launch_scatter, position_bytes};
use crate::key::{Comparator, Key, Less, RecordOrder};
use crate::sort::launch_sort_by_words;
use crate::sort::records::order_key_kernels;
use crate::load_balancing::{launch_load_balancing_partitions, load_balancing_params, load_balancing_tile_count};
use crate::tuning::{reduce_runs_shape, reduce_shape, LaunchShape};
use crate::types::Reduction;
use cudarc::driver::{DevicePtr, LaunchConfig};

/// The segments of a segmented reduction: their starts (indices, validated), or runs of values
/// (none empty) by the boundary words the runs-finding kernel writes on the device (`bits`, and
/// `before` of the reduction's index width), `runs` of them.
#[derive(Clone, Copy)]
pub(crate) enum Segments<'a> {
    Starts(&'a CheckedBuffer<'a>),
    Runs { bits: u64, before: u64, runs: usize },
}

impl Segments<'_> {
    fn count(&self) -> usize {
        match self {
            Segments::Starts(starts) => starts.len,
            Segments::Runs { runs, .. } => *runs,
        }
    }

    /// The tiles' shape for keys of `key_bytes` compiled for `arch`, and the tiles over these
    /// segments' `count` values.
    fn tiles(&self, arch: u32, key_bytes: usize, count: usize) -> (LaunchShape, usize) {
        match self {
            Segments::Starts(starts) => {
                let shape = reduce_shape(arch, key_bytes);
                (shape, load_balancing_tile_count(starts.len, count, shape.tile()))
            }
            Segments::Runs { .. } => {
                let shape = reduce_runs_shape(arch, key_bytes);
                (shape, count.div_ceil(shape.tile()))
            }
        }
    }

    /// The parameters' starts, boundary bits and boundaries before (0 where these segments
    /// have none).
    fn pointers(&self) -> (u64, u64, u64) {
        match self {
            Segments::Starts(starts) => (starts.ptr, 0, 0),
            Segments::Runs { bits, before, .. } => (0, *bits, *before),
        }
    }
}

/// Enqueues the reduction of the `count` values at `values` in `segments` (indices of
/// `index_bytes`) into `out` (one key per segment), `empty` for segments with no values. The
/// caller checked the sizes ([`super::check_reduce`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_segmented_reduce<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    index_bytes: usize,
    segments: Segments<'_>,
    values: u64,
    count: usize,
    out: u64,
    reduction: Reduction,
    empty: K,
) -> Result<()> {
    let segment_count = segments.count();
    if segment_count == 0 {
        return Ok(()); // and no values (checked)
    }
    if let Some(order) = &C::RECORD {
        let reduce_places = |places, chosen| launch_segmented_reduce::<u64, Less>(gpu, index_bytes, segments, places, count, chosen, Reduction::Min, count as u64);
        return reduce_records::<K>(gpu, order, reduction, (values, count), (out, segment_count, empty), reduce_places);
    }
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let (shape, tiles) = segments.tiles(kernels.arch, key_bytes, count);
    // The spine's CTAs (at least one), their states and ticket first in the temp (zeroed).
    let spine_ctas = tiles.div_ceil(REDUCE_SPINE_THREADS * REDUCE_SPINE_TILES).max(1);
    let mut layout = TempLayout::default();
    let partial_bytes = tiles * REDUCE_PARTIAL_BYTES;
    let (states_at, carries_at) = (layout.region((spine_ctas + 1) * 8), layout.region(spine_ctas * REDUCE_SPINE_CARRY_BYTES));
    let (partitions_at, heads_at, tails_at) = (layout.region((tiles + 1) * 8), layout.region(partial_bytes), layout.region(partial_bytes));
    let mut temp = gpu.temp(layout.bytes())?;
    gpu.stream().memset_zeros(&mut temp.view_mut::<u64>(spine_ctas + 1)?)?;
    let (base, _guard) = temp.device_ptr_mut();
    let partitions = base + partitions_at as u64;
    if let Segments::Starts(starts) = segments {
        let partition_params = load_balancing_params(starts.ptr, starts.len, count, shape.tile(), partitions);
        launch_load_balancing_partitions(gpu, &kernels, index_bytes, &partition_params)?;
    }
    let mut empty_words = [0u64; 2];
    bytemuck::bytes_of_mut(&mut empty_words)[..key_bytes].copy_from_slice(bytemuck::bytes_of(&empty));
    let (starts, boundary_bits, boundaries_before) = segments.pointers();
    let params = SegmentedReduceParams {
        starts,
        boundary_bits,
        boundaries_before,
        segments: segment_count as i64,
        count: count as i64,
        values,
        spacing: shape.tile() as i64,
        partitions,
        tiles: tiles as i64,
        heads: base + heads_at as u64,
        tails: base + tails_at as u64,
        spine_states: base + states_at as u64,
        spine_carries: base + carries_at as u64,
        out,
        empty: empty_words,
    };
    let entries = entries::<K>(&kernels, reduction, index_bytes, matches!(segments, Segments::Runs { .. }))?;
    launch_tiles_and_spine(gpu, kernels.arch, segments, entries, (shape, tiles, spine_ctas), &params)
}

/// Enqueues a segmented reduction's `tiles` tiles of `shape` (where there are any) and its
/// `spine_ctas` spine CTAs, by the entries of [`entries`] with `params` (laid out by
/// [`launch_segmented_reduce`]).
fn launch_tiles_and_spine(
    gpu: &Gpu,
    arch: u32,
    segments: Segments<'_>,
    (tile_entry, spine): (Entry<SegmentedReduceParams>, Entry<SegmentedReduceParams>),
    (shape, tiles, spine_ctas): (LaunchShape, usize, usize),
    params: &SegmentedReduceParams,
) -> Result<()> {
    if tiles > 0 {
        let cfg = LaunchConfig { grid_dim: (grid_ctas(tiles, "segmented reduction grid")?, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
        match segments {
            // SAFETY: `SegmentedReduceParams` is `mergepath_segmented_reduce_{op}_{4,8}`'s
            // parameter struct; one CTA of the reduction shape (the same table row as the
            // kernel's) per tile of the merge of `segments - 1` boundaries with `count` items,
            // whose partitions the launch before wrote at this tile; `starts` holds `segments`
            // indices of the entry's width, `values` `count` keys and `out` at least `segments`
            // (checked by the caller), the partials room for `tiles` of REDUCE_PARTIAL_BYTES each.
            Segments::Starts(_) => unsafe { gpu.launch_dependent(&tile_entry, cfg, params, arch) }?,
            // SAFETY: as above for `mergepath_reduce_runs_{op}_{4,8}`, one CTA of the reduce_runs
            // shape per tile of the `count` values; the boundary words (a word and an index of
            // the entry's width per 32 values) were written before in stream order by the runs
            // of the same values, `runs` of them, the size of `out` (checked by the caller); the
            // kernel writes the `tiles + 1` partitions.
            Segments::Runs { .. } => unsafe { gpu.launch(&tile_entry, cfg, params) }?,
        }
    }
    let cfg = LaunchConfig { grid_dim: (grid_ctas(spine_ctas, "segmented reduction spine")?, 1, 1), block_dim: (REDUCE_SPINE_THREADS as u32, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: as above for `mergepath_segmented_reduce_spine_{op}`, a CTA of
    // REDUCE_SPINE_THREADS per REDUCE_SPINE_THREADS * REDUCE_SPINE_TILES tiles (at least one),
    // reading the `tiles + 1` partitions and the tiles' partials written before it in stream
    // order, its states (zeroed, with the ticket) and carries room for every CTA, and writing
    // `out`.
    unsafe { gpu.launch(&spine, cfg, params) }
}

/// Enqueues [`launch_segmented_reduce`] of records (wider than the key tiles, ordered by
/// `order`; `Min` or `Max`, as [`super::check_reduction`] allows) of the `count` values into
/// the `segments` outputs at `out`: the values sorted stably into a copy with their positions,
/// by `order` for `Min` and by its reverse for `Max`; each value's place in that order
/// scattered to its position; `reduce_places(places, chosen)`, the segments' `u64` minimum of
/// the places (`count` for an empty one: a segment's first least value, or first greatest, the
/// fold's choice); then the records gathered from the sorted copy by the chosen places,
/// `empty` at place `count`.
fn reduce_records<K: Key>(
    gpu: &Gpu,
    order: &RecordOrder,
    reduction: Reduction,
    (values, count): (u64, usize),
    (out, segments, empty): (u64, usize, K),
    reduce_places: impl FnOnce(u64, u64) -> Result<()>,
) -> Result<()> {
    let (record_bytes, word) = (std::mem::size_of::<K>(), position_bytes(count));
    let order = RecordOrder { descending: order.descending != (reduction == Reduction::Max), ..*order };
    let kernels = order_key_kernels(gpu, false)?;
    let mut layout = TempLayout::default();
    let (sorted_at, positions_at) = (layout.region(count * record_bytes), layout.region(count * word));
    let (ordinals_at, places_at, chosen_at) = (layout.region(count * 8), layout.region(count * 8), layout.region(segments * 8));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let [sorted, positions, ordinals, places, chosen] = [sorted_at, positions_at, ordinals_at, places_at, chosen_at].map(|at| base + at as u64);
    if count > 0 {
        launch_iota(gpu, &kernels, positions, count, 0, word)?;
        launch_sort_by_words::<K>(gpu, &order, values, sorted, Some((positions, positions, word)), count)?;
        launch_iota(gpu, &kernels, ordinals, count, 0, 8)?;
        launch_scatter(gpu, &kernels, ordinals, (positions, word), places, count)?;
    }
    reduce_places(places, chosen)?;
    let empty = gpu.upload_bytes(&[empty])?;
    let (empty, _read) = empty.device_ptr(gpu.stream());
    launch_gather(gpu, &kernels, (sorted, count), Some((empty, 1)), (chosen, 8), out, segments, record_bytes)
}

/// The tile (by starts, or for `runs`) and spine entries of `reduction` for indices of
/// `index_bytes`.
fn entries<K>(kernels: &Kernels, reduction: Reduction, index_bytes: usize, runs: bool) -> Result<(Entry<SegmentedReduceParams>, Entry<SegmentedReduceParams>)> {
    let pair = match (reduction, runs) {
        (Reduction::Sum, false) => (kernels.segmented_reduce_sum(index_bytes), kernels.segmented_reduce_spine_sum()),
        (Reduction::Min, false) => (kernels.segmented_reduce_min(index_bytes), kernels.segmented_reduce_spine_min()),
        (Reduction::Max, false) => (kernels.segmented_reduce_max(index_bytes), kernels.segmented_reduce_spine_max()),
        (Reduction::Sum, true) => (kernels.reduce_runs_sum(index_bytes), kernels.segmented_reduce_spine_sum()),
        (Reduction::Min, true) => (kernels.reduce_runs_min(index_bytes), kernels.segmented_reduce_spine_min()),
        (Reduction::Max, true) => (kernels.reduce_runs_max(index_bytes), kernels.segmented_reduce_spine_max()),
    };
    match pair {
        (Ok(tile), Ok(spine)) => Ok((tile, spine)),
        (Err(Error::MissingEntryPoint(name)), _) | (_, Err(Error::MissingEntryPoint(name))) => {
            Err(Error::NotSupported { key: std::any::type_name::<K>(), operation: format!("{name} is not in this key's kernels") })
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

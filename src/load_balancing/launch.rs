//! The launches of a load-balancing search: the partitions of the merge of the segment
//! boundaries with the items, then one tile kernel.

use crate::device::buffers::CheckedBuffer;
use crate::device::contract::LoadBalancingParams;
use crate::device::launch::{grid_ctas, widest_word};
use crate::device::kernels::Kernels;
use crate::device::Gpu;
use crate::error::Result;
use crate::partition::launch::partition_launch_config;
use crate::tuning::load_balancing_shape;
use cudarc::driver::LaunchConfig;

/// What a load-balancing launch writes for each item (device addresses of `count` outputs).
pub(crate) enum LoadBalancingOutput {
    /// Its segment, and its rank there unless `ranks` is 0.
    Search { segments: u64, ranks: u64 },
    /// Its segment's value (interval expand): `values` holds one of `value_bytes` per segment.
    Expand { values: u64, out: u64, value_bytes: usize },
}

/// Enqueues the search of `count >= 1` items over the validated `starts` (at least one, indices
/// of `index_bytes`), writing `output`.
pub(crate) fn launch_load_balancing(gpu: &Gpu, index_bytes: usize, count: usize, starts: &CheckedBuffer<'_>, output: LoadBalancingOutput) -> Result<()> {
    debug_assert!(count > 0 && starts.len > 0, "the caller returns early");
    // The entries are key-independent, in the index entries' module.
    let kernels = gpu.index_kernels()?;
    // word 0: the search's entry; else the expand's, moving values of `words` words of `word`.
    let (segment_out, rank_out, values, value_out, word, words) = match output {
        LoadBalancingOutput::Search { segments, ranks } => (segments, ranks, 0, 0, 0, 0),
        LoadBalancingOutput::Expand { value_bytes: 0, .. } => return Ok(()),
        LoadBalancingOutput::Expand { values, out, value_bytes } => {
            let word = widest_word(value_bytes, values | out);
            (0, 0, values, out, word, value_bytes / word)
        }
    };
    let tile = load_balancing_shape(kernels.arch, index_bytes);
    let tiles = load_balancing_tile_count(starts.len, count, tile.tile());
    let grid = grid_ctas(tiles, "load-balancing grid")?;
    let mut temp = gpu.temp((tiles + 1) * 8)?;
    let (partitions, _guard) = temp.device_ptr_mut();
    let params = LoadBalancingParams { segment_out, rank_out, values, value_out, words: words as i64, ..load_balancing_params(starts.ptr, starts.len, count, tile.tile(), partitions) };
    launch_load_balancing_partitions(gpu, &kernels, index_bytes, &params)?;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (tile.threads, 1, 1), shared_mem_bytes: 0 };
    let func = if word == 0 { kernels.load_balancing(index_bytes)? } else { kernels.interval_expand(word, index_bytes)? };
    // SAFETY: as above for `mergepath_load_balancing_{4,8}` and
    // `mergepath_interval_expand_{word}_{4,8}`, whose tile is the search shape of the index
    // width (same table row), one CTA per tile of the boundaries' and items' merge, its
    // partitions the launch before; the outputs hold `count` indices (validated by the
    // caller), the ranks' only where not null; for the expand, `values` holds one value of
    // `words` words per start and `value_out` `count` of them, both aligned to the word.
    unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }
}

/// The tiles of `spacing` outputs of a load-balancing merge: the `segments - 1` boundaries
/// (`segments >= 1`) with the `count` items.
pub(crate) fn load_balancing_tile_count(segments: usize, count: usize, spacing: usize) -> usize {
    (segments - 1 + count).div_ceil(spacing)
}

/// The parameters of a load-balancing merge of `count` items over the `segments >= 1` starts at
/// the device address `starts`, cut every `spacing` outputs at `partitions` (one more than its
/// [`load_balancing_tile_count`], i64), without outputs: a launch adds its own.
pub(crate) fn load_balancing_params(starts: u64, segments: usize, count: usize, spacing: usize, partitions: u64) -> LoadBalancingParams {
    LoadBalancingParams {
        starts,
        segments: segments as i64,
        count: count as i64,
        spacing: spacing as i64,
        num_partitions: (load_balancing_tile_count(segments, count, spacing) + 1) as i64,
        partitions,
        segment_out: 0,
        rank_out: 0,
        values: 0,
        value_out: 0,
        words: 0,
    }
}

/// Enqueues the partitions of a load-balancing merge (`params.num_partitions` of them, one every
/// `params.spacing` outputs of the boundaries `starts[1..segments]` merged with `count` items)
/// into `params.partitions`: the search's, and the segmented reduction's with its own tiles.
pub(crate) fn launch_load_balancing_partitions(gpu: &Gpu, kernels: &Kernels, index_bytes: usize, params: &LoadBalancingParams) -> Result<()> {
    let func = kernels.load_balancing_partitions(index_bytes)?;
    // SAFETY: `LoadBalancingParams` is `mergepath_load_balancing_partitions_{4,8}`'s parameter
    // struct; the caller's `starts` holds `segments >= 1` indices of the entry's width and its
    // partition buffer `num_partitions` i64, one thread each.
    unsafe { gpu.launch(&func, partition_launch_config(params.num_partitions as usize)?, params) }
}

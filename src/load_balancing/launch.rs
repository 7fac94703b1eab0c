//! The launches of a load-balancing search: the partitions of the merge of the segment
//! boundaries with the items, then one tile kernel.

use crate::device::buffers::CheckedBuffer;
use crate::device::contract::LoadBalancingParams;
use crate::device::launch::grid_ctas;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Less;
use crate::partition::partition_launch_config;
use crate::tuning::search_shape;
use cudarc::driver::LaunchConfig;

/// Enqueues the search of `count >= 1` items over the validated `starts` (at least one, indices
/// of `index_bytes`), writing `count` segments to `segment_out` and, unless it is 0, `count`
/// ranks to `rank_out`.
pub(crate) fn launch_load_balancing(gpu: &Gpu, index_bytes: usize, count: usize, starts: &CheckedBuffer<'_>, segment_out: u64, rank_out: u64) -> Result<()> {
    debug_assert!(count > 0 && starts.len > 0, "the caller returns early");
    // The entries are key-independent: any module has them.
    let kernels = gpu.kernels::<u32, Less>()?;
    let tile = search_shape(kernels.arch, index_bytes);
    let tiles = (starts.len - 1 + count).div_ceil(tile.tile());
    let grid = grid_ctas(tiles, "load-balancing grid")?;
    let parts = tiles + 1;
    let mut temp = gpu.temp(parts * 8)?;
    let (partitions, _guard) = temp.device_ptr_mut();
    let params = LoadBalancingParams {
        starts: starts.ptr,
        segments: starts.len as i64,
        count: count as i64,
        spacing: tile.tile() as i64,
        num_partitions: parts as i64,
        partitions,
        segment_out,
        rank_out,
    };
    let func = kernels.load_balancing_partitions(index_bytes)?;
    // SAFETY: `LoadBalancingParams` is `mergepath_load_balancing_partitions_{4,8}`'s parameter
    // struct; `starts` holds `segments >= 1` indices of the entry's width, the partition buffer
    // `parts` i64, one thread each.
    unsafe { gpu.launch(&func, partition_launch_config(parts)?, &params) }?;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (tile.threads, 1, 1), shared_mem_bytes: 0 };
    let func = kernels.load_balancing(index_bytes)?;
    // SAFETY: as above for `mergepath_load_balancing_{4,8}`, whose tile is the search shape of
    // the index width (same table row), one CTA per tile of the boundaries' and items' merge,
    // its partitions the launch before; the outputs hold `count` indices (validated by the
    // caller), the ranks' only where not null.
    unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }
}

//! The launches of a merge: the partitions and the two-phase merge kernel, or a ladder kernel.

use super::plan::MergeStrategy;
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{MergeFallbackParams, MergeKeysParams, MergeLadderParams, MergePairsParams};
use crate::device::launch::{grid_ctas, merge_fallback_config};
use crate::device::kernels::Kernels;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key};
use crate::partition::launch::launch_partitions;
use crate::partition::plan::partition_count;
use crate::tuning::{ladder_shape, merge_shape};
use cudarc::driver::LaunchConfig;

/// A merge's values: a's, b's, the output's, and a value's bytes.
pub(crate) type MergeValues<'a, 'b> = Option<(&'a CheckedBuffer<'b>, &'a CheckedBuffer<'b>, &'a CheckedBuffer<'b>, usize)>;

/// Enqueues the partition and merge kernels on validated buffers (keys with kernels of their
/// own: records go through [`super::launch_merge`]).
pub(crate) fn launch_merge<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, out: &CheckedBuffer<'_>, values: MergeValues<'_, '_>, _comp: C) -> Result<()> {
    if a.len + b.len == 0 {
        return Ok(());
    }
    launch_merge_with(gpu, &*gpu.kernels::<K, C>()?, std::mem::size_of::<K>(), a, b, out, values)
}

/// [`launch_merge`] by the kernels of `kernels`, whose keys are `key_bytes` wide.
pub(crate) fn launch_merge_with(gpu: &Gpu, kernels: &Kernels, key_bytes: usize, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, out: &CheckedBuffer<'_>, values: MergeValues<'_, '_>) -> Result<()> {
    let total = a.len + b.len;
    if total == 0 {
        return Ok(());
    }
    let shape = merge_shape(kernels.arch, key_bytes);
    let tile = shape.tile();
    let tiles = grid_ctas(total.div_ceil(tile), "merge grid")?;
    let parts = partition_count(total, tile);
    let mut temp = gpu.temp(parts * 8)?;
    let (parts_ptr, _parts_guard) = temp.device_ptr_mut();
    // Held until the fallback is enqueued: this call's tiles and fallback stay adjacent.
    let (guard, _guard_lock) = gpu.merge_guard()?;
    launch_partitions(gpu, kernels, a, b, tile, parts_ptr, parts)?;

    let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let (a_count, b_count) = (a.len as i64, b.len as i64);
    let (a_vals, b_vals, out_vals, value_bytes) = match values {
        None => {
            let params = MergeKeysParams { a: a.ptr, a_count, b: b.ptr, b_count, partitions: parts_ptr, out: out.ptr, guard };
            let func = kernels.merge_keys()?;
            // SAFETY: `MergeKeysParams` is `mergepath_merge_keys`'s parameter struct; the kernel's tile is `shape` (same table row on both sides), the grid covers
            // ceil(total / tile) tiles, partitions hold tiles + 1 entries, and `out` holds >= total;
            // the partition kernel is the launch before it, and merge_tile waits for it; the
            // guard is this handle's, zero between launches in its stream order.
            unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }?;
            (0, 0, 0, 0)
        }
        Some((av, bv, ov, word)) => {
            let params = MergePairsParams {
                a: a.ptr,
                a_vals: av.ptr,
                a_count,
                b: b.ptr,
                b_vals: bv.ptr,
                b_count,
                partitions: parts_ptr,
                out: out.ptr,
                out_vals: ov.ptr,
                guard,
            };
            let func = kernels.merge_pairs(word)?;
            // SAFETY: as above for `mergepath_merge_pairs_{4,8,16}` (`MergePairsParams`); value buffers have their
            // keys' lengths and are aligned to the word size the kernel moves them in.
            unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }?;
            (av.ptr, bv.ptr, ov.ptr, word)
        }
    };
    let params = MergeFallbackParams { guard, a: a.ptr, a_vals, a_count, b: b.ptr, b_vals, b_count, key_bytes: key_bytes as i64, value_bytes: value_bytes as i64, out: out.ptr, out_vals };
    let func = kernels.merge_fallback()?;
    // SAFETY: `MergeFallbackParams` is `mergepath_merge_fallback`'s parameter struct; the buffers
    // are the merge's just above (values null where it had none), the kernel waits for it, and
    // copies a's and b's items (total, within `out`) only where its tiles reported unsorted inputs.
    unsafe { gpu.launch_dependent(&func, merge_fallback_config(), &params, kernels.arch) }
}

/// Enqueues the ladder kernel of `strategy` (not the two-phase merge) on validated buffers,
/// `a` and `b` not both empty.
pub(super) fn launch_ladder<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, out: &CheckedBuffer<'_>, strategy: MergeStrategy) -> Result<()> {
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let shape = ladder_shape(kernels.arch, key_bytes);
    let func = match strategy {
        MergeStrategy::Basic => kernels.merge_basic()?,
        MergeStrategy::Tiled => kernels.merge_tiled()?,
        _ => kernels.merge_circular()?,
    };
    let per_cta = strategy.ladder_cta_items(kernels.arch, key_bytes);
    let ctas = grid_ctas((a.len + b.len).div_ceil(per_cta), "merge ladder grid")?;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let params = MergeLadderParams { a: a.ptr, a_count: a.len as i64, b: b.ptr, b_count: b.len as i64, out: out.ptr };
    // SAFETY: `MergeLadderParams` is the parameter struct of `mergepath_merge_{basic,tiled,circular}`; each CTA covers
    // `per_cta` outputs (the kernels' compile-time shape from the same table row and tile
    // rule), the grid covers all of them, and `out` holds a.len + b.len keys.
    unsafe { gpu.launch(&func, cfg, &params) }
}

//! The launches of a multiway merge: per level, the multiway partitions and the merge tiles;
//! more inputs than one kernel takes are merged in groups first.

use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{MultiwayFallbackParams, MultiwayMergeKeysParams, MultiwayMergePairsParams, MULTIWAY_MAX_WAYS};
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, merge_fallback_config};
use crate::device::temp::{temp_aligned, TempLayout};
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Key;
use crate::partition::launch::{launch_multiway_partitions, multiway_partitions_temp_bytes, MultiwayTable};
use crate::partition::plan::partition_count;
use crate::tuning::{sort_pairs_shape, sort_shape};
use cudarc::driver::LaunchConfig;

/// The temporary device bytes [`launch_multiway`] takes at most for at most
/// [`MULTIWAY_MAX_WAYS`] inputs of `total` items in all with keys of `key_bytes` (and values
/// where `pairs`) on a device of `arch`: the tiles' splits and the partitions' boundaries.
pub(crate) fn multiway_temp_bytes(arch: u32, key_bytes: usize, pairs: bool, total: usize, ways: usize) -> usize {
    let tile = if pairs { sort_pairs_shape(arch, key_bytes) } else { sort_shape(arch, key_bytes) }.tile();
    temp_aligned(partition_count(total, tile) * ways * 8) + multiway_partitions_temp_bytes(total, ways, sort_shape(arch, key_bytes).tile())
}

/// Merges validated `keys` (and `values` of `word` bytes) into `out` (and `out_values`), which
/// hold their total (not zero).
pub(crate) fn launch_multiway<K: Key>(
    gpu: &Gpu,
    kernels: &Kernels,
    keys: &[CheckedBuffer<'_>],
    values: Option<(&[CheckedBuffer<'_>], usize)>,
    out: u64,
    out_values: Option<u64>,
) -> Result<()> {
    if keys.len() <= MULTIWAY_MAX_WAYS {
        return launch_level::<K>(gpu, kernels, keys, values, out, out_values);
    }
    // Groups of MULTIWAY_MAX_WAYS inputs into temporary runs, in input order (so stability
    // holds), then the runs.
    let key_bytes = std::mem::size_of::<K>();
    let mut layout = TempLayout::default();
    let regions: Vec<(usize, Option<usize>, usize)> = keys
        .chunks(MULTIWAY_MAX_WAYS)
        .map(|group| {
            let n: usize = group.iter().map(|b| b.len).sum();
            (layout.region(n * key_bytes), values.map(|(_, word)| layout.region(n * word)), n)
        })
        .collect();
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let mut runs = Vec::new();
    let mut run_values = Vec::new();
    for (g, &(key_at, value_at, n)) in regions.iter().enumerate() {
        let range = g * MULTIWAY_MAX_WAYS..((g + 1) * MULTIWAY_MAX_WAYS).min(keys.len());
        let group_values = values.map(|(v, word)| (&v[range.clone()], word));
        if n > 0 {
            launch_level::<K>(gpu, kernels, &keys[range], group_values, base + key_at as u64, value_at.map(|at| base + at as u64))?;
        }
        runs.push(CheckedBuffer::raw(base + key_at as u64, n, key_bytes));
        if let (Some(at), Some((_, word))) = (value_at, values) {
            run_values.push(CheckedBuffer::raw(base + at as u64, n, word));
        }
    }
    launch_multiway::<K>(gpu, kernels, &runs, values.map(|(_, word)| (&run_values[..], word)), out, out_values)
}

/// One multiway kernel pair over at most MULTIWAY_MAX_WAYS inputs.
fn launch_level<K: Key>(
    gpu: &Gpu,
    kernels: &Kernels,
    keys: &[CheckedBuffer<'_>],
    values: Option<(&[CheckedBuffer<'_>], usize)>,
    out: u64,
    out_values: Option<u64>,
) -> Result<()> {
    let table = MultiwayTable::upload::<K>(gpu, keys)?;
    let total = table.total;
    if total == 0 {
        return Ok(());
    }
    let key_bytes = std::mem::size_of::<K>();
    let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
    let tile = shape.tile();
    let tiles = grid_ctas(total.div_ceil(tile), "multiway merge grid")?;
    let count = partition_count(total, tile);
    let mut temp = gpu.temp(count * table.ways * 8)?;
    let (splits, _splits_sync) = temp.device_ptr_mut();
    launch_multiway_partitions(gpu, kernels, &table, tile, splits, count)?;
    let (inputs, counts) = table.pointers(gpu)?;
    let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let (ways, total) = (table.ways as i64, total as i64);
    // The value table lives until both kernels that read it are enqueued (its drop is stream-ordered).
    let value_table = match values {
        Some((values, _)) => Some(gpu.upload_table(&values.iter().map(|b| b.ptr).collect::<Vec<u64>>())?),
        None => None,
    };
    let value_inputs = match &value_table {
        Some(table) => gpu.input("multiway values", table, 8)?.ptr,
        None => 0,
    };
    // Held until the fallback is enqueued: this call's tiles and fallback stay adjacent.
    let (guard, _guard_lock) = gpu.merge_guard()?;
    let value_bytes = match (values, out_values) {
        (Some((_, word)), Some(out_vals)) => {
            let params = MultiwayMergePairsParams { inputs, values: value_inputs, counts, ways, total, splits, out, out_vals, guard };
            let func = kernels.multiway_merge_pairs(word)?;
            // SAFETY: `MultiwayMergePairsParams` is `mergepath_multiway_merge_pairs_{4,8,16}`'s
            // parameter struct; the tables hold `ways` validated inputs (values of their keys'
            // lengths, aligned to `word`), `splits` holds tiles + 1 rows of `ways` splits, the
            // kernel's tile is the sort_pairs shape of the same table row, both outputs hold
            // `total`, and the guard is this handle's, zero between launches in its stream order.
            unsafe { gpu.launch(&func, cfg, &params) }?;
            word
        }
        _ => {
            let params = MultiwayMergeKeysParams { inputs, counts, ways, total, splits, out, guard };
            let func = kernels.multiway_merge_keys()?;
            // SAFETY: as above for `mergepath_multiway_merge_keys` (`MultiwayMergeKeysParams`,
            // the sort shape's tile).
            unsafe { gpu.launch(&func, cfg, &params) }?;
            0
        }
    };
    let params = MultiwayFallbackParams {
        guard,
        inputs,
        values: value_inputs,
        counts,
        ways,
        key_bytes: key_bytes as i64,
        value_bytes: value_bytes as i64,
        out,
        out_vals: out_values.unwrap_or(0),
    };
    let func = kernels.multiway_fallback()?;
    // SAFETY: `MultiwayFallbackParams` is `mergepath_multiway_fallback`'s parameter struct; the
    // tables and outputs are the merge's just above (values null where it had none), the kernel
    // waits for it, and copies only where its tiles reported unsorted inputs.
    unsafe { gpu.launch_dependent(&func, merge_fallback_config(), &params, kernels.arch) }
}

//! The launches of a sort: the blocksort, two-way and four-way passes, with the module's kernels.

use super::plan::{blocksort2_shared_bytes, mergesort_block, mergesort_plan, MergesortPass, mergesort4_boundary_count, mergesort4_tile_count, SEARCH_IN_MERGE_MAX_TILES};
use crate::error::{Error, Result};
use crate::device::kernels::Kernels;
use crate::device::contract::{
    BlocksortKeysParams, BlocksortPairsParams, Sort4BoundariesParams, Sort4TileSplitsParams, SortMergeKeysParams, SortMergePairsParams, SortPartitionsParams, Split4, TILE_SPLIT_LANES,
};
use crate::device::launch::grid_ctas;
use super::records::sort_records;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::key::{Comparator, Greater, Key, Less};
use crate::partition::partition_launch_config;
use crate::tuning::{blocksort_shape, sort_pairs_shape, sort_shape};
use cudarc::driver::{sys, CudaFunction, LaunchConfig};

/// The blocksort on doubled blocks `name`, allowed (when first looked up) the dynamic shared
/// memory its keys take: more than the default 48 KB for 8-byte keys.
fn doubled_blocksort(kernels: &Kernels, name: &str, key_bytes: usize) -> Result<CudaFunction> {
    kernels.function_with(name, |f| {
        let bytes = blocksort2_shared_bytes(kernels.arch, key_bytes);
        Ok(f.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)?)
    })
}

/// Enqueues a whole sort: `keys_in` (which may be `keys_out`) sorted into `keys_out`, values
/// (input, output, word size) following.
pub(crate) fn launch_sort<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    _comp: C,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    if let Some(order) = &C::SORT_BY_WORDS {
        // The packed orders sorted as u64 keys with the positions as values.
        let sort_packed = |kernels: &Kernels, packed: u64, positions: u64, word: usize| enqueue_sort(gpu, kernels, None, packed, packed, Some((positions, positions, word)), n, 8);
        return sort_records::<K>(gpu, order, keys_in, keys_out, values, n, sort_packed);
    }
    let kernels = gpu.kernels::<K, C>()?;
    if let (Some(descending), None, true) = (C::PACKED_U64, values, (keys_in | keys_out) % 8 == 0) {
        // The order is a packed u64's (and both buffers are aligned for u64: the output holds
        // the passes between, and the keys move as 8-byte words): the u64 sort, with the first
        // pass packing and the last unpacking.
        let u64_kernels = if descending { gpu.kernels::<u64, Greater>()? } else { gpu.kernels::<u64, Less>()? };
        return enqueue_sort(gpu, &u64_kernels, Some(&kernels), keys_in, keys_out, None, n, 8);
    }
    enqueue_sort(gpu, &kernels, None, keys_in, keys_out, values, n, std::mem::size_of::<K>())
}

/// `launch_sort` with the module's kernels (`key_bytes` per key) for a sort of `n >= 1` keys;
/// with `packed` (the derived key's kernels), of keys-only sorts of packed-u64 orders, the first
/// and last passes are its packing and unpacking kernels (reading `keys_in` and writing
/// `keys_out` as the derived keys).
#[allow(clippy::too_many_arguments)]
fn enqueue_sort(
    gpu: &Gpu,
    kernels: &Kernels,
    packed: Option<&Kernels>,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    key_bytes: usize,
) -> Result<()> {
    let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
    let block_shape = blocksort_shape(kernels.arch, key_bytes);
    let tile = shape.tile();
    let grid = |ctas: usize| grid_ctas(ctas, "sort grid");
    let count = i64::try_from(n).map_err(|_| Error::TooLarge { what: "sort length" })?;

    // Small sorts: two-way passes whose partitions are searched inside the merge kernel (given
    // a null partition array). Large ones: two-way passes with the partition kernel, or, where
    // the tuning table says four ways, four-way passes (which write their coarse boundaries
    // first) and one two-way pass when the levels are odd, or, for keys alone, a blocksort on
    // doubled blocks instead.
    let tiles = n.div_ceil(tile);
    let search_in_merge = tiles <= SEARCH_IN_MERGE_MAX_TILES;
    let four_way = !search_in_merge && shape.ways == 4;
    let block = mergesort_block(n, block_shape.tile(), four_way, values.is_none());
    let doubled = block != block_shape.tile();
    let plan = mergesort_plan(n, block, four_way);
    let pass_partition_bytes = |p: &MergesortPass| match p.ways {
        2 if search_in_merge => 0,
        2 => (tiles + 1) * 8,
        _ => (mergesort4_boundary_count(n, p.run, tile) + mergesort4_tile_count(n, p.run, tile)) * std::mem::size_of::<Split4>(),
    };
    let parts_bytes = plan.iter().map(pass_partition_bytes).max().unwrap_or(0);

    // Temp: keys, then values, then partitions; none without passes.
    let mut layout = TempLayout::default();
    let value_bytes = values.map_or(0, |(_, _, w)| w);
    let (keys_at, values_at, parts_at) = (layout.region(n * key_bytes), layout.region(n * value_bytes), layout.region(parts_bytes));
    let mut temp = if plan.is_empty() { None } else { Some(gpu.temp(layout.bytes())?) };
    let temp_ptr = temp.as_mut().map(|t| t.device_ptr_mut());
    let base = temp_ptr.as_ref().map_or(0, |(p, _)| *p);
    let (tmp_keys, tmp_values, parts_ptr) = (base + keys_at as u64, base + values_at as u64, base + parts_at as u64);

    // Stage j (0: after the blocksort) lives in the output when passes - j is even, so the last
    // pass writes the output.
    let passes = plan.len();
    let stage = |j: usize| {
        let in_output = (passes - j) % 2 == 0;
        let keys = if in_output { keys_out } else { tmp_keys };
        let vals = values.map(|(_, out, _)| if in_output { out } else { tmp_values });
        (keys, vals)
    };
    let config = |ctas: u32, threads: u32| LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };

    let mut block_cfg = config(grid(n.div_ceil(block))?, block_shape.threads);
    if doubled {
        block_cfg.block_dim.0 *= 2;
        block_cfg.shared_mem_bytes = blocksort2_shared_bytes(kernels.arch, key_bytes) as u32;
    }
    let (k0, v0) = stage(0);
    match values {
        None => {
            let params = BlocksortKeysParams { input: keys_in, count, out: k0 };
            let func = match (packed, doubled) {
                (Some(p), _) if plan.is_empty() => p.function("mergepath_blocksort_pack_unpack")?,
                (Some(p), true) => doubled_blocksort(p, "mergepath_blocksort2_pack", key_bytes)?,
                (Some(p), false) => p.function("mergepath_blocksort_pack")?,
                (None, true) => doubled_blocksort(kernels, "mergepath_blocksort2_keys", key_bytes)?,
                (None, false) => kernels.function("mergepath_blocksort_keys")?,
            };
            // SAFETY: `BlocksortKeysParams` is `mergepath_blocksort_keys`'s parameter struct (and
            // the packed variants', the same with the derived keys in, and out where the blocksort is
            // the whole sort); the kernel's block is `block_shape` (same table row: packed keys
            // are 8 bytes, as u64), or twice its threads with the doubled block's keys in
            // dynamic shared memory (the `blocksort2` kernels, allowed that much when loaded),
            // the grid covers ceil(n / block) blocks, and keys_in and stage 0 hold n keys
            // (stage 0 may be keys_in itself: each CTA reads its block before writing it).
            unsafe { gpu.launch(&func, block_cfg, &params) }?;
        }
        Some((vals_in, _, word)) => {
            let params = BlocksortPairsParams { input: keys_in, input_vals: vals_in, count, out: k0, out_vals: v0.unwrap() };
            let func = kernels.for_values("mergepath_blocksort_pairs", word)?;
            // SAFETY: as above for `mergepath_blocksort_pairs_{4,8,16}` (`BlocksortPairsParams`),
            // with n values of `word` bytes in, and in stage 0.
            unsafe { gpu.launch(&func, block_cfg, &params) }?;
        }
    }

    for (j, pass) in plan.iter().enumerate() {
        let (run, spacing) = (pass.run as i64, tile as i64);
        let ((src_k, src_v), (dst_k, dst_v)) = (stage(j), stage(j + 1));
        // The pass's key and pair kernels, merge launch, and partitions (null: searched in the
        // merge kernel).
        let (merge_name, merge_cfg, parts_arg) = if pass.ways == 2 {
            let parts = tiles + 1;
            if !search_in_merge {
                let params = SortPartitionsParams { keys: src_k, count, spacing, run, num_partitions: parts as i64, partitions: parts_ptr };
                let func = kernels.function("mergepath_sort_partitions")?;
                // SAFETY: `SortPartitionsParams` is `mergepath_sort_partitions`'s parameter struct; src holds n keys, the partition
                // buffer `parts` i64, the grid covers `parts` threads; run (a whole number of
                // blocks) is a multiple of the spacing `tile`.
                unsafe { gpu.launch(&func, partition_launch_config(parts)?, &params) }?;
            }
            let parts_arg = if search_in_merge { 0 } else { parts_ptr };
            ("mergepath_sort_merge", config(grid(tiles)?, shape.threads), parts_arg)
        } else {
            // The coarse boundaries, then each output tile's exact split (after them in the
            // partition buffer).
            let bounds = mergesort4_boundary_count(n, pass.run, tile);
            let tiles4 = mergesort4_tile_count(n, pass.run, tile);
            let splits_ptr = parts_ptr + (bounds * std::mem::size_of::<Split4>()) as u64;
            let params = Sort4BoundariesParams { keys: src_k, count, spacing, run, num_boundaries: bounds as i64, splits: parts_ptr, frames: 0, num_frames: 0 };
            let func = kernels.function("mergepath_sort4_boundaries")?;
            // SAFETY: `Sort4BoundariesParams` is `mergepath_sort4_boundaries`'s parameter struct;
            // src holds n keys, the partition buffer `bounds` splits, the grid covers `bounds`
            // threads, and run is a multiple of the spacing `tile`.
            unsafe { gpu.launch(&func, partition_launch_config(bounds)?, &params) }?;
            let params = Sort4TileSplitsParams { keys: src_k, count, spacing, run, coarse: parts_ptr, num_tiles: tiles4 as i64, splits: splits_ptr, frames: 0, num_frames: 0 };
            let func = kernels.function("mergepath_sort4_tile_splits")?;
            // SAFETY: `Sort4TileSplitsParams` is `mergepath_sort4_tile_splits`'s parameter struct;
            // the coarse boundaries were written just above for the same (n, tile, run), the
            // partition buffer holds `tiles4` more splits after them, and the grid covers TILE_SPLIT_LANES * tiles4 threads.
            unsafe { gpu.launch(&func, partition_launch_config(TILE_SPLIT_LANES * tiles4)?, &params) }?;
            ("mergepath_sort4_merge", config(grid(tiles4)?, 2 * shape.threads), splits_ptr)
        };
        match values {
            None => {
                let params = SortMergeKeysParams { input: src_k, count, run, partitions: parts_arg, out: dst_k, frames: 0, num_frames: 0, guard: 0 };
                let func = match packed {
                    Some(p) if j + 1 == passes => p.function(&format!("{merge_name}_unpack"))?,
                    _ => kernels.function(&format!("{merge_name}_keys"))?,
                };
                // SAFETY: `SortMergeKeysParams` is the parameter struct of
                // `mergepath_sort_merge_keys` / `mergepath_sort4_merge_keys` (whose CTAs are the shape's or twice its threads, as configured), or their
                // packed variants for the last pass (same arguments, the derived keys out);
                // src and dst are distinct n-key buffers (one is the temp); the partitions are
                // null or were written just above for this pass's grid.
                unsafe { gpu.launch(&func, merge_cfg, &params) }?;
            }
            Some((_, _, word)) => {
                let params = SortMergePairsParams {
                    input: src_k,
                    input_vals: src_v.unwrap(),
                    count,
                    run,
                    partitions: parts_arg,
                    out: dst_k,
                    out_vals: dst_v.unwrap(),
                    frames: 0,
                    num_frames: 0,
                    guard: 0,
                };
                let func = kernels.for_values(&format!("{merge_name}_pairs"), word)?;
                // SAFETY: as above for the `_pairs_{4,8,16}` kernels (`SortMergePairsParams`)
                // with n values.
                unsafe { gpu.launch(&func, merge_cfg, &params) }?;
            }
        }
    }
    Ok(())
}

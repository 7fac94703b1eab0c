//! The launches of a sort: the blocksort, two-way and four-way passes, with the module's kernels.

use super::plan::{blocksort2_shared_bytes, mergesort_block, mergesort_plan, MergesortPass, mergesort4_boundary_count, mergesort4_tile_count};
use crate::tuning::{four_way_boundary_lanes, four_way_tile_split_lanes, small_sort_doubles_blocks, SEARCH_IN_MERGE_MAX_TILES};
use crate::error::{Error, Result};
use crate::device::kernels::Kernels;
use crate::device::contract::{
    BlocksortKeysParams, BlocksortPairsParams, Sort4BoundariesParams, Sort4TileSplitsParams, SortMergeKeysParams, SortMergePairsParams, SortPartitionsParams, Split4,
};
use crate::device::launch::grid_ctas;
use super::records::sort_records;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::key::{Comparator, Key, RecordOrder};
use crate::partition::launch::partition_launch_config;
use crate::tuning::{blocksort_shape, sort_pairs_shape, sort_shape, LaunchShape};
use cudarc::driver::LaunchConfig;

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
        return launch_sort_by_words::<K>(gpu, order, keys_in, keys_out, values, n);
    }
    let kernels = gpu.kernels::<K, C>()?;
    if let (true, Some((values_in, values_out, 4))) = (C::ZIPPED_PAIRS, values) {
        // Small keys with 4-byte values: the pairs zipped into u64 words, sorted by the keys'
        // halves with the zipped module's passes.
        let zipped = gpu.kernels::<u64, ZippedKeyLess>()?;
        return enqueue_sort(gpu, &zipped, Ends::Zipped { kernels: &kernels, values_in, values_out }, keys_in, keys_out, None, n, 8);
    }
    if let (Some(descending), None, true) = (C::PACKED_U64, values, (keys_in | keys_out).is_multiple_of(8)) {
        // The order is a packed u64's (and both buffers are aligned for u64: the output holds
        // the passes between, and the keys move as 8-byte words): the u64 sort, with the first
        // pass packing and the last unpacking.
        let u64_kernels = super::records::order_key_kernels(gpu, descending)?;
        return enqueue_sort(gpu, &u64_kernels, Ends::Packed(&kernels), keys_in, keys_out, None, n, 8);
    }
    enqueue_sort(gpu, &kernels, Ends::Plain, keys_in, keys_out, values, n, std::mem::size_of::<K>())
}

/// Enqueues the sort of `n >= 1` keys of `K` by their packed `order` (records, and derived keys
/// of 9 to 16 bytes), as [`launch_sort`]: the packed orders sorted as u64 keys with the
/// positions as values, then the keys and values gathered.
pub(crate) fn launch_sort_by_words<K: Key>(gpu: &Gpu, order: &RecordOrder, keys_in: u64, keys_out: u64, values: Option<(u64, u64, usize)>, n: usize) -> Result<()> {
    let sort_packed = |kernels: &Kernels, packed: u64, positions: u64, word: usize| launch_sort_positions(gpu, kernels, packed, positions, word, n);
    sort_records::<K>(gpu, order, keys_in, keys_out, values, n, sort_packed)
}

/// Enqueues the sort of the `n >= 1` `u64` keys at `keys` in place by the order of `kernels`' module
/// (a `u64` one, or a custom comparator's on records' addresses), their positions (`word`
/// bytes each, at `positions`) following.
pub(crate) fn launch_sort_positions(gpu: &Gpu, kernels: &Kernels, keys: u64, positions: u64, word: usize, n: usize) -> Result<()> {
    enqueue_sort(gpu, kernels, Ends::Plain, keys, keys, Some((positions, positions, word)), n, 8)
}

/// The order of the zipped pairs' `u64` words (`mergepath::zipped_key_less`): their high
/// halves, the keys' order bits. Its module holds a sort's passes only.
#[derive(Clone, Copy)]
struct ZippedKeyLess;

impl Comparator<u64> for ZippedKeyLess {
    const NAME: &'static str = "zipped_key_less";
    const CUDA_FUNCTOR: &'static str = "mergepath::zipped_key_less";
    const KERNELS: &'static [u8] = crate::fatbins::FATBIN_ZIPPED;
    fn is_less(&self, a: &u64, b: &u64) -> bool {
        a >> 32 < b >> 32
    }
}

/// How a sort's first pass reads its items and its last writes them, where the passes between
/// move them in another form.
#[derive(Clone, Copy)]
enum Ends<'a> {
    /// As the passes move them.
    Plain,
    /// Derived keys whose order is a packed u64's, alone: the key's kernels pack and unpack.
    Packed(&'a Kernels),
    /// Keys of at most 4 bytes with 4-byte values, zipped into u64 words: the key's kernels zip
    /// and unzip, reading `values_in` and writing `values_out`.
    Zipped { kernels: &'a Kernels, values_in: u64, values_out: u64 },
}

/// `launch_sort` with the module's kernels (`key_bytes` per key) for a sort of `n >= 1` keys;
/// with `Packed` or `Zipped` ends, the first and last passes are the key's kernels that pack
/// or zip the items and unpack or unzip them (reading `keys_in` and writing `keys_out` as the
/// caller's keys).
#[allow(clippy::too_many_arguments)]
fn enqueue_sort(
    gpu: &Gpu,
    kernels: &Kernels,
    ends: Ends,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    key_bytes: usize,
) -> Result<()> {
    let sort = SortLaunch::new(gpu, kernels, ends, keys_out, values, n, key_bytes)?;
    // Temp: keys, then values, then partitions; none without passes.
    let mut layout = TempLayout::default();
    let (keys_at, values_at, parts_at) = (layout.region(n * key_bytes), layout.region(n * sort.value_bytes()), layout.region(sort.partition_bytes()));
    let mut temp = if sort.plan.is_empty() { None } else { Some(gpu.temp(layout.bytes())?) };
    let temp_ptr = temp.as_mut().map(|t| t.device_ptr_mut());
    let base = temp_ptr.as_ref().map_or(0, |(p, _)| *p);
    let temp = Stages { keys: base + keys_at as u64, values: base + values_at as u64, partitions: base + parts_at as u64 };
    sort.blocksort(keys_in, values.map(|(v, _, _)| v), &temp)?;
    for j in 0..sort.plan.len() {
        let (merge_cfg, partitions) = sort.pass_partitions(j, &temp)?;
        sort.pass_merge(j, merge_cfg, partitions, &temp)?;
    }
    Ok(())
}

/// Where a sort's temporary stages and partitions live in its temp buffer.
struct Stages {
    keys: u64,
    values: u64,
    partitions: u64,
}

/// One sort's shapes, pass plan and buffers, and its launches: the blocksort, each pass's
/// partitions and merge.
struct SortLaunch<'a> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    ends: Ends<'a>,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    count: i64,
    key_bytes: usize,
    shape: LaunchShape,
    /// Two-way passes whose partitions are searched inside the merge kernel (a null partition
    /// array): small sorts.
    search_in_merge: bool,
    block: usize,
    doubled: bool,
    plan: Vec<MergesortPass>,
}

impl<'a> SortLaunch<'a> {
    /// Small sorts: two-way passes whose partitions are searched inside the merge kernel. Large
    /// ones: two-way passes with the partition kernel, or, where the tuning table says four
    /// ways, four-way passes (which write their coarse boundaries first) and one two-way pass
    /// when the levels are odd, or, for keys alone, a blocksort on doubled blocks instead. Small
    /// key sorts start from doubled blocks too where the tuning says so (one two-way pass fewer).
    fn new(gpu: &'a Gpu, kernels: &'a Kernels, ends: Ends<'a>, keys_out: u64, values: Option<(u64, u64, usize)>, n: usize, key_bytes: usize) -> Result<Self> {
        let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
        let block_tile = blocksort_shape(kernels.arch, key_bytes).tile();
        let count = i64::try_from(n).map_err(|_| Error::TooLarge { what: "sort length" })?;
        let search_in_merge = n.div_ceil(shape.tile()) <= SEARCH_IN_MERGE_MAX_TILES;
        let four_way = !search_in_merge && shape.ways == 4;
        let small_doubled = search_in_merge && small_sort_doubles_blocks(key_bytes, n, block_tile);
        let block = mergesort_block(n, block_tile, four_way, small_doubled, values.is_none());
        let plan = mergesort_plan(n, block, four_way);
        Ok(SortLaunch { gpu, kernels, ends, keys_out, values, n, count, key_bytes, shape, search_in_merge, block, doubled: block != block_tile, plan })
    }

    /// Bytes per item of the temp's second region: the values', or a zipped stage's.
    fn value_bytes(&self) -> usize {
        match self.ends {
            Ends::Zipped { .. } => 8,
            _ => self.values.map_or(0, |(_, _, w)| w),
        }
    }

    fn tiles(&self) -> usize {
        self.n.div_ceil(self.shape.tile())
    }

    /// The partition buffer: the largest any pass needs.
    fn partition_bytes(&self) -> usize {
        let (n, tile) = (self.n, self.shape.tile());
        let pass_bytes = |p: &MergesortPass| match p.ways {
            2 if self.search_in_merge => 0,
            2 => (self.tiles() + 1) * 8,
            _ => (mergesort4_boundary_count(n, p.run, tile) + mergesort4_tile_count(n, p.run, tile)) * std::mem::size_of::<Split4>(),
        };
        self.plan.iter().map(pass_bytes).max().unwrap_or(0)
    }

    /// Stage j (0: after the blocksort): its keys and values, in the output when passes - j is
    /// even, so the last pass writes the output. Zipped stages alternate between the temp's two
    /// regions, and only the last one, unzipped, is in the output.
    fn stage(&self, j: usize, temp: &Stages) -> (u64, Option<u64>) {
        let in_output = (self.plan.len() - j).is_multiple_of(2);
        if let Ends::Zipped { values_out, .. } = self.ends {
            return match (j == self.plan.len(), in_output) {
                (true, _) => (self.keys_out, Some(values_out)),
                (false, true) => (temp.values, None),
                (false, false) => (temp.keys, None),
            };
        }
        let keys = if in_output { self.keys_out } else { temp.keys };
        (keys, self.values.map(|(_, out, _)| if in_output { out } else { temp.values }))
    }

    /// The blocksort of `keys_in` (and `values_in`) into stage 0.
    fn blocksort(&self, keys_in: u64, values_in: Option<u64>, temp: &Stages) -> Result<()> {
        let (kernels, key_bytes) = (self.kernels, self.key_bytes);
        let block_shape = blocksort_shape(kernels.arch, key_bytes);
        let mut cfg = launch_config(grid_ctas(self.n.div_ceil(self.block), "sort grid")?, block_shape.threads);
        // The blocksort on doubled blocks keeps its keys in dynamic shared memory: more than
        // the default 48 KB for 8-byte keys, which its entry point is allowed below.
        let doubled_shared = blocksort2_shared_bytes(kernels.arch, key_bytes);
        if self.doubled {
            cfg.block_dim.0 *= 2;
            cfg.shared_mem_bytes = doubled_shared as u32;
        }
        let (k0, v0) = self.stage(0, temp);
        if let Ends::Zipped { kernels: zipping, values_in, .. } = self.ends {
            let params = BlocksortPairsParams { input: keys_in, input_vals: values_in, count: self.count, out: k0, out_vals: v0.unwrap_or(0) };
            let func = match self.doubled {
                _ if self.plan.is_empty() => zipping.blocksort_zip_unzip()?,
                true => zipping.allow_dynamic_shared(zipping.blocksort2_zip()?, doubled_shared)?,
                false => zipping.blocksort_zip()?,
            };
            // SAFETY: `BlocksortPairsParams` is the parameter struct of the zipped blocksorts
            // (`mergepath_blocksort{,2}_zip`, `_zip_unzip`: 4-byte values); their blocks are the
            // u64 shape's, as `block_shape` here (key_bytes 8), doubled as above; keys_in holds
            // n keys and values_in n 4-byte values; stage 0 is n u64 words in the temp, or with
            // no pass the caller's n keys and values (which may be the inputs: each CTA reads its
            // block before writing it).
            return unsafe { self.gpu.launch(&func, cfg, &params) };
        }
        let Some((vals_in, word)) = values_in.zip(self.values.map(|(_, _, w)| w)) else {
            let params = BlocksortKeysParams { input: keys_in, count: self.count, out: k0 };
            let func = match (self.ends, self.doubled) {
                (Ends::Packed(p), _) if self.plan.is_empty() => p.blocksort_pack_unpack()?,
                (Ends::Packed(p), true) => p.allow_dynamic_shared(p.blocksort2_pack()?, doubled_shared)?,
                (Ends::Packed(p), false) => p.blocksort_pack()?,
                (_, true) => kernels.allow_dynamic_shared(kernels.blocksort2_keys()?, doubled_shared)?,
                (_, false) => kernels.blocksort_keys()?,
            };
            // SAFETY: `BlocksortKeysParams` is `mergepath_blocksort_keys`'s parameter struct (and
            // the packed variants', the same with the derived keys in, and out where the blocksort is
            // the whole sort); the kernel's block is `block_shape` (same table row: packed keys
            // are 8 bytes, as u64), or twice its threads with the doubled block's keys in
            // dynamic shared memory (the `blocksort2` kernels, allowed that much just above),
            // the grid covers ceil(n / block) blocks, and keys_in and stage 0 hold n keys
            // (stage 0 may be keys_in itself: each CTA reads its block before writing it).
            return unsafe { self.gpu.launch(&func, cfg, &params) };
        };
        let params = BlocksortPairsParams { input: keys_in, input_vals: vals_in, count: self.count, out: k0, out_vals: v0.unwrap() };
        let func = kernels.blocksort_pairs(word)?;
        // SAFETY: as above for `mergepath_blocksort_pairs_{4,8,16}` (`BlocksortPairsParams`),
        // with n values of `word` bytes in, and in stage 0.
        unsafe { self.gpu.launch(&func, cfg, &params) }
    }

    /// Pass `j`'s partitions (none where the merge kernel searches them): the merge's launch
    /// and the partitions it reads (0: null).
    fn pass_partitions(&self, j: usize, temp: &Stages) -> Result<(LaunchConfig, u64)> {
        let (kernels, pass, tile) = (self.kernels, &self.plan[j], self.shape.tile());
        let (src_k, _) = self.stage(j, temp);
        let (count, run, spacing, parts_ptr) = (self.count, pass.run as i64, tile as i64, temp.partitions);
        if pass.ways == 2 {
            let grid = launch_config(grid_ctas(self.tiles(), "sort grid")?, self.shape.threads);
            if self.search_in_merge {
                return Ok((grid, 0));
            }
            let parts = self.tiles() + 1;
            let params = SortPartitionsParams { keys: src_k, count, spacing, run, num_partitions: parts as i64, partitions: parts_ptr };
            let func = kernels.sort_partitions()?;
            // SAFETY: `SortPartitionsParams` is `mergepath_sort_partitions`'s parameter struct; src holds n keys, the partition
            // buffer `parts` i64, the grid covers `parts` threads; run (a whole number of
            // blocks) is a multiple of the spacing `tile`.
            unsafe { self.gpu.launch(&func, partition_launch_config(parts)?, &params) }?;
            return Ok((grid, parts_ptr));
        }
        // The coarse boundaries, then each output tile's exact split (after them in the
        // partition buffer).
        let bounds = mergesort4_boundary_count(self.n, pass.run, tile);
        let tiles4 = mergesort4_tile_count(self.n, pass.run, tile);
        let splits_ptr = parts_ptr + (bounds * std::mem::size_of::<Split4>()) as u64;
        let (boundary_lanes, split_lanes) = (four_way_boundary_lanes(bounds), four_way_tile_split_lanes(tiles4));
        let params = Sort4BoundariesParams { keys: src_k, count, spacing, run, num_boundaries: bounds as i64, lanes: boundary_lanes as i32, splits: parts_ptr, frames: 0, num_frames: 0 };
        let func = kernels.sort4_boundaries()?;
        // SAFETY: `Sort4BoundariesParams` is `mergepath_sort4_boundaries`'s parameter struct;
        // src holds n keys, the partition buffer `bounds` splits, the grid covers `bounds`
        // groups of `boundary_lanes` threads (a power of two up to 32), and run is a multiple of the
        // spacing `tile`.
        unsafe { self.gpu.launch(&func, partition_launch_config(boundary_lanes * bounds)?, &params) }?;
        let params = Sort4TileSplitsParams { keys: src_k, count, spacing, tile: 2 * spacing, run, coarse: parts_ptr, num_tiles: tiles4 as i64, lanes: split_lanes as i32, splits: splits_ptr, frames: 0, num_frames: 0 };
        let func = kernels.sort4_tile_splits()?;
        // SAFETY: `Sort4TileSplitsParams` is `mergepath_sort4_tile_splits`'s parameter struct;
        // the coarse boundaries were written just above for the same (n, tile, run), the
        // partition buffer holds `tiles4` more splits after them, and the grid covers `tiles4`
        // groups of `split_lanes` threads (a power of two up to 32).
        unsafe { self.gpu.launch(&func, partition_launch_config(split_lanes * tiles4)?, &params) }?;
        Ok((launch_config(grid_ctas(tiles4, "sort grid")?, 2 * self.shape.threads), splits_ptr))
    }

    /// Pass `j`'s merge, from stage j into stage j + 1, with the partitions written for it.
    fn pass_merge(&self, j: usize, cfg: LaunchConfig, partitions: u64, temp: &Stages) -> Result<()> {
        let ((src_k, src_v), (dst_k, dst_v)) = (self.stage(j, temp), self.stage(j + 1, temp));
        let (count, run, four_way) = (self.count, self.plan[j].run as i64, self.plan[j].ways == 4);
        if let (Ends::Zipped { kernels: zipping, values_out, .. }, true) = (self.ends, j + 1 == self.plan.len()) {
            let params = SortMergePairsParams { input: src_k, input_vals: 0, count, run, partitions, out: dst_k, out_vals: values_out, frames: 0, num_frames: 0, guard: 0 };
            let func = if four_way { zipping.sort4_merge_unzip()? } else { zipping.sort_merge_unzip()? };
            // SAFETY: `SortMergePairsParams` is the parameter struct of the zipped last passes
            // (`mergepath_sort_merge_unzip`, `mergepath_sort4_merge_unzip`), whose CTAs are the
            // u64 shape's as `cfg` (key_bytes 8, no values); src is n u64 words in the temp, the
            // outputs hold n keys and n 4-byte values; the partitions are null or were written
            // just before for this pass's grid.
            return unsafe { self.gpu.launch(&func, cfg, &params) };
        }
        let Some((_, _, word)) = self.values else {
            let params = SortMergeKeysParams { input: src_k, count, run, partitions, out: dst_k, frames: 0, num_frames: 0, guard: 0 };
            let func = match (self.ends, four_way) {
                (Ends::Packed(p), false) if j + 1 == self.plan.len() => p.sort_merge_unpack()?,
                (Ends::Packed(p), true) if j + 1 == self.plan.len() => p.sort4_merge_unpack()?,
                (_, false) => self.kernels.sort_merge_keys()?,
                (_, true) => self.kernels.sort4_merge_keys()?,
            };
            // SAFETY: `SortMergeKeysParams` is the parameter struct of
            // `mergepath_sort_merge_keys` / `mergepath_sort4_merge_keys` (whose CTAs are the shape's or twice its threads, as configured), or their
            // packed variants for the last pass (same arguments, the derived keys out);
            // src and dst are distinct n-key buffers (one is the temp); the partitions are
            // null or were written just before for this pass's grid.
            return unsafe { self.gpu.launch(&func, cfg, &params) };
        };
        let params = SortMergePairsParams { input: src_k, input_vals: src_v.unwrap(), count, run, partitions, out: dst_k, out_vals: dst_v.unwrap(), frames: 0, num_frames: 0, guard: 0 };
        let func = if four_way { self.kernels.sort4_merge_pairs(word)? } else { self.kernels.sort_merge_pairs(word)? };
        // SAFETY: as above for the `_pairs_{4,8,16}` kernels (`SortMergePairsParams`) with n
        // values.
        unsafe { self.gpu.launch(&func, cfg, &params) }
    }
}

/// One-dimensional launch of `ctas` CTAs of `threads`, no dynamic shared memory.
fn launch_config(ctas: u32, threads: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

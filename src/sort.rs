//! Stable mergesort of keys, key/value pairs and indices.
//!
//! A sort is one blocksort pass, in which each CTA sorts a block of items on its own
//! (`cta_blocksort` in `kernels/mergepath/cta.cuh`), then merge passes over the sorted runs
//! ([`mergesort_plan`]): `ceil(log2(blocks))` levels of pairwise merging, done two levels at a
//! time by four-way passes, with one two-way pass first when the number of levels is odd.
//!
//! - A two-way pass merges pairs of runs, each pair a *frame* of `2 * run` items
//!   ([`mergesort_frame`]), as the two-phase merge of [`crate::partition`]: one Merge Path search
//!   per output tile inside its frame, then the merge kernel.
//! - A four-way pass merges frames of four runs A, B, C, D, in output tiles of two merge tiles
//!   each ([`mergesort4_tiles`]). Its partition first takes the elements at every tile-th
//!   position of the merges A + B and C + D as coarse boundaries: each boundary's split of all
//!   four runs is one Merge Path search in its own pair and one binary search in each run of
//!   the other pair, never a nested search. Between two boundaries lie at most a tile of A + B
//!   and a tile of C + D. Then each output tile's exact split is searched inside the bracket of
//!   boundaries around it: the merge path of the merges A + B and C + D, four probes a round,
//!   each a Merge Path search in both pairs. A CTA merges its tile's A with B and C with D in
//!   one pass over its threads, then the two results, all in shared memory.
//!
//! The passes ping-pong between the caller's buffer and one temporary buffer, arranged so the
//! last pass writes the caller's buffer.
//!
//! Peak device memory beyond the caller's buffers: one buffer of `n` keys (and `n` values for
//! pairs), plus the partitions: 32 bytes per four-way coarse boundary and per four-way tile
//! (about `n / tile` and `n / (2 tile)` of them) and, for a two-way pass of more than 1,024
//! tiles, 8 bytes per tile; none when the input fits one block. It comes from the [`Gpu`]'s
//! temp pool, so repeated sorts of the same size do not allocate.
//!
//! Comparators must be strict weak orders (the built-in ones are); one that is not (a custom
//! comparator such as `a.x <= b.x`) gives an unspecified output, items possibly repeated or
//! missing, never an access out of bounds. Sorting is stable: equal keys keep their input order.

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{value_word, Comparator, Greater, Key, Less, Value};
use crate::partition::{merge_path, partition_launch_config};
use crate::tuning::{blocksort_shape, sort_pairs_shape, sort_shape};
use cudarc::driver::{sys, CudaFunction, DevicePtr, DevicePtrMut, LaunchConfig};
use std::ops::Range;

/// Sorts `keys` in place by `comp`, stably. Any length, including 0 and more than 2^31 items.
/// Returns without waiting for the GPU.
pub fn sort_keys<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, comp: C) -> Result<()> {
    let n = keys.len();
    let keys = gpu.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, None, n, comp)
}

/// Sorts `input` into `output[..input.len()]` by `comp`, stably, leaving `input` as it is.
/// `output` may be longer (the rest is left as it is) and must not overlap `input`.
pub fn sort_keys_copy<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    input: &impl DevicePtr<K>,
    output: &mut impl DevicePtrMut<K>,
    comp: C,
) -> Result<()> {
    let align = std::mem::align_of::<K>();
    let input = gpu.input("input", input, align)?;
    let output = gpu.output("output", output, align, input.len, &[&input])?;
    launch_sort::<K, C>(gpu, input.ptr, output.ptr, None, input.len, comp)
}

/// Sorts `keys` in place by `comp`, stably, moving `values` (same length, any [`Value`]) with
/// their keys. Returns without waiting for the GPU.
pub fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let (keys, values) = gpu.inplace_pairs(keys, values, "values", word)?;
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, Some((values.ptr, values.ptr, word)), keys.len, comp)
}

/// Sorts `keys_in`/`values_in` pairs into `keys_out`/`values_out` (at least as long) by `comp`,
/// stably, leaving the inputs as they are. Outputs must not overlap inputs or each other.
pub fn sort_pairs_copy<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: &impl DevicePtr<K>,
    values_in: &impl DevicePtr<V>,
    keys_out: &mut impl DevicePtrMut<K>,
    values_out: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let align = std::mem::align_of::<K>();
    let ki = gpu.input("keys_in", keys_in, align)?;
    let vi = gpu.input("values_in", values_in, word)?;
    if vi.len != ki.len {
        return Err(Error::LengthMismatch { what: "values_in", expected: ki.len, got: vi.len });
    }
    let ko = gpu.output("keys_out", keys_out, align, ki.len, &[&ki, &vi])?;
    let vo = gpu.output("values_out", values_out, word, ki.len, &[&ki, &vi, &ko])?;
    launch_sort::<K, C>(gpu, ki.ptr, ko.ptr, Some((vi.ptr, vo.ptr, word)), ki.len, comp)
}

/// Index types [`sort_indices`] can write: `u32` (up to 2^32 keys) and `u64`.
pub trait SortIndex: Value + private::Sealed {
    /// The largest key count whose positions this type holds.
    const MAX_COUNT: usize;
}
impl SortIndex for u32 {
    const MAX_COUNT: usize = u32::MAX as usize + 1;
}
impl SortIndex for u64 {
    const MAX_COUNT: usize = usize::MAX;
}
mod private {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// Sorts `keys` in place by `comp`, stably, and writes to `indices` (same length) the original
/// position of each sorted key, as Modern GPU's MergesortIndices: afterwards `keys[i]` was at
/// `indices[i]`. [`Error::TooLarge`] for `u32` indices past 2^32 keys.
pub fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    indices: &mut impl DevicePtrMut<I>,
    comp: C,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let (keys, indices) = gpu.inplace_pairs(keys, indices, "indices", word)?;
    let n = keys.len;
    if n > I::MAX_COUNT {
        return Err(Error::TooLarge { what: "u32 indices (more than 2^32 keys)" });
    }
    if n > 0 {
        let kernels = gpu.kernels::<K, C>()?;
        launch_iota(gpu, &kernels, &indices, word)?;
    }
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, Some((indices.ptr, indices.ptr, word)), n, comp)
}

/// One merge pass of a sort: it merges sorted runs of `run` items, `ways` (2 or 4) at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergesortPass {
    /// Length of the sorted runs the pass reads (the last run may be shorter).
    pub run: usize,
    /// Runs merged into one: 2 or 4.
    pub ways: usize,
}

/// Levels of pairwise merging after the blocksort of `n` items in blocks of `block` items:
/// `ceil(log2(ceil(n / block)))`.
pub fn mergesort_levels(n: usize, block: usize) -> u32 {
    let blocks = n.div_ceil(block);
    if blocks <= 1 {
        0
    } else {
        usize::BITS - (blocks - 1).leading_zeros()
    }
}

/// The block a sort of `n` keys starts from, given the tuning's `block`: twice it where the
/// passes are four-way (`four_way`), the sort moves keys alone (`keys_only`: the doubled
/// blocksort has no values) and the levels are odd and at least 3, so the sort runs one level
/// fewer and no two-way pass (a blocksort round on doubled blocks costs less than a pass).
pub fn mergesort_block(n: usize, block: usize, four_way: bool, keys_only: bool) -> usize {
    let levels = mergesort_levels(n, block);
    if four_way && keys_only && levels % 2 == 1 && levels >= 3 {
        2 * block
    } else {
        block
    }
}

/// Dynamic shared memory of the blocksort on doubled blocks: its keys.
fn blocksort2_shared_bytes(arch: u32, key_bytes: usize) -> usize {
    2 * blocksort_shape(arch, key_bytes).tile() * key_bytes
}

/// The blocksort on doubled blocks `name`, allowed (when first looked up) the dynamic shared
/// memory its keys take: more than the default 48 KB for 8-byte keys.
fn doubled_blocksort(kernels: &Kernels, name: &str, key_bytes: usize) -> Result<CudaFunction> {
    kernels.function_with(name, |f| {
        let bytes = blocksort2_shared_bytes(kernels.arch, key_bytes);
        Ok(f.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)?)
    })
}

/// The merge passes after the blocksort of `n` items in blocks of `block` items:
/// [`mergesort_levels`] levels of pairwise merging. With `four_way`, two levels per four-way
/// pass and one two-way pass first when the number of levels is odd; otherwise one two-way
/// pass per level.
pub fn mergesort_plan(n: usize, block: usize, four_way: bool) -> Vec<MergesortPass> {
    let mut levels = mergesort_levels(n, block);
    let mut run = block;
    let mut plan = Vec::new();
    while levels > 0 && (levels % 2 == 1 || !four_way) {
        plan.push(MergesortPass { run, ways: 2 });
        run = run.saturating_mul(2); // saturates only past the last pass
        levels -= 1;
    }
    while levels > 0 {
        plan.push(MergesortPass { run, ways: 4 });
        run = run.saturating_mul(4);
        levels -= 2;
    }
    plan
}

/// The pair of sorted runs that output position `diag` of a merge pass over `n` items with runs
/// of `run` items belongs to: A is `begin .. begin + a_count`, B the `b_count` items after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergesortFrame {
    /// First item of the frame (of its A run).
    pub begin: usize,
    /// Items in the A run.
    pub a_count: usize,
    /// Items in the B run.
    pub b_count: usize,
}

/// The frame of `diag` (the device's `find_mergesort_frame`).
pub fn mergesort_frame(n: usize, run: usize, diag: usize) -> MergesortFrame {
    let begin = diag / (2 * run) * (2 * run);
    let a_count = (n - begin).min(run);
    let b_count = (n - begin - a_count).min(run);
    MergesortFrame { begin, a_count, b_count }
}

/// The input ranges (A run slice, B run slice) each output tile of a merge pass merges, as the
/// device computes them (`mergesort_partition` and `mergesort_range`). `keys`
/// holds sorted runs of `run` items; `run` must be a multiple of `tile`.
pub fn mergesort_tile_ranges<T>(keys: &[T], run: usize, tile: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<(Range<usize>, Range<usize>)> {
    assert!(tile > 0 && run % tile == 0, "runs must be whole tiles");
    let n = keys.len();
    let partition = |diag: usize| {
        let f = mergesort_frame(n, run, diag);
        let a = &keys[f.begin..f.begin + f.a_count];
        let b = &keys[f.begin + f.a_count..f.begin + f.a_count + f.b_count];
        merge_path(a, b, diag - f.begin, &is_less)
    };
    (0..n.div_ceil(tile))
        .map(|t| {
            let (d0, d1) = (t * tile, ((t + 1) * tile).min(n));
            let f = mergesort_frame(n, run, d0);
            let end_local = d1 - f.begin;
            let a0 = partition(d0);
            let a1 = if end_local == f.a_count + f.b_count { f.a_count } else { partition(d1) };
            let b_base = f.begin + f.a_count;
            (f.begin + a0..f.begin + a1, b_base + (d0 - f.begin - a0)..b_base + (end_local - a1))
        })
        .collect()
}

/// Sorts of at most this many tiles merge two ways, each pass searching its partitions inside
/// the merge kernel (one launch per pass); larger sorts use the partition kernel for two-way
/// passes and merge four ways where the tuning table says so. About one wave of CTAs on an
/// H100: at 356 tiles (2^20 u32 keys) the in-kernel search measured faster than the partition
/// kernel and one-launch two-way passes faster than four-way ones, whose boundary searches are
/// latency-bound there; at 5,699 tiles (2^24) in-kernel searches were much slower, every wave of
/// CTAs waiting on its own searches (BENCHMARKS.md).
const SEARCH_IN_MERGE_MAX_TILES: usize = 1024;

/// Items of each of the four runs of frame `frame` of a four-way pass over `n` items with runs
/// of `run` (the device's `find_mergesort4_frame`): the last frame's runs may be short or empty.
fn mergesort4_frame(n: usize, run: usize, frame: usize) -> (usize, [usize; 4]) {
    let begin = frame * 4 * run;
    let mut rest = n - begin;
    let counts = [0; 4].map(|_| {
        let c = rest.min(run);
        rest -= c;
        c
    });
    (begin, counts)
}

/// Coarse boundaries of a frame with runs of `c` items: one every `tile` items, rounded up, of
/// A + B, and of C + D.
fn mergesort4_pair_boundaries(c: &[usize; 4], tile: usize) -> (usize, usize) {
    ((c[0] + c[1]).div_ceil(tile), (c[2] + c[3]).div_ceil(tile))
}

/// Coarse boundaries of a four-way pass over `n` items with runs of `run` and tiles of `tile`
/// (the merge passes' tile; a four-way CTA merges two): every frame before the last is full,
/// with `4 * run / tile`.
pub fn mergesort4_boundary_count(n: usize, run: usize, tile: usize) -> usize {
    let frames = n.div_ceil(4 * run);
    if frames == 0 {
        return 0;
    }
    let (ab, cd) = mergesort4_pair_boundaries(&mergesort4_frame(n, run, frames - 1).1, tile);
    (frames - 1) * (4 * run / tile) + ab + cd
}

/// Output tiles (CTAs) of a four-way pass over `n` items with runs of `run`: `2 * tile` items
/// each, every frame before the last with `2 * run / tile`.
pub fn mergesort4_tile_count(n: usize, run: usize, tile: usize) -> usize {
    let frames = n.div_ceil(4 * run);
    if frames == 0 {
        return 0;
    }
    (frames - 1) * (2 * run / tile) + (n - (frames - 1) * 4 * run).div_ceil(2 * tile)
}

/// The input ranges of the four runs (A, B, C, D, global indices) each output tile of a
/// four-way pass merges, in tile (CTA) order, as the device computes them
/// (`mergesort4_boundaries_body`, `mergesort4_tile_splits_body` and `mergesort4_pass_tile`):
/// every tile but a frame's last merges exactly `2 * tile` items. `keys` holds sorted runs of
/// `run` items; `run` must be a multiple of `tile`.
pub fn mergesort4_tiles<T>(keys: &[T], run: usize, tile: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<[Range<usize>; 4]> {
    assert!(tile > 0 && run % tile == 0, "runs must be whole tiles");
    let n = keys.len();
    let mut tiles = Vec::new();
    for frame in 0..n.div_ceil(4 * run) {
        let (begin, c) = mergesort4_frame(n, run, frame);
        let mut starts = [0; 4];
        for r in 1..4 {
            starts[r] = starts[r - 1] + c[r - 1];
        }
        let lists: [&[T]; 4] = [0, 1, 2, 3].map(|r| &keys[begin + starts[r]..begin + starts[r] + c[r]]);
        // A coarse boundary of pair p (runs 2p, 2p + 1): the element at position j * tile of
        // the pair's merge, its split of all four runs, and its place among the frame's
        // boundaries.
        let boundary = |p: usize, j: usize| -> (usize, [usize; 4]) {
            let (p0, p1, q0, q1) = (lists[2 * p], lists[2 * p + 1], lists[2 - 2 * p], lists[3 - 2 * p]);
            let a = merge_path(p0, p1, j * tile, &is_less);
            let b = j * tile - a;
            let x = merge_item_at(p0, p1, [a, b], &is_less);
            // Q after P: Q's items strictly before x; Q before P: those not after x.
            let before = |q: &[T]| q.partition_point(|y| if p == 0 { is_less(y, x) } else { !is_less(x, y) });
            let (c0, c1) = (before(q0), before(q1));
            let split = if p == 0 { [a, b, c0, c1] } else { [c0, c1, a, b] };
            (j + (c0 + c1).div_ceil(tile), split)
        };
        let (ab, cd) = mergesort4_pair_boundaries(&c, tile);
        let mut bounds = vec![[0; 4]; ab + cd];
        for j in 0..ab + cd {
            let (slot, split) = if j < ab { boundary(0, j) } else { boundary(1, j - ab) };
            bounds[slot] = split;
        }
        // Each tile start's split: a boundary's slot is ceil(its rank / tile), so boundaries
        // 2 t and 2 t + 1 (or the frame's end) bracket tile t's first output, in which
        // mergesort4_tile_split searches it.
        let total: usize = c.iter().sum();
        let mut splits: Vec<[usize; 4]> = (0..total.div_ceil(2 * tile))
            .map(|t| {
                let (lo, hi) = (bounds[2 * t], bounds.get(2 * t + 1).copied().unwrap_or(c));
                mergesort4_tile_split(&lists, lo, hi, t * 2 * tile, &is_less)
            })
            .collect();
        splits.push(c);
        for w in splits.windows(2) {
            tiles.push([0, 1, 2, 3].map(|r| begin + starts[r] + w[0][r]..begin + starts[r] + w[1][r]));
        }
    }
    tiles
}

/// Lanes per output tile of the device's exact four-way split search
/// (`mergepath::TILE_SPLIT_LANES`): probes per round of [`mergesort4_tile_split`].
const TILE_SPLIT_LANES: usize = 4;

/// The point at diagonal `diag` of the merge path of `x` and `y` (the counts of each before
/// it), searched between known points `lo` and `hi` of the path, as the device's
/// `merge_path_between2` does.
fn merge_path_between<T>(x: &[T], y: &[T], lo: [usize; 2], hi: [usize; 2], diag: usize, is_less: impl Fn(&T, &T) -> bool) -> [usize; 2] {
    let a = lo[0] + merge_path(&x[lo[0]..hi[0]], &y[lo[1]..hi[1]], diag - lo[0] - lo[1], is_less);
    [a, diag - a]
}

/// The item the merge of `x` and `y` puts out at path point `p` (not the end).
fn merge_item_at<'a, T>(x: &'a [T], y: &'a [T], p: [usize; 2], is_less: impl Fn(&T, &T) -> bool) -> &'a T {
    if p[1] >= y.len() || (p[0] < x.len() && !is_less(&y[p[1]], &x[p[0]])) {
        &x[p[0]]
    } else {
        &y[p[1]]
    }
}

/// The split of a four-way frame's runs at output position `rank`, as the device's
/// `mergesort4_tile_splits_body` searches it inside the bracket of coarse boundaries `lo` and
/// `hi`: k (the items of A + B before `rank`) is the merge path of the pairs' merges at
/// `rank`, searched with `TILE_SPLIT_LANES` probes a round, each probe a merge-path search in
/// each pair, all bounded by the path points of the probes that bracket the answer so far.
fn mergesort4_tile_split<T>(lists: &[&[T]; 4], lo: [usize; 4], hi: [usize; 4], rank: usize, is_less: &impl Fn(&T, &T) -> bool) -> [usize; 4] {
    let lanes = TILE_SPLIT_LANES;
    let (mut below, mut above) = ([[lo[0], lo[1]], [lo[2], lo[3]]], [[hi[0], hi[1]], [hi[2], hi[3]]]);
    let mut begin = (lo[0] + lo[1]).max(rank.saturating_sub(hi[2] + hi[3]));
    let mut end = (hi[0] + hi[1]).min(rank - (lo[2] + lo[3]));
    while begin < end {
        let len = end - begin;
        let (first, probe) = (begin, |l: usize| len * (l + 1) / (lanes + 1));
        // Each lane's path points in both pairs, and whether its probe takes from A + B.
        let probes: Vec<([usize; 2], [usize; 2], bool)> = (0..lanes)
            .map(|l| {
                let m = first + probe(l);
                let ab = merge_path_between(lists[0], lists[1], below[0], above[0], m, is_less);
                let cd = merge_path_between(lists[2], lists[3], below[1], above[1], rank - 1 - m, is_less);
                let takes = !is_less(merge_item_at(lists[2], lists[3], cd, is_less), merge_item_at(lists[0], lists[1], ab, is_less));
                (ab, cd, takes)
            })
            .collect();
        let f = probes.iter().position(|p| !p.2).unwrap_or(lanes);
        if f > 0 {
            begin = first + probe(f - 1) + 1;
            (below[0], above[1]) = (probes[f - 1].0, probes[f - 1].1);
        }
        if f < lanes {
            end = first + probe(f);
            (above[0], below[1]) = (probes[f].0, probes[f].1);
        }
    }
    let ab = merge_path_between(lists[0], lists[1], below[0], above[0], begin, is_less);
    let cd = merge_path_between(lists[2], lists[3], below[1], above[1], rank - begin, is_less);
    [ab[0], ab[1], cd[0], cd[1]]
}

/// An upper bound of the temporary device memory a sort of `n` items (keys of `key_bytes`,
/// values of `value_bytes`) takes from the temp pool: the ping-pong buffer (each lane rounded to
/// 256 bytes) and the partitions, at most 48 bytes per tile of at least 512 items.
pub(crate) fn sort_temp_bytes(n: usize, key_bytes: usize, value_bytes: usize) -> usize {
    let round = |b: usize| b.div_ceil(256) * 256;
    round(n * key_bytes) + round(n * value_bytes) + 48 * (n / 512 + 2)
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
    let count = KernelArg::I64(i64::try_from(n).map_err(|_| Error::TooLarge { what: "sort length" })?);

    // Small sorts: two-way passes whose partitions are searched inside the merge kernel (given
    // a null partition array). Large ones: two-way passes with the partition kernel, or, where
    // the tuning table says four ways, four-way passes (which write their segment boundaries
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
        _ => (mergesort4_boundary_count(n, p.run, tile) + mergesort4_tile_count(n, p.run, tile)) * std::mem::size_of::<[i64; 4]>(),
    };
    let parts_bytes = plan.iter().map(pass_partition_bytes).max().unwrap_or(0);

    // Temp layout: keys, then values, then partitions, each 256-byte aligned; none without passes.
    let round = |b: usize| b.div_ceil(256) * 256;
    let value_bytes = values.map_or(0, |(_, _, w)| w);
    let tmp_keys_bytes = round(n * key_bytes);
    let tmp_values_bytes = round(n * value_bytes);
    let mut temp = if plan.is_empty() { None } else { Some(gpu.temp(tmp_keys_bytes + tmp_values_bytes + parts_bytes)?) };
    let temp_ptr = temp.as_mut().map(|t| t.device_ptr_mut());
    let base = temp_ptr.as_ref().map_or(0, |(p, _)| *p);
    let (tmp_keys, tmp_values, parts_ptr) = (base, base + tmp_keys_bytes as u64, base + (tmp_keys_bytes + tmp_values_bytes) as u64);

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
            let args = [KernelArg::Ptr(keys_in), count, KernelArg::Ptr(k0)];
            let func = match (packed, doubled) {
                (Some(p), _) if plan.is_empty() => p.function("mergepath_blocksort_pack_unpack")?,
                (Some(p), true) => doubled_blocksort(p, "mergepath_blocksort2_pack", key_bytes)?,
                (Some(p), false) => p.function("mergepath_blocksort_pack")?,
                (None, true) => doubled_blocksort(kernels, "mergepath_blocksort2_keys", key_bytes)?,
                (None, false) => kernels.function("mergepath_blocksort_keys")?,
            };
            // SAFETY: matches `mergepath_blocksort_keys` (and the packed variants, whose
            // arguments are the same with the derived keys in, and out where the blocksort is
            // the whole sort); the kernel's block is `block_shape` (same table row: packed keys
            // are 8 bytes, as u64), or twice its threads with the doubled block's keys in
            // dynamic shared memory (the `blocksort2` kernels, allowed that much when loaded),
            // the grid covers ceil(n / block) blocks, and keys_in and stage 0 hold n keys
            // (stage 0 may be keys_in itself: each CTA reads its block before writing it).
            unsafe { gpu.launch(&func, block_cfg, &args) }?;
        }
        Some((vals_in, _, word)) => {
            let args = [KernelArg::Ptr(keys_in), KernelArg::Ptr(vals_in), count, KernelArg::Ptr(k0), KernelArg::Ptr(v0.unwrap())];
            let func = kernels.for_values("mergepath_blocksort_pairs", word)?;
            // SAFETY: as above for `mergepath_blocksort_pairs_{4,8,16}`, with n values of `word`
            // bytes in, and in stage 0.
            unsafe { gpu.launch(&func, block_cfg, &args) }?;
        }
    }

    for (j, pass) in plan.iter().enumerate() {
        let run = KernelArg::I64(pass.run as i64);
        let ((src_k, src_v), (dst_k, dst_v)) = (stage(j), stage(j + 1));
        // The pass's key and pair kernels, merge launch, and partitions (null: searched in the
        // merge kernel).
        let (merge_name, merge_cfg, parts_arg) = if pass.ways == 2 {
            let parts = tiles + 1;
            if !search_in_merge {
                let args = [KernelArg::Ptr(src_k), count, KernelArg::I64(tile as i64), run, KernelArg::I64(parts as i64), KernelArg::Ptr(parts_ptr)];
                let func = kernels.function("mergepath_sort_partitions")?;
                // SAFETY: matches `mergepath_sort_partitions`; src holds n keys, the partition
                // buffer `parts` i64, the grid covers `parts` threads; run (a whole number of
                // blocks) is a multiple of the spacing `tile`.
                unsafe { gpu.launch(&func, partition_launch_config(parts)?, &args) }?;
            }
            let parts_arg = if search_in_merge { 0 } else { parts_ptr };
            ("mergepath_sort_merge", config(grid(tiles)?, shape.threads), parts_arg)
        } else {
            // The coarse boundaries, then each output tile's exact split (after them in the
            // partition buffer).
            let bounds = mergesort4_boundary_count(n, pass.run, tile);
            let tiles4 = mergesort4_tile_count(n, pass.run, tile);
            let splits_ptr = parts_ptr + (bounds * std::mem::size_of::<[i64; 4]>()) as u64;
            let args = [KernelArg::Ptr(src_k), count, KernelArg::I64(tile as i64), run, KernelArg::I64(bounds as i64), KernelArg::Ptr(parts_ptr)];
            let func = kernels.function("mergepath_sort4_boundaries")?;
            // SAFETY: matches `mergepath_sort4_boundaries`; src holds n keys, the partition
            // buffer `bounds` 32-byte splits, the grid covers `bounds` threads, and run is a
            // multiple of the spacing `tile`.
            unsafe { gpu.launch(&func, partition_launch_config(bounds)?, &args) }?;
            let args = [
                KernelArg::Ptr(src_k),
                count,
                KernelArg::I64(tile as i64),
                run,
                KernelArg::Ptr(parts_ptr),
                KernelArg::I64(tiles4 as i64),
                KernelArg::Ptr(splits_ptr),
            ];
            let func = kernels.function("mergepath_sort4_tile_splits")?;
            // SAFETY: matches `mergepath_sort4_tile_splits`; the coarse boundaries were written
            // just above for the same (n, tile, run), the partition buffer holds `tiles4` more
            // 32-byte splits after them, and the grid covers TILE_SPLIT_LANES * tiles4 threads.
            unsafe { gpu.launch(&func, partition_launch_config(TILE_SPLIT_LANES * tiles4)?, &args) }?;
            ("mergepath_sort4_merge", config(grid(tiles4)?, 2 * shape.threads), splits_ptr)
        };
        match values {
            None => {
                let args = [KernelArg::Ptr(src_k), count, run, KernelArg::Ptr(parts_arg), KernelArg::Ptr(dst_k)];
                let func = match packed {
                    Some(p) if j + 1 == passes => p.function(&format!("{merge_name}_unpack"))?,
                    _ => kernels.function(&format!("{merge_name}_keys"))?,
                };
                // SAFETY: matches `mergepath_sort_merge_keys` / `mergepath_sort4_merge_keys`
                // (whose CTAs are the shape's or twice its threads, as configured), or their
                // packed variants for the last pass (same arguments, the derived keys out);
                // src and dst are distinct n-key buffers (one is the temp); the partitions are
                // null or were written just above for this pass's grid.
                unsafe { gpu.launch(&func, merge_cfg, &args) }?;
            }
            Some((_, _, word)) => {
                let args = [
                    KernelArg::Ptr(src_k),
                    KernelArg::Ptr(src_v.unwrap()),
                    count,
                    run,
                    KernelArg::Ptr(parts_arg),
                    KernelArg::Ptr(dst_k),
                    KernelArg::Ptr(dst_v.unwrap()),
                ];
                let func = kernels.for_values(&format!("{merge_name}_pairs"), word)?;
                // SAFETY: as above for the `_pairs_{4,8,16}` kernels with n values.
                unsafe { gpu.launch(&func, merge_cfg, &args) }?;
            }
        }
    }
    Ok(())
}

/// Writes 0, 1, ..., len - 1 into `out` (words of 4 or 8 bytes).
pub(crate) fn launch_iota(gpu: &Gpu, kernels: &Kernels, out: &BufArg<'_>, word: usize) -> Result<()> {
    let ctas = out.len.div_ceil(256).min(65_535) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let args = [KernelArg::Ptr(out.ptr), KernelArg::I64(out.len as i64)];
    let func = kernels.for_values("mergepath_iota", word)?;
    // SAFETY: matches `mergepath_iota_{4,8}`; `out` holds len words of `word` bytes, and the
    // kernel's grid-stride loop stays below len.
    unsafe { gpu.launch(&func, cfg, &args) }
}

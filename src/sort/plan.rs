//! The passes of a sort: levels, blocks, frames and tile counts, shared by the launch code, the
//! host-slice sorts and the tests.

use crate::device::temp::temp_aligned;
use crate::tuning::blocksort_shape;

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

/// The block a sort of `n` keys starts from, given the tuning's `block`: twice it where the sort
/// moves keys alone (`keys_only`: the doubled blocksort has no values) and either its passes
/// are four-way (`four_way`) and the levels odd and at least 3, so the sort runs one level fewer
/// and no two-way pass, or it is a small sort (two-way passes searching inside the merge CTAs)
/// whose tuning asks for doubled blocks (`small_doubled`) and the levels are at least 2, so it
/// runs one pass fewer (the blocksort is never the whole sort on doubled blocks).
pub fn mergesort_block(n: usize, block: usize, four_way: bool, small_doubled: bool, keys_only: bool) -> usize {
    let levels = mergesort_levels(n, block);
    let fewer = if four_way { levels % 2 == 1 && levels >= 3 } else { small_doubled && levels >= 2 };
    if keys_only && fewer {
        2 * block
    } else {
        block
    }
}

/// Dynamic shared memory of the blocksort on doubled blocks: its keys.
pub(super) fn blocksort2_shared_bytes(arch: u32, key_bytes: usize) -> usize {
    2 * blocksort_shape(arch, key_bytes).tile() * key_bytes
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

#[cfg(any(test, feature = "models"))]
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

#[cfg(any(test, feature = "models"))]
/// The frame of `diag` (the device's `find_mergesort_frame`).
pub fn mergesort_frame(n: usize, run: usize, diag: usize) -> MergesortFrame {
    let begin = diag / (2 * run) * (2 * run);
    let a_count = (n - begin).min(run);
    let b_count = (n - begin - a_count).min(run);
    MergesortFrame { begin, a_count, b_count }
}


/// Items of each of the four runs of frame `frame` of a four-way pass over `n` items with runs
/// of `run` (the device's `find_mergesort4_frame`): the last frame's runs may be short or empty.
pub(super) fn mergesort4_frame(n: usize, run: usize, frame: usize) -> (usize, [usize; 4]) {
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
pub(crate) fn mergesort4_pair_boundaries(c: &[usize; 4], tile: usize) -> (usize, usize) {
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

/// An upper bound of the temporary device memory a sort of `n` items (keys of `key_bytes`,
/// values of `value_bytes`) takes from the temp pool: the ping-pong buffer (each lane a region
/// of the temp layout; keys of at most 4 bytes with 4-byte values may travel zipped into u64
/// words, two regions of them) and the partitions, at most 48 bytes per tile of at least 512
/// items.
pub(crate) fn sort_temp_bytes(n: usize, key_bytes: usize, value_bytes: usize) -> usize {
    let (key_bytes, value_bytes) = if key_bytes <= 4 && value_bytes == 4 { (8, 8) } else { (key_bytes, value_bytes) };
    temp_aligned(n * key_bytes) + temp_aligned(n * value_bytes) + 48 * (n / 512 + 2)
}

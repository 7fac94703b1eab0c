//! A CPU model of the merge levels (what each tile merges at each level, as the kernels do), for
//! the tests.

use super::plan::segment_levels;
use std::ops::Range;

/// What tile `tile_index` (positions `tile_index * stride ..`) does for segment `begin..end` at
/// merge level `level` (`segmented_merge_level_tile` in the kernels): the two sorted runs
/// merged (A, then B; B may be empty) and the output range in the tile that it writes, where
/// the merge of A and B is laid out from A's start. `None` where the segment needs no merge at
/// that level or has no items in the tile.
pub fn segment_level_merge(
    begin: usize,
    end: usize,
    stride: usize,
    small: usize,
    tile_index: usize,
    level: u32,
) -> Option<(Range<usize>, Range<usize>, Range<usize>)> {
    let t0 = tile_index * stride;
    if segment_levels(begin, end, stride, small) <= level || t0 >= end || t0 + stride <= begin {
        return None;
    }
    let first_tile = begin / stride;
    let pair = (tile_index - first_tile) >> (level + 1);
    let pair_begin = (first_tile + (pair << (level + 1))) * stride;
    let mid = pair_begin + (stride << level);
    let (a_begin, b_begin, b_end) = (pair_begin.max(begin), mid.min(end), (mid + (stride << level)).min(end));
    Some((a_begin..b_begin, b_begin..b_end, t0.max(begin)..(t0 + stride).min(end)))
}

//! The tiles and merge levels of a segmented sort, and the checks of host offsets, shared by the
//! launch code, the host backend and the tests.

use crate::error::{Error, Result};

/// Checks host offsets against a buffer of `len` items: non-decreasing, within it, fewer than
/// 2^31 segments.
pub fn validate_segment_offsets(offsets: &[usize], len: usize) -> Result<()> {
    let past_end = || offsets.last().filter(|&&last| last > len).map(|_| offsets.len() - 1);
    if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]).or_else(past_end) {
        return Err(invalid_offset(offsets, len, i));
    }
    check_segment_count(offsets.len())
}

/// The error for `offsets[i]`, the first out of order: above the next, or the last and past
/// the `len` keys.
pub(super) fn invalid_offset(offsets: &[usize], len: usize, i: usize) -> Error {
    let at = offsets[i];
    match offsets.get(i + 1) {
        Some(next) => Error::invalid("offsets", format!("must be non-decreasing: offsets[{}] = {next} is below offsets[{i}] = {at}", i + 1)),
        None => Error::invalid("offsets", format!("offsets[{i}] = {at} is past the end of the {len} keys")),
    }
}

/// The most offsets a segmented sort takes (its kernels index segments with `int`).
pub(crate) const MAX_SEGMENT_OFFSETS: usize = i32::MAX as usize;

pub(super) fn check_segment_count(offsets: usize) -> Result<()> {
    if offsets > MAX_SEGMENT_OFFSETS {
        return Err(Error::TooLarge { what: "segments (at most 2^31 - 1)" });
    }
    Ok(())
}

/// Segments of at most this many items never need a merge level (up to half a tile).
const SMALL_SEGMENT: usize = 64;

/// The segmented sort's tiles for a merge tile of `tile` items: `(stride, small)`, tiles
/// starting every `stride` positions and short segments (at most `small` items, taken whole
/// by one tile) with `stride + small == tile`.
pub fn segment_geometry(tile: usize) -> (usize, usize) {
    let small = SMALL_SEGMENT.min(tile / 2).max(1);
    (tile - small, small)
}

#[cfg(any(test, feature = "models"))]
/// Where tile `t` of a segmented sort starts (`segmented_tile_start` in the kernels), for
/// valid `offsets`: at `t * stride`, unless a segment of at most `small` items crosses that
/// position, which then goes whole to tile `t - 1` (the tile starts at its end); never before
/// `offsets[0]` nor after the last offset.
pub fn segmented_tile_start(offsets: &[usize], t: usize, stride: usize, small: usize) -> usize {
    let (Some(&lo), Some(&hi)) = (offsets.first(), offsets.last()) else { return 0 };
    let p = t.saturating_mul(stride);
    let mut start = p;
    if p > lo && p < hi {
        let s = offsets.partition_point(|&o| o <= p) - 1;
        let (b, e) = (offsets[s], offsets[s + 1]);
        if b < p && e - b <= small {
            start = e;
        }
    }
    start.clamp(lo, hi)
}

/// The merge levels segment `begin..end` needs after the tiles are sorted (`segment_levels`
/// in the kernels): none for at most `small` items; else its pieces are the tiles it touches
/// (cut every `stride` positions) and level k merges pairs of runs of 2^k pieces, so
/// ceil(log2(pieces)).
pub fn segment_levels(begin: usize, end: usize, stride: usize, small: usize) -> u32 {
    if end - begin <= small {
        return 0;
    }
    levels_of_pieces((end - 1) / stride - begin / stride + 1)
}

/// The merge levels that join `pieces` sorted pieces of a segment: ceil(log2(pieces)).
pub(super) fn levels_of_pieces(pieces: usize) -> u32 {
    pieces.next_power_of_two().trailing_zeros()
}


//! The grid of a search and the checks of its inputs and outputs, shared by the launch code and
//! the host backend.

use crate::device::launch::grid_ctas;
use crate::error::{Error, Result};
use crate::partition::plan::partition_count;
use crate::tuning::{search_shape, LaunchShape};
use crate::types::{Bound, SortIndex};

/// What a search writes per needle.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SearchOutput {
    /// The bound, as indices of 4 or 8 bytes.
    Bound(Bound, usize),
    /// Both bounds (two outputs: lower, upper), as indices of 4 or 8 bytes.
    Range(usize),
    /// Equal counts, as indices of 4 or 8 bytes.
    Count(usize),
    /// Match flags (one byte each).
    Contains,
}

impl SearchOutput {
    /// The bytes of one output per needle.
    pub(crate) fn word(self) -> usize {
        match self {
            SearchOutput::Bound(_, w) | SearchOutput::Range(w) | SearchOutput::Count(w) => w,
            SearchOutput::Contains => 1,
        }
    }

    /// The outputs it writes (the range's two, the others' one).
    pub(crate) fn outputs(self) -> usize {
        if matches!(self, SearchOutput::Range(_)) {
            2
        } else {
            1
        }
    }
}

/// The checks of a search of `needles` in `haystack` items with outputs of the given lengths,
/// in the device functions' order: a haystack too long for `I`, then each output's length.
pub(crate) fn check_search<I: SortIndex>(needles: usize, haystack: usize, outputs: &[(&'static str, usize)]) -> Result<()> {
    if haystack >= I::MAX_COUNT {
        return Err(Error::TooLarge { what: "u32 indices (a haystack of 2^32 items or more)" });
    }
    for &(what, len) in outputs {
        if len < needles {
            return Err(Error::OutputTooSmall { what, needed: needles, got: len });
        }
    }
    Ok(())
}

/// The launch of a search over `needles + haystack` merged items (at least one needle).
pub(super) struct SearchGrid {
    /// The search kernels' launch shape.
    pub(super) shape: LaunchShape,
    /// CTAs: one per tile of merged items.
    pub(super) tiles: u32,
    /// Partitions: one per tile boundary.
    pub(super) parts: usize,
}

impl SearchGrid {
    /// The grid of a search of `needles` in `haystack` items, keys of `key_bytes` on `arch`.
    pub(super) fn new(arch: u32, key_bytes: usize, needles: usize, haystack: usize) -> Result<Self> {
        let shape = search_shape(arch, key_bytes);
        let total = needles + haystack;
        let tiles = grid_ctas(total.div_ceil(shape.tile()), "search grid")?;
        Ok(SearchGrid { shape, tiles, parts: partition_count(total, shape.tile()) })
    }

    /// Device memory of the partitions.
    pub(super) fn partition_bytes(&self) -> usize {
        self.parts * 8
    }
}

//! The grid of a multiset operation and its temporary memory, shared by the launch code and the
//! host-slice calls.

use crate::device::launch::grid_ctas;
use crate::error::Result;
use crate::partition::partition_count;
use crate::tuning::{sets_shape, LaunchShape};

/// The launch of a multiset operation on `total` items of A and B (at least one).
pub(super) struct SetGrid {
    /// The set kernels' launch shape.
    pub(super) shape: LaunchShape,
    /// CTAs: one per tile of the balanced merge.
    pub(super) tiles: u32,
    /// Balanced Path splits: one per tile boundary.
    pub(super) splits: usize,
}

impl SetGrid {
    /// The grid of an operation on `total` items, keys of `key_bytes` on `arch`.
    pub(super) fn new(arch: u32, key_bytes: usize, total: usize) -> Result<Self> {
        let shape = sets_shape(arch, key_bytes);
        let tiles = grid_ctas(total.div_ceil(shape.tile()), "set operation grid")?;
        Ok(SetGrid { shape, tiles, splits: partition_count(total, shape.tile()) })
    }

    /// Bytes of the splits (16 each), rounded up to 256.
    pub(super) fn split_bytes(&self) -> usize {
        (self.splits * 16).div_ceil(256) * 256
    }

    /// Temporary memory: the splits, then the tiles' scan states and the ticket counter (8
    /// bytes each, one per split).
    pub(super) fn temp_bytes(&self) -> usize {
        self.split_bytes() + self.splits * 8
    }
}

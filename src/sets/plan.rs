//! The grid of a multiset operation and its temporary memory, shared by the launch code and the
//! host-slice calls.

use crate::device::contract::SetSplit;
use crate::device::launch::grid_ctas;
use crate::device::temp::TempLayout;
use crate::error::Result;
use crate::partition::plan::partition_count;
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

    /// Temporary memory: the splits, then the tiles' scan states and the ticket counter (8
    /// bytes each, one per split); the buffer's size and the two regions' offsets.
    pub(super) fn temp_layout(&self) -> (usize, usize, usize) {
        let mut layout = TempLayout::default();
        let splits = layout.region(self.splits * std::mem::size_of::<SetSplit>());
        let states = layout.region(self.splits * std::mem::size_of::<u64>());
        (layout.bytes(), splits, states)
    }
}

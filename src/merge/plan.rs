//! The choice of merge kernel and the ladder kernels' outputs per CTA, shared by the API and
//! the launch code.

use crate::tuning::{ladder_shape, ladder_tile, LADDER_BLOCK_TILES};

/// How [`merge_keys_with`](super::merge_keys_with) merges: the two-phase register merge ([`merge_keys`](super::merge_keys)), or one of the
/// three kernels of Kirk & Hwu's merge chapter (Programming Massively Parallel Processors,
/// ch. 12), each a step up the ladder the book narrates. All give the same stable result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MergeStrategy {
    /// Merge Path partitions per tile, per-thread splits in shared memory, VT items merged in
    /// registers, coalesced stores (Baxter's Modern GPU). The default.
    #[default]
    TwoPhase,
    /// Every thread co-ranks its output range in global memory and merges it sequentially,
    /// reading and writing global memory directly (the book's merge_basic_kernel).
    Basic,
    /// One co-rank pair per CTA; tiles of A and B loaded into shared memory, each thread
    /// co-ranking and merging its share there, the unused rest of each tile loaded again
    /// (merge_tiled_kernel).
    Tiled,
    /// The tiled kernel with circular tiles: each iteration loads only what the previous one
    /// consumed (merge_circular_buffer_kernel, with the lecture's corrections).
    Circular,
}

impl MergeStrategy {
    /// All four, the default first.
    pub const ALL: [MergeStrategy; 4] = [Self::TwoPhase, Self::Basic, Self::Tiled, Self::Circular];

    /// Outputs each CTA of a ladder kernel merges, for keys of `key_bytes` on `arch`: a ladder
    /// tile of the basic kernel's threads, `LADDER_BLOCK_TILES` ladder tiles for the tiled and
    /// circular kernels, which loop over them in shared memory.
    pub(super) fn ladder_cta_items(self, arch: u32, key_bytes: usize) -> usize {
        match self {
            Self::Basic => ladder_shape(arch, key_bytes).tile(),
            _ => ladder_tile(arch, key_bytes) * LADDER_BLOCK_TILES,
        }
    }
}

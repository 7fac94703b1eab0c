//! Load-balancing search (Modern GPU's): for each of `n` work items, the segment it belongs to
//! and its rank there, given the segments' offsets. The schedule the device kernel will run,
//! modelled on the CPU (`models`) and checked against the oracle
//! ([`crate::cpu::load_balancing_search`]); the kernel and the API are not built yet.
//!
//! Semantics: `offsets` holds `segments + 1` non-decreasing values, `offsets[0] = 0` and
//! `offsets[segments] = n`; item `i` belongs to the segment `s` with
//! `offsets[s] <= i < offsets[s + 1]` (the last such `s` where segments are empty) and has rank
//! `i - offsets[s]` in it. Empty segments own no item.
//!
//! The two-phase schedule: the items `0, 1, ..., n - 1` (an implicit counting sequence, never
//! stored) are merged with the segment boundaries `offsets[1..segments]`, a boundary before an
//! item equal to it. Passing a boundary moves to the next segment, so every output of the
//! merge is either an item, whose segment is the count of boundaries before it, or a
//! boundary. The merge is cut into tiles of `tile` outputs by Merge Path (a search per tile
//! over the counting sequence and the offsets), so each tile's work is bounded whatever the
//! segment lengths: a run of empty segments costs its boundaries, a long segment its items.
//! Inside a tile each thread takes `vt` outputs from its own Merge Path split, with the tile's
//! boundaries in shared memory, and walks them serially.
//!
//! On it: interval expand (each segment's value repeated over its items) and segmented
//! reduction (each tile folds its runs of one segment; a segment crossing tiles folds its
//! tiles' partial results in order, so the operation need only be associative), modelled
//! likewise against their oracles ([`crate::cpu::interval_expand`],
//! [`crate::cpu::segmented_reduce`]).

#[cfg(any(test, feature = "models"))]
mod model;
#[cfg(any(test, feature = "models"))]
pub use model::{interval_expand_tiles, load_balancing_tiles, segmented_reduce_tiles};

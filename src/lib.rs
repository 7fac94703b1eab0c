//! # mergepath
//!
//! GPU Merge Path algorithms on CUDA through [`cudarc`]: stable merge of keys and key/value
//! pairs, stable mergesort of keys, pairs and indices, vectorized sorted search and multiset
//! operations (Balanced Path), multiway merge of k sorted inputs, and Modern GPU's
//! load-balancing family (load-balancing search, interval expand, move, gather and scatter,
//! segmented reduction; unique,
//! run-length encoding and reduce-by-key; bulk insert and bulk remove; sorted relational
//! joins), built on a public two-phase scheduling layer (coarse Merge Path partitions over
//! global memory, then per-thread partitions in shared memory and an unrolled serial loop in
//! registers, after Baxter's Modern GPU).
//!
//! ```no_run
//! use mergepath::{Gpu, Less};
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = Gpu::new(0)?;
//! let a = gpu.upload(&[1u32, 3, 5, 7])?;
//! let b = gpu.upload(&[2u32, 3, 4])?;
//! let mut out = gpu.alloc_zeros::<u32>(7)?;
//! mergepath::merge_keys(&gpu, &a, &b, &mut out, Less)?;
//! assert_eq!(gpu.download(&out)?, [1, 2, 3, 3, 4, 5, 7]);
//! # Ok(()) }
//! ```
//!
//! Keys: the built-in integers and floats (`u8` ... `f64`) with [`Less`] or [`Greater`]; floats
//! use the IEEE total order, so NaN keys have a deterministic place. Values: any
//! `bytemuck::Pod` type ([`Value`]: 4, 8 and 16 bytes move as words, other sizes by position
//! and one gather). Buffers are cudarc's `CudaSlice`/`CudaView`s;
//! counts are `usize` and may exceed 2^31. Every call validates its buffers (lengths, context,
//! alignment, overlap) and returns an [`Error`] instead of launching on bad input.
//!
//! Every algorithm also runs on CPU threads, with the same semantics and errors, on slices:
//! the [`host`] backend, for machines without a GPU (checked against the sequential oracle
//! [`cpu`]).
//!
//! The `testing` feature adds `mergepath::testing`: proptest strategies for any key type
//! and properties of every operation against the oracle, on a GPU or the host backend.
//!
//! The kernels are compiled at build time by `build.rs` (CUDA 13.0 compiler, installed into the
//! target directory if none is found) for the build machine's GPU, or sm_90 where it has none,
//! or the architectures `MERGEPATH_CUDA_ARCHS` names, plus PTX; see the README.
#![warn(missing_docs)]

mod backend;
pub mod bulk;
mod checks;
pub mod cpu;
mod error;
mod device;
pub mod host;
pub mod interval;
pub mod join;
mod fatbins;
mod gather;
mod key;
pub mod load_balancing;
pub mod merge;
pub mod multi;
pub mod multiway;
pub mod partition;
pub mod reduce;
pub mod runs;
pub mod search;
pub mod segmented;
pub mod sets;
pub mod slices;
#[cfg(feature = "samplesort")]
pub mod samplesort;
pub mod sort;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tuning;
mod threads;
mod types;

pub use cudarc;
pub use backend::{Backend, Host};
pub use error::{Error, Result};
pub use device::buffers::CheckedBuffer;
pub use device::kernels::Module;
pub use device::Gpu;
pub use key::{Comparator, Greater, Key, Less, TotalOrd, Value};
#[doc(hidden)]
pub use key::{RecordField, RecordOrder};
/// `#[derive(Key)]`: a `#[repr(C)]` struct of numeric fields as a key type, with its
/// field-order comparator (`Less` / `Greater`) and custom ones, kernels compiled at build time.
/// See the [`mergepath_derive`] crate.
pub use mergepath_derive::Key;
pub use bulk::{bulk_insert, bulk_remove};
pub use interval::{interval_gather, interval_move, interval_scatter};
pub use join::{join, join_len, JoinKind, JoinPairs, NO_ROW};
pub use load_balancing::{interval_expand, load_balancing_search, load_balancing_search_ranks};
pub use reduce::{segmented_reduce, Reduction};
pub use runs::{reduce_by_key, run_length_encode, unique};
pub use merge::{merge_keys, merge_keys_with, merge_pairs, MergeStrategy};
pub use multiway::{merge_multiway_keys, merge_multiway_pairs};
pub use partition::{balanced_path, merge_path, merge_path_partitions, merge_path_partitions_into, merge_path_partitions_tie_into, merge_path_tie, partition_count, Tie, TileShape};
pub use search::{sorted_search, sorted_search_contains, sorted_search_count, sorted_search_range, Bound};
pub use segmented::{sort_segments_keys, sort_segments_pairs, SegmentOffsets};
pub use sets::{set_operation_keys, set_operation_len, set_operation_pairs, SetLen, SetOperation};
pub use device::staging::PinnedBuffer;
pub use sort::{argsort, sort_indices, sort_keys, sort_keys_copy, sort_pairs, sort_pairs_copy, SortIndex};

/// The README's and the docs pages' Rust code blocks, compiled as doctests (those that need no
/// GPU run too), so the documentation cannot drift from the API.
#[cfg(doctest)]
mod documentation {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/guide.md")]
    struct Guide;
    #[doc = include_str!("../docs/keys.md")]
    struct Keys;
    #[doc = include_str!("../docs/two-phase.md")]
    struct TwoPhase;
    #[doc = include_str!("../docs/testing.md")]
    struct Testing;
    #[doc = include_str!("../docs/building.md")]
    struct Building;
}

/// The items `#[derive(Key)]` generates for `mergepath::testing` (its `TestKey` implementation): kept
/// with the `testing` feature, dropped without it, so the derive needs no feature of its own.
#[cfg(feature = "testing")]
#[doc(hidden)]
#[macro_export]
macro_rules! __testing_items {
    ($($item:item)*) => { $($item)* };
}

/// See above: without the `testing` feature the items are dropped.
#[cfg(not(feature = "testing"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __testing_items {
    ($($item:item)*) => {};
}

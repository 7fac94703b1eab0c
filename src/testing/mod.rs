//! A property-testing kit (cargo feature `testing`): proptest strategies for any key type,
//! properties of every operation against the CPU oracle on the GPU or the host backend,
//! [`check_comparator`] for your comparators, and properties of a two-phase kernel's partitions
//! and tile loop for your own kernels.
//!
//! - **Keys**: [`TestKey`] (the built-in types; `#[derive(Key)]` implements it for your structs
//!   when this feature is on), [`pod_key`] for any other `Key`.
//! - **Inputs**: [`lengths`] (concentrated at the tuning table's tile sizes ± 1 and at
//!   2^k ± 1), [`keys`] in every [`Pattern`] of sort benchmarks (ascending, descending, saw, pipe
//!   organ, Zipf, 95 % sorted, 95 % one value, few distinct, long runs, float specials),
//!   [`sorted_keys`], [`two_sorted`], [`sorted_inputs`] (k inputs), [`segment_offsets`],
//!   [`comparator_keys`].
//! - **Properties** (functions returning `Result<(), TestCaseError>`, for use inside your
//!   `proptest!` or with [`Check`]): [`merge_keys`], [`merge_pairs`], [`sort_keys`],
//!   [`sort_pairs`] (stable, positions as values, and `sort_indices`), [`sorted_search`] (every
//!   bound, range, count, contains), [`set_operations`] (all four, keys, pairs and lengths),
//!   [`sort_segments`], [`merge_multiway`] (keys and pairs), [`merge_path_partitions`] and
//!   [`multiway_partitions`]. Each runs the operation on a [`Backend`] (a GPU or the host backend)
//!   and fails with the first difference from [`crate::cpu`]: index, got, want. [`backends`]
//!   lists the backends to run on (the host, and the GPU where there is one; a panic where there
//!   is none under `MERGEPATH_REQUIRE_GPU=1`), [`gpu_or_host`] picks one, [`gpu`] is the device itself.
//! - **Keys need `Debug`** once this feature is on anywhere in the build: [`TestKey`] requires it
//!   (failures print the keys), and `#[derive(Key)]` implements `TestKey` for every derived key,
//!   so a derived key without `#[derive(Debug)]` is error E0277 naming `TestKey`.
//! - **The host backend runs only a comparator's Rust twin**: a CPU-only CI never checks the CUDA
//!   expression of a derived comparator; [`check_comparator`] on a GPU compares the two.
//! - **Comparators**: [`check_comparator`]: a strict weak order on the keys given, and on a GPU
//!   its CUDA functor agreeing with its Rust twin on every pair.
//! - **Your kernels**: [`check_merge_partitions`], [`check_multiway_partitions`] and
//!   [`check_merge_tiles`], on the CPU, with
//!   [`crate::partition::visit_merge_tiles_cpu`] as the mirror of the tile loop.
//!
//! ```
//! use mergepath::testing::{self, Backend, Check};
//! use mergepath::Greater;
//! // 32 cases of a stable sort of f32 keys in descending order, on the host backend; on a GPU
//! // pass Backend::Gpu(&gpu).
//! let inputs = testing::keys::<f32, _>(testing::lengths::<f32>(5_000), Greater);
//! Check::new("sort_pairs f32 desc").cases(32).run(inputs, |keys| testing::sort_pairs(Backend::Host, &keys, Greater));
//! ```
//!
//! Inside `proptest!`, the properties are ordinary fallible calls:
//!
//! ```
//! use mergepath::testing::{self, Backend};
//! use mergepath::Less;
//! use proptest::prelude::*;
//! proptest! {
//!     #![proptest_config(ProptestConfig::with_cases(16))]
//!     fn search_i64((needles, haystack) in testing::two_sorted::<i64, _>(testing::lengths::<i64>(3_000), Less)) {
//!         testing::sorted_search(Backend::Host, &needles, &haystack, Less)?;
//!     }
//! }
//! # search_i64();
//! ```

mod comparator;
pub(crate) mod keys;
mod partitions;
pub(crate) mod properties;
mod runner;
pub(crate) mod strategies;

pub use comparator::{check_comparator, comparator_keys, MAX_COMPARATOR_KEYS};
pub use keys::{pod_key, TestKey};
pub use partitions::{check_merge_partitions, check_merge_tiles, check_multiway_partitions, merge_path_partitions, multiway_partitions};
pub use properties::{
    assert_same_bits, backends, gpu, gpu_or_host, interval_expand, load_balancing_search, merge_keys, merge_multiway, merge_pairs, runs, segmented_reduce, set_operations, sort_keys, sort_pairs, sort_segments, sorted_search, Backend, PropertyResult,
};
pub use crate::bulk::properties::{bulk_insert, bulk_remove};
pub use crate::interval::properties::interval_move;
pub use crate::join::properties::join;
pub use runner::Check;
pub use strategies::{keys, keys_of, lengths, segment_offsets, segmented_keys, sorted_inputs, sorted_keys, tile_sizes, two_sorted, Pattern};
/// An all-zero key (for `#[derive(Key)]`'s generated specials).
#[doc(hidden)]
pub fn zeroed<K: crate::Key>() -> K {
    K::zeroed()
}

/// The proptest crate the kit is built on (for `#[derive(Key)]`'s generated strategies and
/// users without a direct dependency).
/// Makes the next host-slice call on this thread fail at a transfer step: the `steps` steps
/// (a staged piece or a direct copy, up or down) before it go through, the next returns an
/// error (a driver error, `CUDA_ERROR_UNKNOWN`), and none after it; dropping the guard ends
/// it. For tests of what a failure in the middle of a pipeline leaves in the caller's slices.
pub fn fail_transfer_after(steps: usize) -> TransferFailure {
    crate::device::transfer::fail_transfer_after(Some(steps));
    TransferFailure(std::marker::PhantomData)
}

/// The guard of [`fail_transfer_after`] (of this thread: not `Send`).
#[must_use = "the failure is injected while the guard lives"]
pub struct TransferFailure(std::marker::PhantomData<*const ()>);

impl Drop for TransferFailure {
    fn drop(&mut self) {
        crate::device::transfer::fail_transfer_after(None);
    }
}

pub use proptest;

//! Stable mergesort of keys, key/value pairs and indices.
//!
//! A sort is one blocksort pass, in which each CTA sorts a block of items on its own
//! (`cta_blocksort` in `mergepath-build/kernels/mergepath/cta/tile.cuh`), then merge passes over the sorted runs
//! (`plan::mergesort_plan`): `ceil(log2(blocks))` levels of pairwise merging, done two levels at a
//! time by four-way passes, with one two-way pass first when the number of levels is odd (key
//! sorts start from doubled blocks instead). Small sorts (at most 2,048 merge tiles,
//! `tuning::SEARCH_IN_MERGE_MAX_TILES`) merge two ways only, each pass's partitions searched by
//! two warps inside the merge CTA, one launch a pass; those of keys of at most 4 bytes start
//! from doubled blocks where that leaves enough blocks (`tuning::small_sort_doubles_blocks`), one
//! pass fewer.
//!
//! - A two-way pass merges pairs of runs, each pair a *frame* of `2 * run` items
//!   (`plan::mergesort_frame`), as the two-phase merge of [`crate::partition`]: one Merge Path search
//!   per output tile inside its frame, then the merge kernel.
//! - A four-way pass merges frames of four runs A, B, C, D, in output tiles of two merge tiles
//!   each (`mergesort4_tiles`). Its partition first takes the elements at every tile-th
//!   position of the merges A + B and C + D as coarse boundaries: each boundary's split of all
//!   four runs is one Merge Path search in its own pair and one binary search in each run of
//!   the other pair, never a nested search. Between two boundaries lie at most a tile of A + B
//!   and a tile of C + D. Then each output tile's exact split is searched inside the bracket of
//!   boundaries around it: the merge path of the merges A + B and C + D, one probe per lane of a
//!   group of 4 to 32 lanes a round (more where the pass has fewer splits), each a Merge Path
//!   search in both pairs. A CTA merges its tile's A with B and C with D in
//!   one pass over its threads, then the two results, all in shared memory.
//!
//! The passes ping-pong between the caller's buffer and one temporary buffer, arranged so the
//! last pass writes the caller's buffer. Pairs of built-in keys of at most 4 bytes with 4-byte
//! values (or positions) travel zipped into u64 words, the key's order bits high: the passes are
//! a u64 sort's under an order of the high halves, between two temporary buffers of words, the
//! first pass zipping and the last unzipping into the caller's buffers.
//!
//! Peak device memory beyond the caller's buffers: one buffer of `n` keys (and `n` values for
//! pairs; zipped pairs two buffers of `n` u64 words), plus the partitions: 32 bytes per four-way coarse boundary and per four-way tile
//! (about `n / tile` and `n / (2 tile)` of them) and, for a two-way pass of more than 2,048
//! tiles, 8 bytes per tile; none when the input fits one block. It comes from the [`Gpu`]'s
//! temp pool, so repeated sorts of the same size do not allocate.
//!
//! Comparators must be strict weak orders (the built-in ones are); one that is not (a custom
//! comparator such as `a.x <= b.x`) gives an unspecified output, items possibly repeated or
//! missing, never an access out of bounds. Sorting is stable: equal keys keep their input order.

mod launch;
#[cfg(any(test, feature = "models"))]
mod model;
pub(crate) mod order_keys;
mod plan;
pub(crate) mod records;

use crate::checks::{check_indices, check_values};
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
#[cfg(doc)]
use crate::error::Error;
use crate::gather::{launch_iota, sort_values};
use crate::key::{sort_value_align, Comparator, Key, Value};
pub(crate) use launch::{launch_sort, launch_sort_by_words};
pub(crate) use order_keys::{move_records, with_comparable_keys, OrderedPositions};
#[cfg(any(test, feature = "models"))]
pub use model::{mergesort4_tiles, mergesort_tile_ranges};
pub(crate) use plan::{mergesort4_pair_boundaries, sort_temp_bytes};
// The plans, for the CPU tests of the passes (`models`): not part of the API.
#[cfg(any(test, feature = "models"))]
pub use plan::{mergesort4_boundary_count, mergesort4_tile_count, mergesort_block, mergesort_frame, mergesort_levels, mergesort_plan, MergesortFrame, MergesortPass};
pub use crate::types::SortIndex;
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// Sorts `keys` in place by `comp`, stably. Any length, including 0 and more than 2^31 items.
/// Returns without waiting for the GPU.
pub fn sort_keys<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, comp: C) -> Result<()> {
    sort_keys_with(gpu, keys, comp, launch_sort::<K, C>)
}

/// Sorts `input` into `output[..input.len()]` by `comp`, stably, leaving `input` as it is.
/// `output` may be longer (the rest is left as it is) and must not overlap `input`.
pub fn sort_keys_copy<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    input: &impl DevicePtr<K>,
    output: &mut impl DevicePtrMut<K>,
    comp: C,
) -> Result<()> {
    sort_keys_copy_with(gpu, input, output, comp, launch_sort::<K, C>)
}

/// Sorts `keys` in place by `comp`, stably, moving `values` (same length, any [`Value`]: of
/// any size, those not 4, 8 or 16 bytes carried by position and gathered once) with their keys. Returns without waiting for the GPU.
pub fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    sort_pairs_with(gpu, keys, values, comp, launch_sort::<K, C>)
}

/// Sorts `keys_in`/`values_in` pairs into `keys_out`/`values_out` (at least as long) by `comp`,
/// stably, leaving the inputs as they are. Outputs must not overlap inputs or each other.
pub fn sort_pairs_copy<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: &impl DevicePtr<K>,
    values_in: &impl DevicePtr<V>,
    keys_out: &mut impl DevicePtrMut<K>,
    values_out: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    sort_pairs_copy_with(gpu, keys_in, values_in, keys_out, values_out, comp, launch_sort::<K, C>)
}

/// A sort's launches of `n` keys at `keys_in` into `keys_out` (which may be `keys_in`), values
/// (in, out, word bytes) following: the mergesort's, or another stable sort's.
pub(crate) type SortLaunchFn<C> = fn(&Gpu, u64, u64, Option<(u64, u64, usize)>, usize, C) -> Result<()>;

/// [`sort_keys`] by `launch`: the keys checked, then sorted in place.
pub(crate) fn sort_keys_with<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, comp: C, launch: SortLaunchFn<C>) -> Result<()> {
    let n = keys.len();
    let keys = gpu.output("keys", keys, K::DEVICE_ALIGN, n, &[])?;
    launch(gpu, keys.ptr, keys.ptr, None, n, comp)
}

/// [`sort_keys_copy`] by `launch`.
pub(crate) fn sort_keys_copy_with<K: Key, C: Comparator<K>>(gpu: &Gpu, input: &impl DevicePtr<K>, output: &mut impl DevicePtrMut<K>, comp: C, launch: SortLaunchFn<C>) -> Result<()> {
    let align = K::DEVICE_ALIGN;
    let input = gpu.input("input", input, align)?;
    let output = gpu.output("output", output, align, input.len, &[&input])?;
    launch(gpu, input.ptr, output.ptr, None, input.len, comp)
}

/// [`sort_pairs`] by `launch`: values of 4, 8 or 16 bytes move as words, others by position.
pub(crate) fn sort_pairs_with<K: Key, V: Value, C: Comparator<K>>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, values: &mut impl DevicePtrMut<V>, comp: C, launch: SortLaunchFn<C>) -> Result<()> {
    let (keys, values) = gpu.inplace_pairs(keys, values, "values", const { sort_value_align::<V>() })?;
    let kernels = gpu.kernels::<K, C>()?;
    sort_values::<V>(gpu, &kernels, values.ptr, values.ptr, keys.len, |values| launch(gpu, keys.ptr, keys.ptr, values, keys.len, comp))
}

/// [`sort_pairs_copy`] by `launch`.
pub(crate) fn sort_pairs_copy_with<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: &impl DevicePtr<K>,
    values_in: &impl DevicePtr<V>,
    keys_out: &mut impl DevicePtrMut<K>,
    values_out: &mut impl DevicePtrMut<V>,
    comp: C,
    launch: SortLaunchFn<C>,
) -> Result<()> {
    let (ki, vi, ko, vo) = pairs_copy_buffers(gpu, keys_in, values_in, keys_out, values_out)?;
    let kernels = gpu.kernels::<K, C>()?;
    sort_values::<V>(gpu, &kernels, vi.ptr, vo.ptr, ki.len, |values| launch(gpu, ki.ptr, ko.ptr, values, ki.len, comp))
}

/// The checked buffers of a copying pair sort (keys in, values in, keys out, values out):
/// values as long as the keys, outputs long enough and apart from the inputs and each other.
fn pairs_copy_buffers<'a, K: Key, V: Value>(
    gpu: &'a Gpu,
    keys_in: &'a impl DevicePtr<K>,
    values_in: &'a impl DevicePtr<V>,
    keys_out: &'a mut impl DevicePtrMut<K>,
    values_out: &'a mut impl DevicePtrMut<V>,
) -> Result<(CheckedBuffer<'a>, CheckedBuffer<'a>, CheckedBuffer<'a>, CheckedBuffer<'a>)> {
    let word = const { sort_value_align::<V>() };
    let align = K::DEVICE_ALIGN;
    let ki = gpu.input("keys_in", keys_in, align)?;
    let vi = gpu.input("values_in", values_in, word)?;
    check_values("values_in", ki.len, vi.len)?;
    let ko = gpu.output("keys_out", keys_out, align, ki.len, &[&ki, &vi])?;
    let vo = gpu.output("values_out", values_out, word, ki.len, &[&ki, &vi, &ko])?;
    Ok((ki, vi, ko, vo))
}

/// Writes to `indices` (the keys' length) the positions that sort `keys` by `comp`, stably,
/// leaving `keys` as they are (an argsort): afterwards `keys[indices[i]]` is the i-th key in
/// order. The sorted keys go to a temporary buffer of the keys' size from the `Gpu`'s pool.
/// [`Error::TooLarge`] for `u32` indices past 2^32 keys. Returns without waiting for the GPU.
pub fn argsort<K: Key, I: SortIndex, C: Comparator<K>>(gpu: &Gpu, keys: &impl DevicePtr<K>, indices: &mut impl DevicePtrMut<I>, comp: C) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let keys = gpu.input("keys", keys, K::DEVICE_ALIGN)?;
    let indices = gpu.output("indices", indices, word, keys.len, &[&keys])?;
    let n = keys.len;
    check_indices(n, indices.len, I::MAX_COUNT)?;
    if n == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let mut sorted = gpu.temp(n * std::mem::size_of::<K>())?;
    let (sorted, _guard) = sorted.device_ptr_mut();
    launch_iota(gpu, &kernels, indices.ptr, n, 0, word)?;
    launch_sort::<K, C>(gpu, keys.ptr, sorted, Some((indices.ptr, indices.ptr, word)), n, comp)
}

/// Sorts `keys` in place by `comp`, stably, and writes to `indices` (same length) the original
/// position of each sorted key, as Modern GPU's MergesortIndices: afterwards `keys[i]` was at
/// `indices[i]`. [`Error::TooLarge`] for `u32` indices past 2^32 keys.
pub fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    indices: &mut impl DevicePtrMut<I>,
    comp: C,
) -> Result<()> {
    let word = std::mem::size_of::<I>();
    let (keys, indices) = gpu.inplace_pairs(keys, indices, "indices", word)?;
    let n = keys.len;
    check_indices(n, indices.len, I::MAX_COUNT)?;
    if n > 0 {
        let kernels = gpu.kernels::<K, C>()?;
        launch_iota(gpu, &kernels, indices.ptr, n, 0, word)?;
    }
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, Some((indices.ptr, indices.ptr, word)), n, comp)
}

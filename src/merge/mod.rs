//! Stable merge of two sorted sequences: keys, or keys with values.
//!
//! Two phases (see [`crate::partition`]): the partition kernel finds where each output tile's
//! boundary meets the merge path; then each CTA loads its slices of A and B into shared memory,
//! each thread searches its own start and merges VT items in registers, and the tile is stored
//! with coalesced writes. Values are gathered through the merge's source indices.
//!
//! [`merge_keys_with`] also runs the co-rank "ladder" of Kirk & Hwu's merge chapter
//! ([`MergeStrategy`]), the designs the two-phase merge improves on, for comparison.

pub(crate) mod launch;
#[cfg(any(test, feature = "models"))]
mod model;
mod plan;
mod records;

use crate::device::Gpu;
use crate::error::Result;
use crate::device::buffers::CheckedBuffer;
use crate::gather::{carry_positions, ValueSources};
use crate::key::{value_align, value_carry, Comparator, Key, Value, ValueCarry};
use launch::launch_ladder;
#[cfg(any(test, feature = "models"))]
pub use model::two_phase_merge;
pub use plan::MergeStrategy;
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// Merges `a` and `b`, both sorted by `comp`, into `out[..a.len() + b.len()]`.
///
/// Stable: of equal keys, those from `a` come first, each input's in its own order. `out` may
/// be longer than needed (the rest is left as it is) and must not overlap `a` or `b`. Any
/// lengths work, including 0 and more than 2^31 items. Returns without waiting for the GPU.
///
/// Unsorted inputs give an unspecified order of the same keys (and [`merge_pairs`] each value
/// with its key), never an item lost or doubled nor an out-of-bounds access: every tile checks
/// that its partitions are exact and its slices sorted, and where one is not, the output is `a`
/// followed by `b`.
pub fn merge_keys<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    out: &mut impl DevicePtrMut<K>,
    comp: C,
) -> Result<()> {
    merge_keys_with(gpu, a, b, out, comp, MergeStrategy::TwoPhase)
}

/// [`merge_keys`] with the kernel `strategy` chooses; the result is the same for every one.
/// On unsorted inputs the co-rank ladder strategies (the book's kernels, with no such check)
/// give keys from the inputs, possibly some repeated and some missing, never an out-of-bounds
/// access.
pub fn merge_keys_with<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    out: &mut impl DevicePtrMut<K>,
    comp: C,
    strategy: MergeStrategy,
) -> Result<()> {
    let align = K::DEVICE_ALIGN;
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let out = gpu.output("out", out, align, a.len + b.len, &[&a, &b])?;
    let total = a.len + b.len;
    // Records wider than the key tiles merge by their comparable keys with the two-phase merge.
    if strategy == MergeStrategy::TwoPhase || total == 0 || C::RECORD.is_some() {
        return launch_merge::<K, C>(gpu, &a, &b, &out, None, comp);
    }
    launch_ladder::<K, C>(gpu, &a, &b, &out, strategy)
}

/// Enqueues the merge of validated buffers, values (a's, b's, the output's, word bytes)
/// following: the two-phase merge's kernels, or for records wider than the key tiles the
/// merge of their comparable keys ([`records`]).
pub(crate) fn launch_merge<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &CheckedBuffer<'_>,
    b: &CheckedBuffer<'_>,
    out: &CheckedBuffer<'_>,
    values: Option<(&CheckedBuffer<'_>, &CheckedBuffer<'_>, &CheckedBuffer<'_>, usize)>,
    comp: C,
) -> Result<()> {
    match &C::RECORD {
        Some(order) if a.len + b.len > 0 => records::merge_records::<K>(gpu, order, a, b, out, values),
        _ => launch::launch_merge::<K, C>(gpu, a, b, out, values, comp),
    }
}

/// Merges key/value pairs: keys as [`merge_keys`], each value following its key.
///
/// Values are any [`Value`] (those not of 4, 8 or 16 bytes carried by position and gathered
/// once). Each value buffer must have its keys'
/// length ([`Error::LengthMismatch`](crate::Error::LengthMismatch) otherwise); `out_values` must be at least as long as the
/// result. Returns without waiting for the GPU.
#[allow(clippy::too_many_arguments)]
pub fn merge_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    a_keys: &impl DevicePtr<K>,
    a_values: &impl DevicePtr<V>,
    b_keys: &impl DevicePtr<K>,
    b_values: &impl DevicePtr<V>,
    out_keys: &mut impl DevicePtrMut<K>,
    out_values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let value_align = const { value_align::<V>() };
    let align = K::DEVICE_ALIGN;
    let [a, b, av, bv] = gpu.pair_inputs(a_keys, a_values, b_keys, b_values, value_align)?;
    let total = a.len + b.len;
    let ok = gpu.output("out_keys", out_keys, align, total, &[&a, &b, &av, &bv])?;
    let ov = gpu.output("out_values", out_values, value_align, total, &[&a, &b, &av, &bv, &ok])?;
    launch_merge_pairs::<K, V, C>(gpu, [&a, &b, &ok], [&av, &bv, &ov], comp)
}

/// Enqueues the merge of pairs on validated buffers (`keys`: A, B and the output's; `values`
/// the same, aligned as `value_align::<V>()` asks), the values carried as words or by
/// position.
pub(crate) fn launch_merge_pairs<K: Key, V: Value, C: Comparator<K>>(gpu: &Gpu, keys: [&CheckedBuffer<'_>; 3], values: [&CheckedBuffer<'_>; 3], comp: C) -> Result<()> {
    let ([a, b, ok], [av, bv, ov]) = (keys, values);
    match const { value_carry::<V>() } {
        ValueCarry::Words(word) => launch_merge::<K, C>(gpu, a, b, ok, Some((av, bv, ov, word)), comp),
        ValueCarry::Positions(bytes) => {
            let kernels = gpu.kernels::<K, C>()?;
            let sources = ValueSources { a: (av.ptr, av.len), b: Some((bv.ptr, bv.len)) };
            let total = a.len + b.len;
            carry_positions(gpu, &kernels, sources, ov.ptr, bytes, |positions, out, word| {
                let (pa, pb) = (CheckedBuffer::raw(positions, a.len, word), CheckedBuffer::raw(positions + (a.len * word) as u64, b.len, word));
                launch_merge::<K, C>(gpu, a, b, ok, Some((&pa, &pb, &CheckedBuffer::raw(out, total, word), word)), comp)
            })
        }
    }
}

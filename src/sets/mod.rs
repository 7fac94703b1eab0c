//! Multiset operations on two sorted inputs: intersection, union, difference and symmetric
//! difference, of keys or key/value pairs, with C++'s `std::set_*` semantics.
//!
//! A key that appears `i` times in A and `j` times in B appears `min(i, j)` times in the
//! intersection (A's first `min(i, j)`), `max(i, j)` in the union (all of A's, then B's last
//! `max(j - i, 0)`), `max(i - j, 0)` in the difference A - B (A's last ones) and `|i - j|` in the
//! symmetric difference (the last ones of the side with more). The result is sorted; values come
//! with their keys, from A where the key comes from A.
//!
//! The work is split with Balanced Path (Baxter, Modern GPU): the k-th copy of a key in A and
//! the k-th in B form a pair, and the partitions of the two-phase layer never separate a pair,
//! so each CTA and each thread decides its items exactly (`balanced_path`, `serial_set_op` in
//! `mergepath-build/kernels/mergepath/`). Each CTA compacts its outputs, and a single-pass scan of the tiles'
//! output counts (decoupled look-back) places them, so the inputs are read once and the result
//! written once. The result's length stays in device memory ([`SetLen`]) until asked for.

mod launch;
mod plan;
mod records;

use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{value_word, Comparator, Key, Value};
pub(crate) use launch::Output;
use launch::launch_set_op;
pub use crate::types::SetOperation;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// The length of a multiset operation's result, in device memory: the enqueued kernels write
/// it, and nothing waits for them until [`SetLen::read`].
#[derive(Debug)]
pub struct SetLen {
    len: CudaSlice<u64>,
    capacity: usize,
}

impl SetLen {
    /// The length as a one-element device buffer, for the caller's own kernels or copies
    /// (stream-ordered after the operation).
    pub fn device(&self) -> &CudaSlice<u64> {
        &self.len
    }

    /// Takes the device buffer.
    pub fn into_device(self) -> CudaSlice<u64> {
        self.len
    }

    /// Waits for the operation and returns the result's length. If the output buffers were
    /// shorter than the result, they hold its first items and this is
    /// [`Error::OutputTooSmall`] with the full length.
    pub fn read(&self, gpu: &Gpu) -> Result<usize> {
        let len = gpu.download(&self.len)?[0];
        let len = usize::try_from(len).map_err(|_| Error::TooLarge { what: "set result length" })?;
        if len > self.capacity {
            return Err(Error::OutputTooSmall { what: "set operation output", needed: len, got: self.capacity });
        }
        Ok(len)
    }
}

/// Writes `op` of `a` and `b` (both sorted by `comp`) to `out` and returns its length (in
/// device memory). `out` may have any length: [`SetOperation::max_len`] never truncates; a
/// shorter one receives the result's first `out.len()` keys and [`SetLen::read`] reports the
/// shortfall. `out` must not overlap the inputs. Any lengths, including 0 and more than 2^31.
/// Returns without waiting for the GPU, except on records wider than the key tiles (their
/// gather needs the result's length).
///
/// Unsorted inputs give an unspecified result of keys from the inputs, its length unspecified
/// too ([`SetLen::read`] may report [`Error::OutputTooSmall`] even for a `max_len` output),
/// never an out-of-bounds access.
pub fn set_operation_keys<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    op: SetOperation,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    out: &mut impl DevicePtrMut<K>,
    _comp: C,
) -> Result<SetLen> {
    let align = K::DEVICE_ALIGN;
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let out = gpu.output("out", out, align, 0, &[&a, &b])?;
    launch_set_operation::<K, C>(gpu, op, &a, &b, Output::Keys(&out))
}

/// `op` on key/value pairs: keys as [`set_operation_keys`], each output key with its value
/// (from A's values where the key comes from A, else from B's). Each value buffer must have
/// its keys' length ([`Error::LengthMismatch`]); the result is truncated to the shorter of
/// `out_keys` and `out_values`. Values of 4, 8 or 16 bytes (other sizes are a compile error
/// here: carry a `u32` index).
#[allow(clippy::too_many_arguments)]
pub fn set_operation_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    op: SetOperation,
    a_keys: &impl DevicePtr<K>,
    a_values: &impl DevicePtr<V>,
    b_keys: &impl DevicePtr<K>,
    b_values: &impl DevicePtr<V>,
    out_keys: &mut impl DevicePtrMut<K>,
    out_values: &mut impl DevicePtrMut<V>,
    _comp: C,
) -> Result<SetLen> {
    let word = const { value_word::<V>() };
    let align = K::DEVICE_ALIGN;
    let [a, b, av, bv] = gpu.pair_inputs(a_keys, a_values, b_keys, b_values, word)?;
    let ok = gpu.output("out_keys", out_keys, align, 0, &[&a, &b, &av, &bv])?;
    let ov = gpu.output("out_values", out_values, word, 0, &[&a, &b, &av, &bv, &ok])?;
    launch_set_operation::<K, C>(gpu, op, &a, &b, Output::Pairs { keys: &ok, a_values: &av, b_values: &bv, values: &ov, word })
}

/// The length of `op`'s result on `a` and `b` (sorted by `comp`), without writing the result:
/// the inputs are read once and nothing else is written. In device memory until
/// [`SetLen::read`]. Returns without waiting for the GPU.
pub fn set_operation_len<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    op: SetOperation,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    _comp: C,
) -> Result<SetLen> {
    let align = K::DEVICE_ALIGN;
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    launch_set_operation::<K, C>(gpu, op, &a, &b, Output::LenOnly)
}

/// Enqueues `op` for `output` on validated buffers; the result's length with the output's
/// capacity.
pub(crate) fn launch_set_operation<K: Key, C: Comparator<K>>(gpu: &Gpu, op: SetOperation, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, output: Output<'_, '_>) -> Result<SetLen> {
    let capacity = output.capacity();
    if let Some(order) = &C::RECORD {
        return Ok(SetLen { len: records::set_op_records::<K>(gpu, order, op, a, b, output)?, capacity });
    }
    let kernels = gpu.kernels::<K, C>()?;
    Ok(SetLen { len: launch_set_op::<K>(gpu, &kernels, op, a, b, output)?, capacity })
}

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
//! `kernels/mergepath/`). Each CTA compacts its outputs, and a single-pass scan of the tiles'
//! output counts (decoupled look-back) places them, so the inputs are read once and the result
//! written once. The result's length stays in device memory ([`SetLen`]) until asked for.

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{value_word, Comparator, Key, Value};
use crate::partition::{partition_count, partition_launch_config};
use crate::tuning::{sets_shape, LaunchShape};
pub use crate::types::SetOperation;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};

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
/// Returns without waiting for the GPU.
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
    let align = std::mem::align_of::<K>();
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let out = gpu.output("out", out, align, 0, &[&a, &b])?;
    let kernels = gpu.kernels::<K, C>()?;
    launch_set_op::<K>(gpu, &kernels, op, &a, &b, Output::Keys(&out))
}

/// `op` on key/value pairs: keys as [`set_operation_keys`], each output key with its value
/// (from A's values where the key comes from A, else from B's). Each value buffer must have
/// its keys' length ([`Error::LengthMismatch`]); the result is truncated to the shorter of
/// `out_keys` and `out_values`.
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
    let align = std::mem::align_of::<K>();
    let [a, b, av, bv] = gpu.pair_inputs(a_keys, a_values, b_keys, b_values, word)?;
    let ok = gpu.output("out_keys", out_keys, align, 0, &[&a, &b, &av, &bv])?;
    let ov = gpu.output("out_values", out_values, word, 0, &[&a, &b, &av, &bv, &ok])?;
    let kernels = gpu.kernels::<K, C>()?;
    launch_set_op::<K>(gpu, &kernels, op, &a, &b, Output::Pairs { keys: &ok, a_values: &av, b_values: &bv, values: &ov, word })
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
    let align = std::mem::align_of::<K>();
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let kernels = gpu.kernels::<K, C>()?;
    launch_set_op::<K>(gpu, &kernels, op, &a, &b, Output::LenOnly)
}

/// What a set kernel writes.
pub(crate) enum Output<'a, 'b> {
    LenOnly,
    Keys(&'a BufArg<'b>),
    Pairs { keys: &'a BufArg<'b>, a_values: &'a BufArg<'b>, b_values: &'a BufArg<'b>, values: &'a BufArg<'b>, word: usize },
}

/// Enqueues the Balanced Path partitions and the set kernel for `output` on validated buffers.
pub(crate) fn launch_set_op<K: Key>(gpu: &Gpu, kernels: &Kernels, op: SetOperation, a: &BufArg<'_>, b: &BufArg<'_>, output: Output<'_, '_>) -> Result<SetLen> {
    let capacity = match &output {
        Output::LenOnly => usize::MAX,
        Output::Keys(keys) => keys.len,
        Output::Pairs { keys, values, .. } => keys.len.min(values.len),
    };
    let mut len = gpu.alloc_zeros::<u64>(1)?;
    let total = a.len + b.len;
    if total == 0 {
        return Ok(SetLen { len, capacity });
    }
    let shape: LaunchShape = sets_shape(kernels.arch, std::mem::size_of::<K>());
    let tiles = grid_ctas(total.div_ceil(shape.tile()), "set operation grid")?;
    // Splits (16 bytes each), then the tiles' scan states and the ticket counter (8 bytes each).
    let num_splits = partition_count(total, shape.tile());
    let split_bytes = (num_splits * 16).div_ceil(256) * 256;
    let mut temp = gpu.temp(split_bytes + num_splits * 8)?;
    let (splits, _temp_guard) = temp.device_ptr_mut();
    let states = splits + split_bytes as u64;
    let (len_ptr, _len_guard) = len.device_ptr_mut(gpu.stream());

    let args = [
        KernelArg::Ptr(a.ptr),
        KernelArg::I64(a.len as i64),
        KernelArg::Ptr(b.ptr),
        KernelArg::I64(b.len as i64),
        KernelArg::I64(shape.tile() as i64),
        KernelArg::I64(num_splits as i64),
        KernelArg::Ptr(splits),
        KernelArg::Ptr(states),
    ];
    let func = kernels.function("mergepath_set_partitions")?;
    // SAFETY: the arguments match `mergepath_set_partitions` (kernels/mergepath/instantiate.cuh);
    // a and b are valid for their lengths, the temp buffer holds num_splits splits of 16 bytes
    // and num_splits states of 8 after them, and the grid covers num_splits threads.
    unsafe { gpu.launch(&func, partition_launch_config(num_splits)?, &args) }?;

    let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let (emit, tiles_arg) = (KernelArg::I64(op.emit()), KernelArg::I64(i64::from(tiles)));
    let capacity_arg = KernelArg::I64(i64::try_from(capacity).unwrap_or(i64::MAX));
    match output {
        Output::LenOnly => {
            let args = [KernelArg::Ptr(a.ptr), KernelArg::Ptr(b.ptr), KernelArg::Ptr(splits), emit, KernelArg::Ptr(len_ptr)];
            let func = kernels.function("mergepath_set_count")?;
            // SAFETY: the arguments match `mergepath_set_count`; the kernel's tile is `shape`
            // (same table row), the grid has one CTA per tile, the splits (tiles + 1) were just
            // computed with that spacing, and `len` is one zeroed u64 the tiles add to.
            unsafe { gpu.launch(&func, cfg, &args) }?;
        }
        Output::Keys(out) => {
            let args = [KernelArg::Ptr(a.ptr), KernelArg::Ptr(b.ptr), KernelArg::Ptr(splits), tiles_arg, emit, KernelArg::Ptr(states), KernelArg::Ptr(out.ptr), capacity_arg, KernelArg::Ptr(len_ptr)];
            let func = kernels.function("mergepath_set_keys")?;
            // SAFETY: as above for `mergepath_set_keys`; the tile states (tiles + 1, zeroed by
            // the partition kernel) hold the scan and the ticket counter, and the kernel writes
            // only the first `capacity` (out's length) outputs.
            unsafe { gpu.launch(&func, cfg, &args) }?;
        }
        Output::Pairs { keys, a_values, b_values, values, word } => {
            let args = [
                KernelArg::Ptr(a.ptr),
                KernelArg::Ptr(a_values.ptr),
                KernelArg::Ptr(b.ptr),
                KernelArg::Ptr(b_values.ptr),
                KernelArg::Ptr(splits),
                tiles_arg,
                emit,
                KernelArg::Ptr(states),
                KernelArg::Ptr(keys.ptr),
                KernelArg::Ptr(values.ptr),
                capacity_arg,
                KernelArg::Ptr(len_ptr),
            ];
            let func = kernels.for_values("mergepath_set_pairs", word)?;
            // SAFETY: as above for `mergepath_set_pairs_{4,8,16}`; the value buffers have
            // their keys' lengths and the word alignment, and `capacity` is the shorter output.
            unsafe { gpu.launch(&func, cfg, &args) }?;
        }
    }
    drop(_len_guard);
    Ok(SetLen { len, capacity })
}

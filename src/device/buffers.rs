//! Validation of the device buffers a call is given: context, lengths, alignment, overlap,
//! all checked before a launch. The library's launches and users' ([`Gpu::check_input`],
//! [`Gpu::check_output`]) use the same checks.

use super::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{sys, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop};

/// A device buffer after validation: its address and length for a kernel's arguments, and the
/// guard that records the access with cudarc (its stream synchronization) when dropped: keep
/// it until the launch that uses it is enqueued, then drop it.
///
/// From [`Gpu::check_input`] and [`Gpu::check_output`].
pub struct CheckedBuffer<'a> {
    /// The device address (a `CUdeviceptr`: pass it as a pointer argument).
    pub ptr: sys::CUdeviceptr,
    /// The length in elements.
    pub len: usize,
    bytes: usize,
    what: &'static str,
    _guard: SyncOnDrop<'a>,
}

impl std::fmt::Debug for CheckedBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedBuffer").field("what", &self.what).field("ptr", &self.ptr).field("len", &self.len).finish_non_exhaustive()
    }
}

impl CheckedBuffer<'static> {
    /// A buffer of `len` elements of `elem_bytes` at `ptr` that the caller owns and keeps valid
    /// in stream order (temp storage): nothing to record with cudarc.
    pub(crate) fn raw(ptr: sys::CUdeviceptr, len: usize, elem_bytes: usize) -> Self {
        CheckedBuffer { ptr, len, bytes: len * elem_bytes, what: "temp", _guard: SyncOnDrop::Sync(None) }
    }
}

impl Gpu {
    /// Validates an input buffer of a kernel of your own, as the library's launches validate
    /// theirs: [`Error::WrongContext`] unless it belongs to this handle's context,
    /// [`Error::Misaligned`] unless its address is aligned for `T`. `what` names it in errors.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), mergepath::Error> {
    /// # let gpu = mergepath::Gpu::new(0)?;
    /// let keys = gpu.upload(&[1u32, 2, 3])?;
    /// let mut counts = gpu.alloc_zeros::<u32>(3)?;
    /// let input = gpu.check_input("keys", &keys)?;
    /// let output = gpu.check_output("counts", &mut counts, input.len, &[&input])?;
    /// // Launch with input.ptr, input.len and output.ptr as arguments, then drop both.
    /// # Ok(()) }
    /// ```
    pub fn check_input<'a, T, S: DevicePtr<T>>(&'a self, what: &'static str, buf: &'a S) -> Result<CheckedBuffer<'a>> {
        self.input(what, buf, std::mem::align_of::<T>())
    }

    /// Validates an output buffer of a kernel of your own: [`Error::OutputTooSmall`] unless it
    /// holds at least `needed` elements, [`Error::WrongContext`] and [`Error::Misaligned`] as
    /// for [`Gpu::check_input`], and [`Error::Overlap`] if it overlaps any of `inputs` (empty
    /// buffers overlap nothing).
    pub fn check_output<'a, T, S: DevicePtrMut<T>>(
        &'a self,
        what: &'static str,
        buf: &'a mut S,
        needed: usize,
        inputs: &[&CheckedBuffer<'_>],
    ) -> Result<CheckedBuffer<'a>> {
        self.output(what, buf, std::mem::align_of::<T>(), needed, inputs)
    }

    /// [`Error::WrongContext`] unless `buf` belongs to this handle's context.
    pub(crate) fn check_context<T, S: DeviceSlice<T>>(&self, what: &'static str, buf: &S) -> Result<()> {
        if **buf.stream().context() != *self.ctx {
            return Err(Error::WrongContext { what });
        }
        Ok(())
    }

    /// Validates an input buffer whose elements the kernels access in `align`-byte words.
    pub(crate) fn input<'a, T, S: DevicePtr<T>>(&'a self, what: &'static str, buf: &'a S, align: usize) -> Result<CheckedBuffer<'a>> {
        self.check_context(what, buf)?;
        let (ptr, guard) = buf.device_ptr(&self.stream);
        check_alignment(what, ptr, align)?;
        Ok(CheckedBuffer { ptr, len: buf.len(), bytes: buf.num_bytes(), what, _guard: guard })
    }

    /// Validates keys and the values (`what`, in `word`-byte words) that move with them in
    /// place: the same length, not overlapping.
    pub(crate) fn inplace_pairs<'a, K: crate::key::Key, V>(
        &'a self,
        keys: &'a mut impl DevicePtrMut<K>,
        values: &'a mut impl DevicePtrMut<V>,
        what: &'static str,
        word: usize,
    ) -> Result<(CheckedBuffer<'a>, CheckedBuffer<'a>)> {
        let n = keys.len();
        if values.len() != n {
            return Err(Error::LengthMismatch { what, expected: n, got: values.len() });
        }
        let keys = self.output("keys", keys, K::DEVICE_ALIGN, n, &[])?;
        let values = self.output(what, values, word, n, &[&keys])?;
        Ok((keys, values))
    }

    /// Validates the keys and values of two inputs (`a_keys`, `a_values`, `b_keys`, `b_values`,
    /// in that order): values in `word`-byte words, each value buffer its keys' length.
    pub(crate) fn pair_inputs<'a, K: crate::key::Key, V>(
        &'a self,
        a_keys: &'a impl DevicePtr<K>,
        a_values: &'a impl DevicePtr<V>,
        b_keys: &'a impl DevicePtr<K>,
        b_values: &'a impl DevicePtr<V>,
        word: usize,
    ) -> Result<[CheckedBuffer<'a>; 4]> {
        let align = K::DEVICE_ALIGN;
        let a = self.input("a_keys", a_keys, align)?;
        let b = self.input("b_keys", b_keys, align)?;
        let av = self.input("a_values", a_values, word)?;
        let bv = self.input("b_values", b_values, word)?;
        for (what, keys, values) in [("a_values", &a, &av), ("b_values", &b, &bv)] {
            if values.len != keys.len {
                return Err(Error::LengthMismatch { what, expected: keys.len, got: values.len });
            }
        }
        Ok([a, b, av, bv])
    }

    /// Validates an output buffer that must hold at least `needed` elements and must not
    /// overlap any of `inputs`.
    pub(crate) fn output<'a, T, S: DevicePtrMut<T>>(
        &'a self,
        what: &'static str,
        buf: &'a mut S,
        align: usize,
        needed: usize,
        inputs: &[&CheckedBuffer<'_>],
    ) -> Result<CheckedBuffer<'a>> {
        let (len, bytes) = (buf.len(), buf.num_bytes());
        if len < needed {
            return Err(Error::OutputTooSmall { what, needed, got: len });
        }
        self.check_context(what, buf)?;
        let (ptr, guard) = buf.device_ptr_mut(&self.stream);
        let out = CheckedBuffer { ptr, len, bytes, what, _guard: guard };
        check_placement(&out, align, inputs)?;
        Ok(out)
    }
}

fn check_alignment(what: &'static str, ptr: u64, align: usize) -> Result<()> {
    if !ptr.is_multiple_of(align as u64) {
        return Err(Error::Misaligned { what, align });
    }
    Ok(())
}

/// Checks an output's alignment and that it overlaps none of the inputs (empty buffers overlap
/// nothing).
fn check_placement(out: &CheckedBuffer<'_>, align: usize, inputs: &[&CheckedBuffer<'_>]) -> Result<()> {
    check_alignment(out.what, out.ptr, align)?;
    let end = |b: &CheckedBuffer<'_>| b.ptr + b.bytes as u64;
    for input in inputs {
        let disjoint = end(out) <= input.ptr || end(input) <= out.ptr;
        if out.bytes > 0 && input.bytes > 0 && !disjoint {
            return Err(Error::Overlap { output: out.what, input: input.what });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(what: &'static str, ptr: u64, bytes: usize) -> CheckedBuffer<'static> {
        CheckedBuffer { what, ..CheckedBuffer::raw(ptr, bytes / 4, 4) }
    }

    #[test]
    fn placement_accepts_disjoint_and_adjacent_buffers() {
        let (a, b) = (arg("a", 0x1000, 64), arg("b", 0x1040, 64));
        assert_eq!(check_placement(&arg("out", 0x1080, 128), 4, &[&a, &b]), Ok(()));
        assert_eq!(check_placement(&arg("out", 0x0f00, 256), 4, &[&a, &b]), Ok(()));
        // Empty buffers overlap nothing, wherever they point.
        assert_eq!(check_placement(&arg("out", 0x1000, 0), 4, &[&a]), Ok(()));
        assert_eq!(check_placement(&arg("out", 0x1000, 64), 4, &[&arg("a", 0x1000, 0)]), Ok(()));
    }

    #[test]
    fn placement_rejects_overlap_and_misalignment() {
        let (a, b) = (arg("a", 0x1000, 64), arg("b", 0x1040, 64));
        assert_eq!(check_placement(&arg("out", 0x107c, 8), 4, &[&a, &b]), Err(Error::Overlap { output: "out", input: "b" }));
        assert_eq!(check_placement(&arg("out", 0x0ffc, 8), 4, &[&a, &b]), Err(Error::Overlap { output: "out", input: "a" }));
        assert_eq!(check_placement(&arg("out", 0x2004, 8), 8, &[&a]), Err(Error::Misaligned { what: "out", align: 8 }));
    }
}

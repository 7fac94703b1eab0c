//! Temporary device storage, pooled per `Gpu` so repeated calls do not allocate.

use super::{oom, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaSlice, CudaView, CudaViewMut, DevicePtrMut, SyncOnDrop};

impl Gpu {
    /// At least `bytes` of temporary device storage, returned to the pool when dropped: the
    /// smallest pooled buffer that is large enough, else a new one (after giving the pooled ones
    /// back to the driver if the device is out of memory). Reuse is safe without synchronizing
    /// because all of this handle's work runs in stream order.
    pub(crate) fn temp(&self, bytes: usize) -> Result<Temp<'_>> {
        let pooled = {
            let mut pool = self.temp.lock().unwrap_or_else(|p| p.into_inner());
            let best = (0..pool.len()).filter(|&i| pool[i].len() >= bytes).min_by_key(|&i| pool[i].len());
            best.map(|i| pool.swap_remove(i))
        };
        let buf = match pooled {
            Some(buf) => buf,
            None => {
                let size = temp_size(bytes);
                // SAFETY: temp storage is always written by a kernel or a copy before it is read.
                match unsafe { self.stream.alloc::<u8>(size) }.map_err(|e| oom(e, size)) {
                    Err(Error::OutOfMemory { .. }) => {
                        self.temp.lock().unwrap_or_else(|p| p.into_inner()).clear();
                        // SAFETY: as above.
                        unsafe { self.stream.alloc::<u8>(size) }.map_err(|e| oom(e, size))?
                    }
                    other => other?,
                }
            }
        };
        Ok(Temp { gpu: self, buf: Some(buf) })
    }
}

/// Temporary device storage from the [`Gpu`]'s pool.
pub(crate) struct Temp<'a> {
    gpu: &'a Gpu,
    buf: Option<CudaSlice<u8>>,
}

impl Temp<'_> {
    pub fn device_ptr_mut(&mut self) -> (sys::CUdeviceptr, SyncOnDrop<'_>) {
        let buf = self.buf.as_mut().expect("temp buffer present until drop");
        buf.device_ptr_mut(&self.gpu.stream)
    }

    /// The buffer's first `len` items as `T`s, for typed calls ([`Error::TooLarge`] past the
    /// buffer; it starts at the allocator's alignment, which suits every key and value).
    pub fn view<T: bytemuck::Pod>(&self, len: usize) -> Result<CudaView<'_, T>> {
        let buf = self.buf.as_ref().expect("temp buffer present until drop");
        // SAFETY: any bytes are a `T` (Pod); the length is checked by `transmute`.
        unsafe { buf.transmute::<T>(len) }.ok_or(Error::TooLarge { what: "a view of temporary storage" })
    }

    /// [`Temp::view`], writable.
    pub fn view_mut<T: bytemuck::Pod>(&mut self, len: usize) -> Result<CudaViewMut<'_, T>> {
        let buf = self.buf.as_mut().expect("temp buffer present until drop");
        // SAFETY: any bytes are a `T` (Pod); the length is checked by `transmute_mut`.
        unsafe { buf.transmute_mut::<T>(len) }.ok_or(Error::TooLarge { what: "a view of temporary storage" })
    }
}

/// Buffers the temp pool keeps at most: a host-slice sort holds three at once (its data, the
/// merge buffer, a chunk sort's temporaries); the smallest goes first past that.
const TEMP_POOL_BUFFERS: usize = 4;

/// The size a temp request of `bytes` allocates: the next power of two up to 1 MiB, so slowly
/// growing requests do not reallocate every call, and above that the next multiple of a
/// sixteenth of it, so a large buffer wastes at most about 6 %.
fn temp_size(bytes: usize) -> usize {
    let pow2 = bytes.max(1).next_power_of_two();
    if pow2 <= 1 << 20 {
        pow2
    } else {
        bytes.next_multiple_of(pow2 / 16)
    }
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        let buf = self.buf.take().expect("temp buffer present until drop");
        let mut pool = self.gpu.temp.lock().unwrap_or_else(|p| p.into_inner());
        pool.push(buf);
        if pool.len() > TEMP_POOL_BUFFERS {
            let smallest = (0..pool.len()).min_by_key(|&i| pool[i].len()).expect("pool is not empty");
            pool.swap_remove(smallest);
        }
    }
}

/// `bytes` rounded up to the alignment of a temporary buffer's regions
/// ([`TEMP_ALIGN`](super::contract::TEMP_ALIGN)).
pub(crate) fn temp_aligned(bytes: usize) -> usize {
    bytes.next_multiple_of(super::contract::TEMP_ALIGN)
}

/// One temporary buffer carved into regions, each starting at a multiple of
/// [`TEMP_ALIGN`](super::contract::TEMP_ALIGN).
#[derive(Default)]
pub(crate) struct TempLayout {
    bytes: usize,
}

impl TempLayout {
    /// A region of `bytes` after those before it: its offset in the buffer.
    pub(crate) fn region(&mut self, bytes: usize) -> usize {
        let at = temp_aligned(self.bytes);
        self.bytes = at + bytes;
        at
    }

    /// The buffer's size: the end of its last region.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_sizes_round_up_a_little() {
        assert_eq!(temp_size(0), 1);
        assert_eq!(temp_size(1000), 1024);
        assert_eq!(temp_size(1 << 20), 1 << 20);
        assert_eq!(temp_size((1 << 20) + 1), (1 << 20) + (1 << 17));
        assert_eq!(temp_size(256 << 20), 256 << 20);
        assert_eq!(temp_size((256 << 20) + 256), (256 << 20) + (32 << 20));
        for bytes in [3usize << 20, 5 << 20, (1 << 30) + 7] {
            assert!(temp_size(bytes) >= bytes && temp_size(bytes) <= bytes + bytes / 8, "{bytes}");
        }
    }

    #[test]
    fn temp_regions_start_aligned_and_end_unrounded() {
        let mut layout = TempLayout::default();
        assert_eq!(layout.region(100), 0);
        assert_eq!(layout.region(0), 256);
        assert_eq!(layout.region(8), 256);
        assert_eq!(layout.bytes(), 264);
    }
}

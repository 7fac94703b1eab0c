//! Segment offsets from the host (checked, uploaded) or from device memory (used as they are).

use super::plan::{segment_geometry, segment_levels, validate_segment_offsets};
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr};

/// Where a segmented sort's offsets are: a host slice of `usize` (`[usize]`, `[usize; N]`,
/// `Vec<usize>`: validated, then uploaded) or device memory of `u64` ([`CudaSlice<u64>`],
/// [`CudaView<u64>`], [`CudaViewMut<u64>`]: used in place, not validated). Sealed.
pub trait SegmentOffsets: sealed::Sealed {}

pub(super) mod sealed {
    use super::*;

    /// Offsets ready for the kernels. (Named only inside the crate: the module is private.)
    #[allow(private_interfaces)]
    pub enum Resolved<'a> {
        /// Uploaded host offsets and the most merge levels a segment needs.
        Host(CudaSlice<u64>, u32),
        /// Device offsets as they are.
        Device(CheckedBuffer<'a>),
        /// Offsets the crate wrote in its temporary storage: `len` u64 at a device address.
        Temp(u64, usize),
    }

    pub trait Sealed {
        /// Checks and readies the offsets of a sort of `len` keys in tiles of `tile` items.
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>>;
    }

    impl Sealed for [usize] {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>> {
            validate_segment_offsets(self, len)?;
            let (stride, small) = segment_geometry(tile);
            let levels = self.windows(2).map(|w| segment_levels(w[0], w[1], stride, small)).max().unwrap_or(0);
            // usize is u64 on 64-bit hosts: no copy.
            let offsets: std::borrow::Cow<[u64]> = match bytemuck::try_cast_slice(self) {
                Ok(same) => std::borrow::Cow::Borrowed(same),
                Err(_) => std::borrow::Cow::Owned(self.iter().map(|&o| o as u64).collect()),
            };
            Ok(Resolved::Host(gpu.upload(&offsets)?, levels))
        }
    }

    impl<const N: usize> Sealed for [usize; N] {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>> {
            self.as_slice().resolve(gpu, len, tile)
        }
    }

    impl Sealed for Vec<usize> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, len: usize, tile: usize) -> Result<Resolved<'a>> {
            self.as_slice().resolve(gpu, len, tile)
        }
    }

    /// Device offsets: the context checked, nothing else.
    fn device<'a>(gpu: &'a Gpu, offsets: &'a impl DevicePtr<u64>) -> Result<Resolved<'a>> {
        Ok(Resolved::Device(gpu.input("offsets", offsets, 8)?))
    }

    impl Sealed for CudaSlice<u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }

    impl Sealed for CudaView<'_, u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }

    impl Sealed for CudaViewMut<'_, u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }
}

/// Offsets the crate computed on the device, in its temporary storage: `len` u64 at `ptr`
/// (a record sort's runs of tied words), used as they are.
pub(crate) struct TempOffsets {
    pub ptr: u64,
    pub len: usize,
}

impl sealed::Sealed for TempOffsets {
    fn resolve<'a>(&'a self, _gpu: &'a Gpu, _len: usize, _tile: usize) -> Result<sealed::Resolved<'a>> {
        Ok(sealed::Resolved::Temp(self.ptr, self.len))
    }
}

impl SegmentOffsets for TempOffsets {}
impl SegmentOffsets for [usize] {}
impl<const N: usize> SegmentOffsets for [usize; N] {}
impl SegmentOffsets for Vec<usize> {}
impl SegmentOffsets for CudaSlice<u64> {}
impl SegmentOffsets for CudaView<'_, u64> {}
impl SegmentOffsets for CudaViewMut<'_, u64> {}

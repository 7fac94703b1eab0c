//! Segment offsets from the host (checked, uploaded) or from device memory (used as they are).

use super::plan::{check_segment_count, invalid_offset, levels_of_pieces, segment_levels, validate_segment_offsets};
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{SegmentOffsetsCheck, SegmentOffsetsCheckParams};
use crate::device::kernels::Kernels;
use crate::device::launch::grid_ctas;
use crate::device::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr, LaunchConfig};

/// Host offsets up to this many are checked on the host, more on the GPU after the upload: the
/// GPU's check costs a round trip (about 30 µs on an H100), one host thread about 6 ns per
/// offset (the order and the levels; 262 K offsets in 1.4–1.9 ms on an H100's host).
const HOST_CHECKED_OFFSETS: usize = 4096;

/// Where a segmented sort's offsets are: a host slice of `usize` (`[usize]`, `[usize; N]`,
/// `Vec<usize>`: validated before any key moves, on the GPU where there are many) or device
/// memory of `u64` ([`CudaSlice<u64>`], [`CudaView<u64>`], [`CudaViewMut<u64>`]: used in
/// place, not validated). Sealed.
pub trait SegmentOffsets: sealed::Sealed {}

// Its items name crate types (`Kernels`, `CheckedBuffer`): they are reached only inside the
// crate, as the module is private.
#[allow(private_interfaces)]
pub(super) mod sealed {
    use super::*;

    /// Offsets ready for the kernels.
    pub enum Resolved<'a> {
        /// Uploaded host offsets and the most merge levels a segment needs.
        Host(CudaSlice<u64>, u32),
        /// Device offsets as they are.
        Device(CheckedBuffer<'a>),
        /// Offsets the crate wrote in its temporary storage: `len` u64 at a device address.
        Temp(u64, usize),
    }

    pub trait Sealed {
        /// Checks and readies the offsets of a sort of `len` keys in tiles of `geometry`
        /// (`segment_geometry`'s `(stride, small)`).
        fn resolve<'a>(&'a self, gpu: &'a Gpu, kernels: &Kernels, len: usize, geometry: (usize, usize)) -> Result<Resolved<'a>>;
    }

    impl Sealed for [usize] {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, kernels: &Kernels, len: usize, (stride, small): (usize, usize)) -> Result<Resolved<'a>> {
            check_segment_count(self.len())?;
            let host_levels = if self.len() <= HOST_CHECKED_OFFSETS {
                validate_segment_offsets(self, len)?;
                Some(self.windows(2).map(|w| segment_levels(w[0], w[1], stride, small)).max().unwrap_or(0))
            } else {
                None
            };
            // usize is u64 on 64-bit hosts: no copy.
            let offsets: std::borrow::Cow<[u64]> = match bytemuck::try_cast_slice(self) {
                Ok(same) => std::borrow::Cow::Borrowed(same),
                Err(_) => std::borrow::Cow::Owned(self.iter().map(|&o| o as u64).collect()),
            };
            let uploaded = gpu.upload(&offsets)?;
            if let Some(levels) = host_levels {
                return Ok(Resolved::Host(uploaded, levels));
            }
            let found = super::check_host_offsets(gpu, kernels, &uploaded, len, stride, small)?;
            if let Some(i) = usize::try_from(found.first_invalid).ok().filter(|&i| i < self.len()) {
                return Err(invalid_offset(self, len, i));
            }
            Ok(Resolved::Host(uploaded, levels_of_pieces(found.max_pieces as usize)))
        }
    }

    impl<const N: usize> Sealed for [usize; N] {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, kernels: &Kernels, len: usize, geometry: (usize, usize)) -> Result<Resolved<'a>> {
            self.as_slice().resolve(gpu, kernels, len, geometry)
        }
    }

    impl Sealed for Vec<usize> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, kernels: &Kernels, len: usize, geometry: (usize, usize)) -> Result<Resolved<'a>> {
            self.as_slice().resolve(gpu, kernels, len, geometry)
        }
    }

    /// Device offsets: the context checked, nothing else.
    fn device<'a>(gpu: &'a Gpu, offsets: &'a impl DevicePtr<u64>) -> Result<Resolved<'a>> {
        Ok(Resolved::Device(gpu.input("offsets", offsets, 8)?))
    }

    impl Sealed for CudaSlice<u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _kernels: &Kernels, _len: usize, _geometry: (usize, usize)) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }

    impl Sealed for CudaView<'_, u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _kernels: &Kernels, _len: usize, _geometry: (usize, usize)) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }

    impl Sealed for CudaViewMut<'_, u64> {
        fn resolve<'a>(&'a self, gpu: &'a Gpu, _kernels: &Kernels, _len: usize, _geometry: (usize, usize)) -> Result<Resolved<'a>> {
            device(gpu, self)
        }
    }
}

/// The shape of the host offsets' check: enough CTAs for a memory-bound pass over an H100, few
/// atomics (one per warp).
const CHECK_CTAS: usize = 1024;
const CHECK_THREADS: usize = 256;

/// Checks uploaded host `offsets` against `len` keys on the GPU and counts the most tiles (every
/// `stride` positions) a segment longer than `small` touches; waits for the result.
fn check_host_offsets(gpu: &Gpu, kernels: &Kernels, offsets: &CudaSlice<u64>, len: usize, stride: usize, small: usize) -> Result<SegmentOffsetsCheck> {
    let mut found = [SegmentOffsetsCheck { first_invalid: u64::MAX, max_pieces: 0 }];
    let result = gpu.upload_table(&found)?;
    let (ptr, _guard) = offsets.device_ptr(gpu.stream());
    let (result_ptr, _result_guard) = result.device_ptr(gpu.stream());
    let to_i64 = |v: usize| i64::try_from(v).map_err(|_| Error::TooLarge { what: "segmented sort length" });
    let params =
        SegmentOffsetsCheckParams { offsets: ptr, num_offsets: to_i64(offsets.len())?, count: to_i64(len)?, stride: to_i64(stride)?, small: to_i64(small)?, result: result_ptr };
    let ctas = grid_ctas(offsets.len().div_ceil(CHECK_THREADS).min(CHECK_CTAS), "offsets check grid")?;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (CHECK_THREADS as u32, 1, 1), shared_mem_bytes: 0 };
    let func = kernels.segment_offsets_check()?;
    // SAFETY: `SegmentOffsetsCheckParams` is `mergepath_segment_offsets_check`'s parameter
    // struct; its grid-stride loop reads the `offsets.len()` offsets only, and its warps' first
    // threads update the one result struct `result` holds, with atomics.
    unsafe { gpu.launch(&func, cfg, &params) }?;
    gpu.download_table(&result, &mut found)?;
    Ok(found[0])
}

/// Offsets the crate computed on the device, in its temporary storage: `len` u64 at `ptr`
/// (a record sort's runs of tied words), used as they are.
pub(crate) struct TempOffsets {
    pub ptr: u64,
    pub len: usize,
}

impl sealed::Sealed for TempOffsets {
    fn resolve<'a>(&'a self, _gpu: &'a Gpu, _kernels: &Kernels, _len: usize, _geometry: (usize, usize)) -> Result<sealed::Resolved<'a>> {
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

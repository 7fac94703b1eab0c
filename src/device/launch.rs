//! Kernel launches: the parameter struct and the grid limit, checked before anything is enqueued.

use super::contract::KernelParams;
use super::kernels::Entry;
use super::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{sys, LaunchConfig, PushKernelArg};

impl Gpu {
    /// Enqueues `entry` on the stream with `params`, its one argument (its parameter struct,
    /// as the entry's type says).
    ///
    /// # Safety
    /// Every pointer in `params` must be valid for what the kernel reads and writes under `cfg`.
    pub(crate) unsafe fn launch<P: KernelParams>(&self, entry: &Entry<P>, cfg: LaunchConfig, params: &P) -> Result<()> {
        let mut builder = self.stream.launch_builder(&entry.function);
        builder.arg(params);
        // SAFETY: forwarded from this function's contract.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    /// [`Gpu::launch`] as a programmatic dependent of the kernel enqueued just before it (CUDA's
    /// programmatic stream serialization, sm_90 and later; an ordinary launch on older
    /// architectures, `arch` being the loaded kernels'): its CTAs may be scheduled while that
    /// kernel's last ones run, and wait in `wait_for_previous_kernel` (device code) until it has
    /// finished and its writes are visible. Hides the launch gap between a partition kernel and
    /// the tiles that read its partitions.
    ///
    /// # Safety
    /// As [`Gpu::launch`]; and the entry point must call `wait_for_previous_kernel` before it
    /// reads anything the previous kernel on the stream writes.
    pub(crate) unsafe fn launch_dependent<P: KernelParams>(&self, entry: &Entry<P>, cfg: LaunchConfig, params: &P, arch: u32) -> Result<()> {
        if arch < 90 {
            // SAFETY: forwarded from this function's contract.
            return unsafe { self.launch(entry, cfg, params) };
        }
        self.stream.context().bind_to_thread()?;
        let mut serialization = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue { programmaticStreamSerializationAllowed: 1 },
        };
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: self.stream.cu_stream(),
            attrs: &mut serialization,
            numAttrs: 1,
        };
        // The kernel's one argument, by address, as cuLaunchKernel takes its arguments.
        let mut args = [params as *const P as *mut std::ffi::c_void];
        // SAFETY: `config` and `serialization` outlive the call, `args` holds the address of the
        // one parameter struct the entry point takes (its type's), on this `Gpu`'s stream and
        // context (bound above).
        unsafe { sys::cuLaunchKernelEx(&config, entry.function.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }.result()?;
        Ok(())
    }
}

/// A grid of `ctas` CTAs, checked against CUDA's limit on grid x (2^31 - 1):
/// [`Error::TooLarge`] naming `what` past it.
pub(crate) fn grid_ctas(ctas: usize, what: &'static str) -> Result<u32> {
    u32::try_from(ctas).ok().filter(|&c| c <= i32::MAX as u32).ok_or(Error::TooLarge { what })
}

/// The widest word (16, 8, 4, 2 or 1 bytes) that divides items of `item_bytes` and every
/// address OR-ed into `addresses`: the word the key-independent kernels move such items as.
pub(crate) fn widest_word(item_bytes: usize, addresses: u64) -> usize {
    [16, 8, 4, 2, 1].into_iter().find(|&w| item_bytes.is_multiple_of(w) && addresses.is_multiple_of(w as u64)).unwrap_or(1)
}

/// The launch shape of the merges' fallback kernels for unsorted inputs (`kernel/unsorted.cuh`):
/// a fixed grid, each CTA returning at once where no tile reported.
pub(crate) fn merge_fallback_config() -> LaunchConfig {
    use super::contract::{MERGE_FALLBACK_CTAS, MERGE_FALLBACK_THREADS};
    LaunchConfig { grid_dim: (MERGE_FALLBACK_CTAS as u32, 1, 1), block_dim: (MERGE_FALLBACK_THREADS as u32, 1, 1), shared_mem_bytes: 0 }
}

#[cfg(test)]
mod tests {
    use super::widest_word;

    #[test]
    fn the_widest_word_divides_the_items_and_every_address() {
        assert_eq!(widest_word(16, 0x1000), 16);
        assert_eq!(widest_word(12, 0x1000), 4);
        assert_eq!(widest_word(16, 0x1008), 8);
        assert_eq!(widest_word(8, 0x1002 | 0x2000), 2);
        assert_eq!(widest_word(5, 0), 1);
    }
}

//! Kernel launches: the argument list and the grid limit, checked before anything is enqueued.

use super::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaFunction, LaunchConfig, PushKernelArg};

impl Gpu {
    /// Enqueues `func` on the stream. Arguments are raw device pointers and integers.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list, and every pointer must be valid for
    /// what the kernel reads and writes under `cfg`.
    pub(crate) unsafe fn launch(&self, func: &CudaFunction, cfg: LaunchConfig, args: &[KernelArg]) -> Result<()> {
        let mut builder = self.stream.launch_builder(func);
        for arg in args {
            match arg {
                KernelArg::Ptr(p) => builder.arg(p),
                KernelArg::I64(v) => builder.arg(v),
            };
        }
        // SAFETY: forwarded from this function's contract.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}

/// A grid of `ctas` CTAs, checked against CUDA's limit on grid x (2^31 - 1):
/// [`Error::TooLarge`] naming `what` past it.
pub(crate) fn grid_ctas(ctas: usize, what: &'static str) -> Result<u32> {
    u32::try_from(ctas).ok().filter(|&c| c <= i32::MAX as u32).ok_or(Error::TooLarge { what })
}

/// One kernel argument.
#[derive(Clone, Copy)]
pub(crate) enum KernelArg {
    Ptr(sys::CUdeviceptr),
    I64(i64),
}

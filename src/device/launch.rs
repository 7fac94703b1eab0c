//! Kernel launches: the parameter struct and the grid limit, checked before anything is enqueued.

use super::contract::KernelParams;
use super::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

impl Gpu {
    /// Enqueues `func` on the stream with `params`, its one argument (a generated parameter
    /// struct of the contract).
    ///
    /// # Safety
    /// `P` must be the parameter struct of `func`'s entry point, and every pointer in it must be
    /// valid for what the kernel reads and writes under `cfg`.
    pub(crate) unsafe fn launch<P: KernelParams>(&self, func: &CudaFunction, cfg: LaunchConfig, params: &P) -> Result<()> {
        let mut builder = self.stream.launch_builder(func);
        builder.arg(params);
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

//! The launch of the partition kernel, for the merge, the search and the sorts.

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use cudarc::driver::LaunchConfig;

/// Threads per CTA of the partition kernel (`mergepath::PARTITION_THREADS`), one thread per
/// partition.
const PARTITION_THREADS: u32 = 128;

/// The launch of a partition kernel (merge or mergesort) computing `count` partitions, one
/// thread each.
pub(crate) fn partition_launch_config(count: usize) -> Result<LaunchConfig> {
    let ctas = grid_ctas(count.div_ceil(PARTITION_THREADS as usize), "partition grid")?;
    Ok(LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (PARTITION_THREADS, 1, 1), shared_mem_bytes: 0 })
}

/// Enqueues the partition kernel writing `count` partitions to `out`.
pub(crate) fn launch_partitions(
    gpu: &Gpu,
    kernels: &Kernels,
    a: &BufArg<'_>,
    b: &BufArg<'_>,
    spacing: usize,
    out: u64,
    count: usize,
) -> Result<()> {
    let spacing = i64::try_from(spacing).map_err(|_| Error::InvalidArgument("spacing exceeds i64"))?;
    let cfg = partition_launch_config(count)?;
    let args = [
        KernelArg::Ptr(a.ptr),
        KernelArg::I64(a.len as i64),
        KernelArg::Ptr(b.ptr),
        KernelArg::I64(b.len as i64),
        KernelArg::I64(spacing),
        KernelArg::I64(count as i64),
        KernelArg::Ptr(out),
    ];
    let func = kernels.function("mergepath_partitions")?;
    // SAFETY: the arguments match `mergepath_partitions` in kernels/mergepath/instantiate.cuh;
    // a and b are valid for their lengths, `out` holds `count` i64, and the grid covers `count`
    // threads (extra threads return at once).
    unsafe { gpu.launch(&func, cfg, &args) }
}

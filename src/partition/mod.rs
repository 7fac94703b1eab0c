//! The two-phase scheduling layer, host side: coarse Merge Path partitions over global memory.
//!
//! Phase one splits the merged output into tiles of `spacing` items and finds, for each tile
//! boundary (cross-diagonal), where the merge path crosses it ([`merge_path_partitions`]). Phase
//! two is a kernel in which each CTA loads its tile's slices of A and B into shared memory,
//! splits the tile again per thread (`cta_merge_from_shared` in `kernels/mergepath/cta.cuh`) and
//! runs the serial loop. A user's own two-phase kernel takes the partition array from here and
//! the device headers from `kernels/mergepath/`.
//!
//! The CPU functions here mirror the device searches exactly; the tests check the device
//! results and the tiling math against them.

mod launch;
mod plan;

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
pub(crate) use launch::{launch_partitions, partition_launch_config};
pub use plan::{balanced_path, co_rank, merge_path, merge_path_partitions_cpu, partition_count};
use cudarc::driver::{CudaSlice, DevicePtr};

/// Computes the coarse Merge Path partitions of `a` and `b` on the GPU: entry `p` is the A index
/// where the merge path crosses diagonal `min(p * spacing, a.len() + b.len())`, for
/// [`partition_count`]`(a.len() + b.len(), spacing)` entries. Tile `p` of a two-phase kernel
/// then merges `a[part[p]..part[p+1]]` with `b[p*spacing - part[p] .. min((p+1)*spacing, total) -
/// part[p+1]]`.
///
/// `a` and `b` must be sorted by `comp`. Returns without waiting for the GPU.
pub fn merge_path_partitions<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    spacing: usize,
    comp: C,
) -> Result<CudaSlice<i64>> {
    let _ = comp;
    if spacing == 0 {
        return Err(Error::InvalidArgument("spacing must be positive"));
    }
    let kernels = gpu.kernels::<K, C>()?;
    let align = std::mem::align_of::<K>();
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let count = partition_count(a.len + b.len, spacing);
    let mut parts = gpu.alloc_zeros::<i64>(count)?;
    let out = gpu.output("partitions", &mut parts, 8, count, &[])?;
    launch_partitions(gpu, &kernels, &a, &b, spacing, out.ptr, count)?;
    drop(out);
    Ok(parts)
}

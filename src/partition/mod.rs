//! The two-phase scheduling layer, host side: coarse Merge Path partitions over global memory.
//!
//! Phase one splits the merged output into tiles of `spacing` items and finds, for each tile
//! boundary (cross-diagonal), where the merge path crosses it ([`merge_path_partitions`]). Phase
//! two is a kernel in which each CTA loads its tile's slices of A and B into shared memory,
//! splits the tile again per thread (`cta_merge_from_shared` in `mergepath-build/kernels/mergepath/cta/tile.cuh`) and
//! runs the serial loop. A user's own two-phase kernel takes the partition array from here and
//! the device headers from `mergepath-build/kernels/mergepath/`.
//!
//! For a kernel of your own: [`TileShape`] sizes its grid, [`Gpu::merge_tile_shape`] and
//! [`Gpu::search_tile_shape`] give the library's tuned shapes, [`merge_path_partitions_into`]
//! writes the partitions into your buffer, and [`visit_merge_tiles_cpu`] runs the whole tile
//! loop on the CPU to test a kernel's tile logic against. [`Gpu::load_module`],
//! [`Gpu::check_input`], [`Gpu::check_output`] and [`Gpu::time`] load, validate and time it.
//!
//! The CPU functions here mirror the device searches exactly; the tests check the device
//! results and the tiling math against them.

pub(crate) mod launch;
pub(crate) mod multiway;
pub(crate) mod plan;
pub(crate) mod tiles;

use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::sort::with_comparable_keys;
use launch::launch_partitions_tie;
use launch::{launch_multiway_partitions, MultiwayTable};
pub(crate) use multiway::clamp_multiway_splits;
pub use multiway::{multiway_boundaries_cpu, multiway_partitions_cpu, multiway_split};
pub use plan::{balanced_path, co_rank, merge_path, merge_path_partitions_cpu, merge_path_tie, partition_count};
pub use crate::types::Tie;
pub use tiles::{visit_merge_tiles_cpu, Source, TileShape};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

/// Computes the coarse Merge Path partitions of `a` and `b` on the GPU: entry `p` is the A index
/// where the merge path crosses diagonal `min(p * spacing, a.len() + b.len())`, for
/// [`partition_count`]`(a.len() + b.len(), spacing)` entries. Tile `p` of a two-phase kernel
/// then merges `a[part[p]..part[p+1]]` with `b[p*spacing - part[p] .. min((p+1)*spacing, total) -
/// part[p+1]]`.
///
/// `a` and `b` must be sorted by `comp`. Returns without waiting for the GPU. Allocates the
/// result; [`merge_path_partitions_into`] writes into a buffer of yours. Records (derived keys
/// over 16 bytes, which have no kernels of their own) are partitioned by their addresses or
/// order keys, computed first in temporary device memory (docs/keys.md).
pub fn merge_path_partitions<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    spacing: usize,
    comp: C,
) -> Result<CudaSlice<i64>> {
    let mut parts = gpu.alloc_zeros::<i64>(checked_partition_count(a.len() + b.len(), spacing)?)?;
    merge_path_partitions_into(gpu, a, b, spacing, comp, &mut parts)?;
    Ok(parts)
}

/// [`merge_path_partitions`] into `out`, which must hold at least
/// [`partition_count`]`(a.len() + b.len(), spacing)` entries ([`Error::OutputTooSmall`]), be of
/// the `Gpu`'s context and overlap neither input; entries past the count are left alone. Nothing is allocated, so a
/// loop of launches can reuse one buffer.
///
/// ```no_run
/// use mergepath::partition::{merge_path_partitions_into, partition_count, TileShape};
/// # fn main() -> Result<(), mergepath::Error> {
/// let gpu = mergepath::Gpu::new(0)?;
/// let (a, b) = (gpu.upload(&[1u32, 3, 5])?, gpu.upload(&[2u32, 4])?);
/// let shape = TileShape { threads: 128, items_per_thread: 11 };
/// let mut parts = gpu.alloc_zeros::<i64>(partition_count(5, shape.tile()))?;
/// merge_path_partitions_into(&gpu, &a, &b, shape.tile(), mergepath::Less, &mut parts)?;
/// assert_eq!(gpu.download(&parts)?, [0, 3]);
/// # Ok(()) }
/// ```
pub fn merge_path_partitions_into<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    spacing: usize,
    comp: C,
    out: &mut impl DevicePtrMut<i64>,
) -> Result<()> {
    merge_path_partitions_tie_into(gpu, a, b, spacing, Tie::AFirst, comp, out)
}

/// [`merge_path_partitions_into`] with equal items of A and B ordered as `tie` says: with
/// [`Tie::BFirst`], the partitions of a kernel whose tiles merge with `tie::b_first` (B's item
/// first where an item of A and one of B are equal), so it keeps its inputs in place. Entry `p`
/// is [`merge_path_tie`]`(a, b, min(p * spacing, total), tie)`.
pub fn merge_path_partitions_tie_into<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    spacing: usize,
    tie: Tie,
    comp: C,
    out: &mut impl DevicePtrMut<i64>,
) -> Result<()> {
    let _ = comp;
    let count = checked_partition_count(a.len() + b.len(), spacing)?;
    let align = K::DEVICE_ALIGN;
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let out = gpu.output("partitions", out, 8, count, &[&a, &b])?;
    let Some(order) = &C::RECORD else {
        return launch_partitions_tie(gpu, &*gpu.kernels::<K, C>()?, &a, &b, spacing, tie, out.ptr, count);
    };
    // Records have no kernels of their own: their comparable keys order and tie as they do, so
    // the keys' merge path is theirs.
    with_comparable_keys::<K, _>(gpu, order, &[(a.ptr, a.len), (b.ptr, b.len)], |keys, kernels| {
        let (ka, kb) = (CheckedBuffer::raw(keys, a.len, 8), CheckedBuffer::raw(keys + (a.len * 8) as u64, b.len, 8));
        launch_partitions_tie(gpu, kernels, &ka, &kb, spacing, tie, out.ptr, count)
    })
}

/// Computes multiway Merge Path partitions of `inputs` (each sorted by `comp`) on the GPU: row
/// `p` (`inputs.len()` entries) is the [`multiway_split`] at output rank `min(p * spacing,
/// total)` of the inputs' stable merge (equal keys: lower inputs first), for
/// [`partition_count`]`(total, spacing)` rows. Tile `p` of a k-way kernel then merges
/// `inputs[t][row p [t] .. row p+1 [t]]` for every t. Row-major, as
/// [`multiway_partitions_cpu`]. At most `MULTIWAY_MAX_WAYS` (1,024) inputs
/// ([`Error::TooLarge`]); empty inputs are allowed. Returns without waiting for the GPU.
///
/// ```no_run
/// # fn main() -> Result<(), mergepath::Error> {
/// let gpu = mergepath::Gpu::new(0)?;
/// let (a, b, c) = (gpu.upload(&[1u32, 4, 7])?, gpu.upload(&[2u32, 4])?, gpu.upload(&[4u32, 9])?);
/// let splits = mergepath::partition::multiway_partitions(&gpu, &[&a, &b, &c], 4, mergepath::Less)?;
/// assert_eq!(gpu.download(&splits)?, [0, 0, 0, 2, 2, 0, 3, 2, 2]);
/// # Ok(()) }
/// ```
pub fn multiway_partitions<K: Key, C: Comparator<K>, S: DevicePtr<K>>(gpu: &Gpu, inputs: &[&S], spacing: usize, comp: C) -> Result<CudaSlice<i64>> {
    let _ = comp;
    let total: usize = inputs.iter().map(|s| s.len()).sum();
    let count = checked_partition_count(total, spacing)?;
    let checked = inputs.iter().map(|s| gpu.input("inputs", *s, K::DEVICE_ALIGN)).collect::<Result<Vec<_>>>()?;
    let table = MultiwayTable::upload::<K>(gpu, &checked)?;
    if inputs.is_empty() {
        return gpu.upload(&[]);
    }
    let rows = count.checked_mul(inputs.len()).ok_or(Error::TooLarge { what: "multiway partitions" })?;
    let mut out = gpu.alloc_zeros::<i64>(rows)?;
    let out_ptr = gpu.output("splits", &mut out, 8, rows, &[])?.ptr;
    let Some(order) = &C::RECORD else {
        launch_multiway_partitions(gpu, &*gpu.kernels::<K, C>()?, &table, spacing, out_ptr, count)?;
        return Ok(out);
    };
    // As a record's merge path: the splits of its comparable keys.
    let sources: Vec<(u64, usize)> = checked.iter().map(|c| (c.ptr, c.len)).collect();
    with_comparable_keys::<K, _>(gpu, order, &sources, |keys, kernels| {
        let key_inputs: Vec<CheckedBuffer<'_>> = checked
            .iter()
            .scan(keys, |at, c| {
                let input = CheckedBuffer::raw(*at, c.len, 8);
                *at += (c.len * 8) as u64;
                Some(input)
            })
            .collect();
        let table = MultiwayTable::upload::<u64>(gpu, &key_inputs)?;
        launch_multiway_partitions(gpu, kernels, &table, spacing, out_ptr, count)
    })?;
    Ok(out)
}

/// [`partition_count`], with [`Error::InvalidArgument`] for a spacing of zero.
fn checked_partition_count(total: usize, spacing: usize) -> Result<usize> {
    if spacing == 0 {
        return Err(Error::invalid("spacing", "must be positive, got 0"));
    }
    Ok(partition_count(total, spacing))
}

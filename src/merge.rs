//! Stable merge of two sorted sequences: keys, or keys with values.
//!
//! Two phases (see [`crate::partition`]): the partition kernel finds where each output tile's
//! boundary meets the merge path; then each CTA loads its slices of A and B into shared memory,
//! each thread searches its own start and merges VT items in registers, and the tile is stored
//! with coalesced writes. Values are gathered through the merge's source indices.
//!
//! [`merge_keys_with`] also runs the co-rank "ladder" of Kirk & Hwu's merge chapter
//! ([`MergeStrategy`]), the designs the two-phase merge improves on, for comparison.

use crate::error::Result;
use crate::device::buffers::BufArg;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{value_word, Comparator, Key, Value};
use crate::partition::{launch_partitions, partition_count};
use crate::tuning::{ladder_shape, ladder_tile, merge_shape, LADDER_BLOCK_TILES};
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};

/// Merges `a` and `b`, both sorted by `comp`, into `out[..a.len() + b.len()]`.
///
/// Stable: of equal keys, those from `a` come first, each input's in its own order. `out` may
/// be longer than needed (the rest is left as it is) and must not overlap `a` or `b`. Any
/// lengths work, including 0 and more than 2^31 items. Returns without waiting for the GPU.
///
/// Unsorted inputs give unspecified output (keys from the inputs, possibly some repeated and
/// some missing), never an out-of-bounds access.
pub fn merge_keys<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    out: &mut impl DevicePtrMut<K>,
    comp: C,
) -> Result<()> {
    merge_keys_with(gpu, a, b, out, comp, MergeStrategy::TwoPhase)
}

/// How [`merge_keys_with`] merges: the two-phase register merge ([`merge_keys`]), or one of the
/// three kernels of Kirk & Hwu's merge chapter (Programming Massively Parallel Processors,
/// ch. 12), each a step up the ladder the book narrates. All give the same stable result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MergeStrategy {
    /// Merge Path partitions per tile, per-thread splits in shared memory, VT items merged in
    /// registers, coalesced stores (Baxter's Modern GPU). The default.
    #[default]
    TwoPhase,
    /// Every thread co-ranks its output range in global memory and merges it sequentially,
    /// reading and writing global memory directly (the book's merge_basic_kernel).
    Basic,
    /// One co-rank pair per CTA; tiles of A and B loaded into shared memory, each thread
    /// co-ranking and merging its share there, the unused rest of each tile loaded again
    /// (merge_tiled_kernel).
    Tiled,
    /// The tiled kernel with circular tiles: each iteration loads only what the previous one
    /// consumed (merge_circular_buffer_kernel, with the lecture's corrections).
    Circular,
}

impl MergeStrategy {
    /// All four, the default first.
    pub const ALL: [MergeStrategy; 4] = [Self::TwoPhase, Self::Basic, Self::Tiled, Self::Circular];
}

/// [`merge_keys`] with the kernel `strategy` chooses; the result is the same for every one.
pub fn merge_keys_with<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &impl DevicePtr<K>,
    b: &impl DevicePtr<K>,
    out: &mut impl DevicePtrMut<K>,
    comp: C,
    strategy: MergeStrategy,
) -> Result<()> {
    let align = std::mem::align_of::<K>();
    let a = gpu.input("a", a, align)?;
    let b = gpu.input("b", b, align)?;
    let out = gpu.output("out", out, align, a.len + b.len, &[&a, &b])?;
    let total = a.len + b.len;
    if strategy == MergeStrategy::TwoPhase || total == 0 {
        return launch_merge::<K, C>(gpu, &a, &b, &out, None, comp);
    }
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let shape = ladder_shape(kernels.arch, key_bytes);
    let (name, per_cta) = match strategy {
        MergeStrategy::Basic => ("mergepath_merge_basic", shape.tile()),
        MergeStrategy::Tiled => ("mergepath_merge_tiled", ladder_tile(kernels.arch, key_bytes) * LADDER_BLOCK_TILES),
        _ => ("mergepath_merge_circular", ladder_tile(kernels.arch, key_bytes) * LADDER_BLOCK_TILES),
    };
    let func = kernels.function(name)?;
    let ctas = grid_ctas(total.div_ceil(per_cta), "merge ladder grid")?;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let args = [KernelArg::Ptr(a.ptr), KernelArg::I64(a.len as i64), KernelArg::Ptr(b.ptr), KernelArg::I64(b.len as i64), KernelArg::Ptr(out.ptr)];
    // SAFETY: the arguments match `mergepath_merge_{basic,tiled,circular}`; each CTA covers
    // `per_cta` outputs (the kernels' compile-time shape from the same table row and tile
    // rule), the grid covers all of them, and `out` holds a.len + b.len keys.
    unsafe { gpu.launch(&func, cfg, &args) }
}

/// Merges key/value pairs: keys as [`merge_keys`], each value following its key.
///
/// Values are any [`Value`] (`Pod` of 4, 8 or 16 bytes). Each value buffer must have its keys'
/// length ([`Error::LengthMismatch`](crate::Error::LengthMismatch) otherwise); `out_values` must be at least as long as the
/// result. Returns without waiting for the GPU.
#[allow(clippy::too_many_arguments)]
pub fn merge_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    a_keys: &impl DevicePtr<K>,
    a_values: &impl DevicePtr<V>,
    b_keys: &impl DevicePtr<K>,
    b_values: &impl DevicePtr<V>,
    out_keys: &mut impl DevicePtrMut<K>,
    out_values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let align = std::mem::align_of::<K>();
    let [a, b, av, bv] = gpu.pair_inputs(a_keys, a_values, b_keys, b_values, word)?;
    let total = a.len + b.len;
    let ok = gpu.output("out_keys", out_keys, align, total, &[&a, &b, &av, &bv])?;
    let ov = gpu.output("out_values", out_values, word, total, &[&a, &b, &av, &bv, &ok])?;
    launch_merge::<K, C>(gpu, &a, &b, &ok, Some((&av, &bv, &ov, word)), comp)
}

/// Enqueues the partition and merge kernels on validated buffers.
pub(crate) fn launch_merge<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    a: &BufArg<'_>,
    b: &BufArg<'_>,
    out: &BufArg<'_>,
    values: Option<(&BufArg<'_>, &BufArg<'_>, &BufArg<'_>, usize)>,
    _comp: C,
) -> Result<()> {
    let total = a.len + b.len;
    if total == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let shape = merge_shape(kernels.arch, std::mem::size_of::<K>());
    let tile = shape.tile();
    let tiles = grid_ctas(total.div_ceil(tile), "merge grid")?;
    let parts = partition_count(total, tile);
    let mut temp = gpu.temp(parts * 8)?;
    let (parts_ptr, _parts_guard) = temp.device_ptr_mut();
    launch_partitions(gpu, &kernels, a, b, tile, parts_ptr, parts)?;

    let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let (a_n, b_n) = (KernelArg::I64(a.len as i64), KernelArg::I64(b.len as i64));
    match values {
        None => {
            let args = [KernelArg::Ptr(a.ptr), a_n, KernelArg::Ptr(b.ptr), b_n, KernelArg::Ptr(parts_ptr), KernelArg::Ptr(out.ptr)];
            let func = kernels.function("mergepath_merge_keys")?;
            // SAFETY: the arguments match `mergepath_merge_keys` (kernels/mergepath/instantiate.cuh);
            // the kernel's tile is `shape` (same table row on both sides), the grid covers
            // ceil(total / tile) tiles, partitions hold tiles + 1 entries, and `out` holds >= total.
            unsafe { gpu.launch(&func, cfg, &args) }
        }
        Some((av, bv, ov, word)) => {
            let args = [
                KernelArg::Ptr(a.ptr),
                KernelArg::Ptr(av.ptr),
                a_n,
                KernelArg::Ptr(b.ptr),
                KernelArg::Ptr(bv.ptr),
                b_n,
                KernelArg::Ptr(parts_ptr),
                KernelArg::Ptr(out.ptr),
                KernelArg::Ptr(ov.ptr),
            ];
            let func = kernels.for_values("mergepath_merge_pairs", word)?;
            // SAFETY: as above for `mergepath_merge_pairs_{4,8,16}`; value buffers have their
            // keys' lengths and are aligned to the word size the kernel moves them in.
            unsafe { gpu.launch(&func, cfg, &args) }
        }
    }
}

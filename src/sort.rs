//! Stable mergesort of keys, key/value pairs and indices.
//!
//! A sort is one blocksort pass, in which each CTA sorts a tile of `NT * VT` items on its own
//! (`cta_blocksort` in `kernels/mergepath/cta.cuh`), then `ceil(log2(tiles))` merge passes.
//! Pass `p` merges pairs of sorted runs of `run = tile * 2^p` items; each pair is a *frame* of
//! `2 * run` items ([`mergesort_frame`]). Every pass is the two-phase merge of
//! [`crate::partition`]: one Merge Path search per output tile inside its frame, then the merge
//! kernel. The passes ping-pong between the caller's buffer and one temporary buffer, arranged so
//! the last pass writes the caller's buffer.
//!
//! Peak device memory beyond the caller's buffers: one buffer of `n` keys (and `n` values for
//! pairs), plus 8 bytes per tile for the partitions of sorts of more than 1,024 tiles; none
//! when the input fits one tile. It comes from the [`Gpu`]'s temp pool, so repeated sorts of the
//! same size do not allocate.
//!
//! Comparators must be strict weak orders (the built-in ones are). Sorting is stable: equal
//! keys keep their input order.

use crate::error::{Error, Result};
use crate::gpu::{value_slot, BufArg, Gpu, KernelArg, Kernels};
use crate::key::{value_word, Comparator, Key, Value};
use crate::partition::{merge_path, partition_launch_config};
use crate::tuning::sort_shape;
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use std::ops::Range;

/// Sorts `keys` in place by `comp`, stably. Any length, including 0 and more than 2^31 items.
/// Returns without waiting for the GPU.
pub fn sort_keys<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, comp: C) -> Result<()> {
    let n = keys.len();
    let keys = gpu.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, None, n, comp)
}

/// Sorts `input` into `output[..input.len()]` by `comp`, stably, leaving `input` as it is.
/// `output` may be longer (the rest is left as it is) and must not overlap `input`.
pub fn sort_keys_copy<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    input: &impl DevicePtr<K>,
    output: &mut impl DevicePtrMut<K>,
    comp: C,
) -> Result<()> {
    let align = std::mem::align_of::<K>();
    let input = gpu.input("input", input, align)?;
    let output = gpu.output("output", output, align, input.len, &[&input])?;
    launch_sort::<K, C>(gpu, input.ptr, output.ptr, None, input.len, comp)
}

/// Sorts `keys` in place by `comp`, stably, moving `values` (same length, any [`Value`]) with
/// their keys. Returns without waiting for the GPU.
pub fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let n = keys.len();
    if values.len() != n {
        return Err(Error::LengthMismatch { what: "values", expected: n, got: values.len() });
    }
    let keys = gpu.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
    let values = gpu.output("values", values, word, n, &[&keys])?;
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, Some((values.ptr, values.ptr, word)), n, comp)
}

/// Sorts `keys_in`/`values_in` pairs into `keys_out`/`values_out` (at least as long) by `comp`,
/// stably, leaving the inputs as they are. Outputs must not overlap inputs or each other.
pub fn sort_pairs_copy<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: &impl DevicePtr<K>,
    values_in: &impl DevicePtr<V>,
    keys_out: &mut impl DevicePtrMut<K>,
    values_out: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let align = std::mem::align_of::<K>();
    let ki = gpu.input("keys_in", keys_in, align)?;
    let vi = gpu.input("values_in", values_in, word)?;
    if vi.len != ki.len {
        return Err(Error::LengthMismatch { what: "values_in", expected: ki.len, got: vi.len });
    }
    let ko = gpu.output("keys_out", keys_out, align, ki.len, &[&ki, &vi])?;
    let vo = gpu.output("values_out", values_out, word, ki.len, &[&ki, &vi, &ko])?;
    launch_sort::<K, C>(gpu, ki.ptr, ko.ptr, Some((vi.ptr, vo.ptr, word)), ki.len, comp)
}

/// Index types [`sort_indices`] can write: `u32` (up to 2^32 keys) and `u64`.
pub trait SortIndex: Value + private::Sealed {
    /// The largest key count whose positions this type holds.
    const MAX_COUNT: usize;
}
impl SortIndex for u32 {
    const MAX_COUNT: usize = u32::MAX as usize + 1;
}
impl SortIndex for u64 {
    const MAX_COUNT: usize = usize::MAX;
}
mod private {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// Sorts `keys` in place by `comp`, stably, and writes to `indices` (same length) the original
/// position of each sorted key, as Modern GPU's MergesortIndices: afterwards `keys[i]` was at
/// `indices[i]`. [`Error::TooLarge`] for `u32` indices past 2^32 keys.
pub fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    indices: &mut impl DevicePtrMut<I>,
    comp: C,
) -> Result<()> {
    let n = keys.len();
    if indices.len() != n {
        return Err(Error::LengthMismatch { what: "indices", expected: n, got: indices.len() });
    }
    if n > I::MAX_COUNT {
        return Err(Error::TooLarge { what: "u32 indices (more than 2^32 keys)" });
    }
    let word = std::mem::size_of::<I>();
    let keys = gpu.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
    let indices = gpu.output("indices", indices, word, n, &[&keys])?;
    if n > 0 {
        let kernels = gpu.kernels::<K, C>()?;
        launch_iota(gpu, &kernels, &indices, word)?;
    }
    launch_sort::<K, C>(gpu, keys.ptr, keys.ptr, Some((indices.ptr, indices.ptr, word)), n, comp)
}

/// Number of merge passes after the blocksort for `n` items in tiles of `tile`:
/// `ceil(log2(ceil(n / tile)))`.
pub fn mergesort_passes(n: usize, tile: usize) -> u32 {
    let tiles = n.div_ceil(tile);
    if tiles <= 1 { 0 } else { usize::BITS - (tiles - 1).leading_zeros() }
}

/// The pair of sorted runs that output position `diag` of a merge pass over `n` items with runs
/// of `run` items belongs to: A is `begin .. begin + a_count`, B the `b_count` items after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergesortFrame {
    /// First item of the frame (of its A run).
    pub begin: usize,
    /// Items in the A run.
    pub a_count: usize,
    /// Items in the B run.
    pub b_count: usize,
}

/// The frame of `diag` (the device's `find_mergesort_frame`).
pub fn mergesort_frame(n: usize, run: usize, diag: usize) -> MergesortFrame {
    let begin = diag / (2 * run) * (2 * run);
    let a_count = (n - begin).min(run);
    let b_count = (n - begin - a_count).min(run);
    MergesortFrame { begin, a_count, b_count }
}

/// The input ranges (A run slice, B run slice) each output tile of a merge pass merges, as the
/// device computes them (`mergesort_partition` and `mergesort_range`). `keys`
/// holds sorted runs of `run` items; `run` must be a multiple of `tile`.
pub fn mergesort_tile_ranges<T>(keys: &[T], run: usize, tile: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<(Range<usize>, Range<usize>)> {
    assert!(tile > 0 && run % tile == 0, "runs must be whole tiles");
    let n = keys.len();
    let partition = |diag: usize| {
        let f = mergesort_frame(n, run, diag);
        let a = &keys[f.begin..f.begin + f.a_count];
        let b = &keys[f.begin + f.a_count..f.begin + f.a_count + f.b_count];
        merge_path(a, b, diag - f.begin, &is_less)
    };
    (0..n.div_ceil(tile))
        .map(|t| {
            let (d0, d1) = (t * tile, ((t + 1) * tile).min(n));
            let f = mergesort_frame(n, run, d0);
            let end_local = d1 - f.begin;
            let a0 = partition(d0);
            let a1 = if end_local == f.a_count + f.b_count { f.a_count } else { partition(d1) };
            let b_base = f.begin + f.a_count;
            (f.begin + a0..f.begin + a1, b_base + (d0 - f.begin - a0)..b_base + (end_local - a1))
        })
        .collect()
}

/// Merge passes of at most this many tiles search their partitions inside the merge kernel
/// (one launch per pass instead of two); larger ones use the partition kernel. About one wave
/// of CTAs on an H100: measured faster in-kernel at 356 tiles (2^20 u32 keys) and much slower
/// at 5,699 (2^24), where every wave of CTAs would wait on its own searches (BENCHMARKS.md).
const SEARCH_IN_MERGE_MAX_TILES: usize = 1024;

/// Enqueues a whole sort: `keys_in` (which may be `keys_out`) sorted into `keys_out`, values
/// (input, output, word size) following.
fn launch_sort<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    _comp: C,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let shape = sort_shape(kernels.arch, key_bytes);
    let tile = shape.tile();
    let tiles = u32::try_from(n.div_ceil(tile)).ok().filter(|&t| t <= i32::MAX as u32).ok_or(Error::TooLarge { what: "sort grid" })?;
    let passes = mergesort_passes(n, tile);
    let count = KernelArg::I64(i64::try_from(n).map_err(|_| Error::TooLarge { what: "sort length" })?);

    // Partitions come from the partition kernel, or (passes of few tiles) are searched inside
    // the merge kernel, which is then given a null partition array.
    let parts = tiles as usize + 1;
    let search_in_merge = tiles as usize <= SEARCH_IN_MERGE_MAX_TILES;

    // Temp layout: keys, then values, then partitions, each 256-byte aligned; none without passes.
    let round = |b: usize| b.div_ceil(256) * 256;
    let value_bytes = values.map_or(0, |(_, _, w)| w);
    let tmp_keys_bytes = round(n * key_bytes);
    let tmp_values_bytes = round(n * value_bytes);
    let parts_bytes = if search_in_merge { 0 } else { parts * 8 };
    let mut temp = if passes == 0 { None } else { Some(gpu.temp(tmp_keys_bytes + tmp_values_bytes + parts_bytes)?) };
    let temp_ptr = temp.as_mut().map(|t| t.device_ptr_mut());
    let base = temp_ptr.as_ref().map_or(0, |(p, _)| *p);
    let (tmp_keys, tmp_values, parts_ptr) = (base, base + tmp_keys_bytes as u64, base + (tmp_keys_bytes + tmp_values_bytes) as u64);

    // Stage j (0: after the blocksort) lives in the output when passes - j is even, so the last
    // pass writes the output.
    let stage = |j: u32| {
        let in_output = (passes - j) % 2 == 0;
        let keys = if in_output { keys_out } else { tmp_keys };
        let vals = values.map(|(_, out, _)| if in_output { out } else { tmp_values });
        (keys, vals)
    };
    let sort_cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };

    let (k0, v0) = stage(0);
    match values {
        None => {
            let args = [KernelArg::Ptr(keys_in), count, KernelArg::Ptr(k0)];
            // SAFETY: matches `mergepath_blocksort_keys`; the kernel's tile is `shape` (same
            // table row), the grid covers ceil(n / tile) tiles, and keys_in and stage 0 hold n
            // keys (stage 0 may be keys_in itself: each CTA reads its tile before writing it).
            unsafe { gpu.launch(&kernels.blocksort_keys, sort_cfg, &args) }?;
        }
        Some((vals_in, _, word)) => {
            let args = [KernelArg::Ptr(keys_in), KernelArg::Ptr(vals_in), count, KernelArg::Ptr(k0), KernelArg::Ptr(v0.unwrap())];
            // SAFETY: as above for `mergepath_blocksort_pairs_{4,8,16}`, with n values of `word`
            // bytes in, and in stage 0.
            unsafe { gpu.launch(&kernels.blocksort_pairs[value_slot(word)], sort_cfg, &args) }?;
        }
    }

    let part_cfg = partition_launch_config(parts)?;
    let parts_arg = if search_in_merge { 0 } else { parts_ptr };
    for pass in 0..passes {
        let run = KernelArg::I64((tile as i64) << pass);
        let ((src_k, src_v), (dst_k, dst_v)) = (stage(pass), stage(pass + 1));
        if !search_in_merge {
            let args = [KernelArg::Ptr(src_k), count, KernelArg::I64(tile as i64), run, KernelArg::I64(parts as i64), KernelArg::Ptr(parts_ptr)];
            // SAFETY: matches `mergepath_sort_partitions`; src holds n keys, the partition
            // buffer `parts` i64, the grid covers `parts` threads; run = tile * 2^pass is a
            // multiple of the spacing `tile`.
            unsafe { gpu.launch(&kernels.sort_partitions, part_cfg, &args) }?;
        }
        match values {
            None => {
                let args = [KernelArg::Ptr(src_k), count, run, KernelArg::Ptr(parts_arg), KernelArg::Ptr(dst_k)];
                // SAFETY: matches `mergepath_sort_merge_keys`; src and dst are distinct n-key
                // buffers (one is the temp); partitions are null or cover tiles + 1 entries.
                unsafe { gpu.launch(&kernels.sort_merge_keys, sort_cfg, &args) }?;
            }
            Some((_, _, word)) => {
                let args = [
                    KernelArg::Ptr(src_k),
                    KernelArg::Ptr(src_v.unwrap()),
                    count,
                    run,
                    KernelArg::Ptr(parts_arg),
                    KernelArg::Ptr(dst_k),
                    KernelArg::Ptr(dst_v.unwrap()),
                ];
                // SAFETY: as above for `mergepath_sort_merge_pairs_{4,8,16}` with n values.
                unsafe { gpu.launch(&kernels.sort_merge_pairs[value_slot(word)], sort_cfg, &args) }?;
            }
        }
    }
    Ok(())
}

/// Writes 0, 1, ..., len - 1 into `out` (words of 4 or 8 bytes).
fn launch_iota(gpu: &Gpu, kernels: &Kernels, out: &BufArg<'_>, word: usize) -> Result<()> {
    let ctas = out.len.div_ceil(256).min(65_535) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let args = [KernelArg::Ptr(out.ptr), KernelArg::I64(out.len as i64)];
    let func = if word == 4 { &kernels.iota[0] } else { &kernels.iota[1] };
    // SAFETY: matches `mergepath_iota_{4,8}`; `out` holds len words of `word` bytes, and the
    // kernel's grid-stride loop stays below len.
    unsafe { gpu.launch(func, cfg, &args) }
}

//! The two-phase scheduling layer, host side: coarse Merge Path partitions over global memory.
//!
//! Phase one splits the merged output into tiles of `spacing` items and finds, for each tile
//! boundary (cross-diagonal), where the merge path crosses it ([`merge_path_partitions`]). Phase
//! two is a kernel in which each CTA loads its tile's slices of A and B into shared memory,
//! splits the tile again per thread (`cta_merge_from_shared` in `kernels/mergepath/cta/tile.cuh`) and
//! runs the serial loop. A user's own two-phase kernel takes the partition array from here and
//! the device headers from `kernels/mergepath/`.
//!
//! The CPU functions here mirror the device searches exactly; the tests check the device
//! results and the tiling math against them.

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{Comparator, Key};
use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};

/// Threads per CTA of the partition kernel (`mergepath::PARTITION_THREADS`), one thread per
/// partition.
const PARTITION_THREADS: u32 = 128;

/// How many partitions split `total` merged items every `spacing`: one per tile boundary,
/// `ceil(total / spacing) + 1` (the last is the end of both inputs).
pub fn partition_count(total: usize, spacing: usize) -> usize {
    total.div_ceil(spacing) + 1
}

/// Where the merge path of `a` and `b` crosses cross-diagonal `diag` (0 <= diag <= a.len() +
/// b.len()): the number of the first `diag` merged items that come from `a`. Ties go to `a`,
/// as in the stable merge. `is_less(x, y)` answers "x goes strictly before y".
pub fn merge_path<T>(a: &[T], b: &[T], diag: usize, is_less: impl Fn(&T, &T) -> bool) -> usize {
    assert!(diag <= a.len() + b.len(), "diagonal past the end of the merge");
    let (mut begin, mut end) = (diag.saturating_sub(b.len()), diag.min(a.len()));
    while begin < end {
        let mid = begin + (end - begin) / 2;
        // a[mid] goes first unless b[diag - 1 - mid] is strictly smaller.
        if !is_less(&b[diag - 1 - mid], &a[mid]) {
            begin = mid + 1;
        } else {
            end = mid;
        }
    }
    begin
}

/// Where the Balanced Path of `a` and `b` crosses cross-diagonal `diag` (`balanced_path` in
/// `kernels/mergepath/thread/search.cuh`, mirrored exactly): `(a_split, b_split)` with
/// `a_split + b_split` equal to `diag`, or `diag + 1` where `diag` would separate a pair. The
/// k-th key equal to x in `a` and the k-th equal to x in `b` are a pair, adjacent in the
/// balanced merge (a's first); at a split, every key before it on one side has its partner
/// (if any) before it on the other. The partitions of [`crate::sets`].
pub fn balanced_path<T>(a: &[T], b: &[T], diag: usize, is_less: impl Fn(&T, &T) -> bool) -> (usize, usize) {
    let ai = merge_path(a, b, diag, &is_less);
    let bi = diag - ai;
    let Some(x) = b.get(bi) else { return (ai, bi) };
    // The merge path took keys equal to x only if the last taken one of a or b equals x.
    let a_tail = ai > 0 && !is_less(&a[ai - 1], x);
    let b_tail = bi > 0 && !is_less(&b[bi - 1], x);
    if !a_tail && !b_tail {
        return (ai, bi);
    }
    let a_start = a[..ai].partition_point(|k| is_less(k, x));
    let b_start = b[..bi].partition_point(|k| is_less(k, x));
    let (a_run, b_run) = (ai - a_start, bi - b_start);
    let t = a_run + b_run;
    // a's keys equal to x (only "at least t" matters when b has taken none), b's capped at t.
    let i = if b_run > 0 { a_run } else { t };
    let j = b_run + b[bi..(b_start + t).min(b.len())].partition_point(|k| !is_less(x, k));
    let half = t.div_ceil(2);
    // Clamped as the kernels clamp it: inside the inputs even where unsorted ones make the run
    // counts meaningless.
    ((a_start + t.saturating_sub(j).max(i.min(half))).min(a.len()), (b_start + t.saturating_sub(i).max(j.min(half))).min(b.len()))
}

/// Kirk & Hwu's co-rank (`co_rank` in `kernels/mergepath/thread/search.cuh`, mirrored exactly): the
/// same answer as [`merge_path`]`(a, b, k)` by the book's halving-step search, which the merge
/// ladder ([`crate::MergeStrategy`]) uses.
pub fn co_rank<T>(k: usize, a: &[T], b: &[T], is_less: impl Fn(&T, &T) -> bool) -> usize {
    assert!(k <= a.len() + b.len(), "output rank past the end of the merge");
    let (m, n) = (a.len(), b.len());
    let mut i = k.min(m);
    let mut j = k - i;
    let mut i_low = k.saturating_sub(n);
    let mut j_low = k.saturating_sub(m);
    loop {
        if i > 0 && j < n && is_less(&b[j], &a[i - 1]) {
            let delta = (i - i_low).div_ceil(2);
            j_low = j;
            j += delta;
            i -= delta;
        } else if j > 0 && i < m && !is_less(&b[j - 1], &a[i]) {
            let delta = (j - j_low).div_ceil(2);
            i_low = i;
            i += delta;
            j -= delta;
        } else {
            return i;
        }
    }
}

/// The partitions [`merge_path_partitions`] computes, on the CPU.
pub fn merge_path_partitions_cpu<T>(a: &[T], b: &[T], spacing: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<usize> {
    assert!(spacing > 0, "spacing must be positive");
    let total = a.len() + b.len();
    (0..partition_count(total, spacing))
        .map(|p| merge_path(a, b, p.saturating_mul(spacing).min(total), &is_less))
        .collect()
}

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

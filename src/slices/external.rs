//! Host-slice sorts larger than the device (or its [`Gpu::with_memory_limit`] cap): sorted runs
//! written to host memory, then merged in one streamed pass.
//!
//! 1. **Runs**: the input is cut into equal runs as large as an in-core sort fits in the
//!    device budget ([`ExternalPlan`]); each is sorted on the GPU by the in-core pipeline
//!    ([`sort_in_core`]) from the caller's slices into host buffers of the sort's own, so the
//!    caller's data stays as it is until the merge.
//! 2. **Merge**: the runs merged into the caller's slices by the host-slice multiway merge
//!    ([`merge_runs`]: batch by batch, up to three batches in flight so uploads, merges and
//!    downloads overlap).
//!
//! Errors: a run buffer that cannot be allocated is [`Error::HostOutOfMemory`] and a budget
//! too small for a run [`Error::TooLargeForDevice`], before anything is copied. An error during
//! the runs leaves the caller's slices as they were; one during the merge, which writes them,
//! copies the sorted runs back into them before returning, so they hold the same items (in the
//! runs' order) and never a mix of batches and stale data.

use super::multiway::{batch_merge_temp, merge_runs, HostRuns};
use super::plan::{in_core_bytes_now, ExternalPlan};
use crate::tuning::{BATCH_BYTES, MERGE_SLOTS};
use super::positions::try_with_capacity;
use super::progress::Progress;
use super::sort::{sort_in_core, Carried, HostItems};
use crate::device::timeline;
use crate::device::transfer::work_bytes;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::threads::{run, span_bounds, threads};
use crate::key::{Comparator, Key};
use std::mem::MaybeUninit;

/// The plan of an external sort of `n` keys of `key_bytes` (values of `word` bytes) on a
/// device of `arch` in `budget` bytes of device memory, or [`Error::TooLargeForDevice`].
pub(super) fn external_plan(arch: u32, n: usize, key_bytes: usize, word: usize, budget: usize) -> Result<ExternalPlan> {
    let in_core = |items: usize| in_core_bytes_now(items, key_bytes, word);
    let merge_temp = |items: usize, ways: usize| batch_merge_temp(arch, key_bytes, word, items, ways);
    ExternalPlan::new(n, key_bytes, word, budget, work_bytes(BATCH_BYTES), MERGE_SLOTS, in_core, merge_temp).map_err(|needed| Error::TooLargeForDevice { needed, available: budget })
}

/// A host buffer of `len` items for the sorted runs, not initialised (the runs write every
/// byte), or [`Error::HostOutOfMemory`]; backed by transparent huge pages on Linux, and not yet
/// faulted in ([`fault_in`]). Left to the copies out of the staging buffers, the page faults
/// cost more than the copies: on the 16-core GPU host a 48 GiB sort spent 16.8 s copying out
/// (3 GB/s into fresh memory, 35 GB/s into resident memory), and faulting in 16 GiB ran at
/// 21 GB/s on 16 threads with 4 KiB pages, 47 GB/s with huge pages.
fn run_buffer<T>(len: usize) -> Result<Vec<MaybeUninit<T>>> {
    let mut v: Vec<MaybeUninit<T>> = try_with_capacity(len)?;
    // SAFETY: the capacity holds `len` items, and `MaybeUninit` needs no initialisation.
    unsafe { v.set_len(len) };
    let bytes = as_uninit_bytes(&mut v);
    advise_huge_pages(bytes.as_mut_ptr().cast(), bytes.len());
    Ok(v)
}

/// Writes a byte of every 4 KiB page of `bytes`, on `threads` host threads, so the pages are
/// resident before the copies into them.
fn fault_in(bytes: &mut [MaybeUninit<u8>], threads: usize) {
    const PAGE: usize = 4096;
    let spans = bytes.len().div_ceil(64 << 20);
    let bounds = span_bounds(bytes.len(), spans.max(1));
    let mut pieces = Vec::with_capacity(spans);
    let mut rest = bytes;
    for w in bounds.windows(2) {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        pieces.push(piece);
        rest = tail;
    }
    run(threads, pieces, |piece| piece.iter_mut().step_by(PAGE).for_each(|b| *b = MaybeUninit::new(0)));
}

/// Asks the kernel to back the whole 2 MiB pages inside `bytes` at `ptr` with huge pages
/// (advice only: nothing changes where it does not apply).
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
        let end = (ptr as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            // SAFETY: the range lies inside one allocation of ours; MADV_HUGEPAGE changes how
            // its pages are backed, never their contents. Its result is advice, ignored.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// The external sort of `keys` (and `carried`) in `budget` bytes of device memory.
pub(super) fn sort_external<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut [K],
    mut carried: Carried<'_>,
    comp: C,
    budget: usize,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<()> {
    let n = keys.len();
    let kernels = gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), carried.word());
    let plan = external_plan(kernels.arch, n, kb, word, budget)?;
    let (mut run_keys, mut run_values) = timeline::host_span("run buffers", || Ok::<_, Error>((run_buffer::<K>(n)?, run_buffer::<u8>(n * word)?)))?;
    let values_in = matches!(carried, Carried::Values(..));
    // Each item moves up and down twice; values are not uploaded for the runs of an index sort.
    let total = n * (3 * (kb + word) + if values_in { kb + word } else { kb });
    let mut progress = Progress::new(progress, total);

    // The runs, from the caller's slices into the run buffers.
    let values_from: Option<&[u8]> = match &carried {
        Carried::Values(v, _) => Some(v),
        _ => None,
    };
    let runs = RunInputs { plan: &plan, keys: bytemuck::cast_slice(keys), values: values_from, word };
    let result = sort_runs::<K, C>(gpu, &runs, (as_uninit_bytes(&mut run_keys), &mut run_values), comp, &mut progress);
    if let Err(e) = result {
        return progress.finish(Err(e));
    }
    // SAFETY: the runs wrote every item of both buffers (each run's sort finished without
    // error, its pipeline waited for every copy), so they are initialised `K`s and bytes.
    let (sorted_keys, sorted_values): (&[K], &[u8]) = unsafe { (assume_init(&run_keys), assume_init(&run_values)) };

    // The merge, into the caller's slices; on error, the runs go back into them.
    let out_values: Option<&mut [u8]> = match &mut carried {
        Carried::None => None,
        Carried::Values(v, _) | Carried::Indices(v, _) => Some(v),
    };
    let ranges: Vec<_> = (0..plan.runs).map(|r| plan.run_range(r)).collect();
    let runs = HostRuns {
        keys: ranges.iter().map(|r| &sorted_keys[r.clone()]).collect(),
        values: ranges.iter().map(|r| &sorted_values[r.start * word..r.end * word]).collect(),
        word,
    };
    let result = merge_runs::<K, C>(gpu, plan.merge, &runs, keys, out_values, comp, &mut progress);
    if result.is_err() {
        timeline::host_span("restore", || {
            keys.copy_from_slice(sorted_keys);
            if let Carried::Values(v, _) | Carried::Indices(v, _) = &mut carried {
                v.copy_from_slice(sorted_values);
            }
        });
    }
    progress.finish(result)
}

/// The caller's items an external sort cuts into runs.
struct RunInputs<'a> {
    plan: &'a ExternalPlan,
    keys: &'a [u8],
    values: Option<&'a [u8]>,
    word: usize,
}

/// Sorts every run of `inputs` into its place in `out` (keys, values), faulting the buffers'
/// pages in as it goes: the first run's before it starts, on all host threads; the later
/// runs' on half of them while the first run sorts (its copies take the other half).
fn sort_runs<K: Key, C: Comparator<K>>(gpu: &Gpu, inputs: &RunInputs<'_>, out: (&mut [MaybeUninit<u8>], &mut [MaybeUninit<u8>]), comp: C, progress: &mut Progress<'_>) -> Result<()> {
    let (kb, word, plan) = (std::mem::size_of::<K>(), inputs.word, inputs.plan);
    let first = plan.run_range(0).len();
    let (k_first, k_later) = out.0.split_at_mut(first * kb);
    let (v_first, v_later) = out.1.split_at_mut(first * word);
    timeline::host_span("run buffers", || {
        fault_in(k_first, threads());
        fault_in(v_first, threads());
    });
    std::thread::scope(|scope| {
        let started = timeline::host_span_start();
        let later = scope.spawn(move || {
            fault_in(k_later, threads().div_ceil(2));
            fault_in(v_later, threads().div_ceil(2));
            (k_later, v_later, std::time::Instant::now())
        });
        let first_run = sort_run::<K, C>(gpu, inputs, 0, (k_first, v_first), comp, progress);
        let (mut k_rest, mut v_rest, faulted) = later.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        timeline::host_span_between("host helpers", "run buffers", started, faulted);
        first_run?;
        for r in 1..plan.runs {
            let len = plan.run_range(r).len();
            let (k_out, k_tail) = std::mem::take(&mut k_rest).split_at_mut(len * kb);
            let (v_out, v_tail) = std::mem::take(&mut v_rest).split_at_mut(len * word);
            (k_rest, v_rest) = (k_tail, v_tail);
            sort_run::<K, C>(gpu, inputs, r, (k_out, v_out), comp, progress)?;
        }
        Ok(())
    })
}

/// Sorts run `r` of `inputs` into `out` (its keys' and values' bytes).
fn sort_run<K: Key, C: Comparator<K>>(gpu: &Gpu, inputs: &RunInputs<'_>, r: usize, out: (&mut [MaybeUninit<u8>], &mut [MaybeUninit<u8>]), comp: C, progress: &mut Progress<'_>) -> Result<()> {
    let (kb, word, range) = (std::mem::size_of::<K>(), inputs.word, inputs.plan.run_range(r));
    let items = HostItems::copied(
        &inputs.keys[range.start * kb..range.end * kb],
        out.0,
        kb,
        inputs.values.map(|v| &v[range.start * word..range.end * word]),
        (word > 0).then_some((out.1, word)),
        range.start,
    );
    sort_in_core::<K, C>(gpu, items, comp, progress)
}

/// The bytes of a buffer of not yet initialised items.
fn as_uninit_bytes<T>(v: &mut [MaybeUninit<T>]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: the same memory as bytes that may be uninitialised, which any bit pattern of a
    // `MaybeUninit<T>` is; `u8` has alignment 1.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// The items of a buffer that is initialised.
///
/// # Safety
/// Every item of `v` has been written.
unsafe fn assume_init<T>(v: &[MaybeUninit<T>]) -> &[T] {
    // SAFETY: by the caller's contract the items are initialised; `MaybeUninit<T>` has `T`'s
    // layout.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len()) }
}

//! Host-slice sorts larger than the device (or its [`Gpu::with_memory_limit`] cap): sorted runs
//! written to host memory, then merged in one streamed pass.
//!
//! 1. **Runs**: the input is cut into equal runs as large as an in-core sort fits in the
//!    device budget ([`ExternalPlan`]); each is sorted on the GPU by the in-core pipeline
//!    ([`sort_in_core`]) from the caller's slices into host buffers of the sort's own, so the
//!    caller's data stays as it is until the merge.
//! 2. **Merge**: the output is cut into batches; the k-way split of the runs at every batch
//!    boundary is computed on the host ([`multiway_split`], host threads), each batch's slice
//!    of every run is uploaded, merged on the GPU by the multiway merge, and downloaded into
//!    the caller's slices, up to three batches in flight so uploads, merges and downloads
//!    overlap.
//!
//! Errors: a run buffer that cannot be allocated is [`Error::HostOutOfMemory`] and a budget
//! too small for a run [`Error::TooLargeForDevice`], before anything is copied. An error during
//! the runs leaves the caller's slices as they were; one during the merge, which writes them,
//! copies the sorted runs back into them before returning, so they hold the same items (in the
//! runs' order) and never a mix of batches and stale data.

use crate::partition::clamp_multiway_splits;
use super::plan::{bytes_mut, in_core_bytes_now, ExternalPlan, Lanes};
use crate::tuning::{BATCH_BYTES, MERGE_SLOTS};
use super::positions::try_with_capacity;
use super::progress::Progress;
use super::sort::{sort_in_core, Carried, HostItems};
use crate::device::buffers::CheckedBuffer;
use crate::device::timeline;
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::threads::{run, span_bounds, threads};
use crate::key::{Comparator, Key};
use crate::multiway::{launch_multiway, multiway_temp_bytes};
use crate::partition::multiway_split;
use cudarc::driver::CudaEvent;
use std::mem::MaybeUninit;

/// The plan of an external sort of `n` keys of `key_bytes` (values of `word` bytes) on a
/// device of `arch` in `budget` bytes of device memory, or [`Error::TooLargeForDevice`].
pub(super) fn external_plan(arch: u32, n: usize, key_bytes: usize, word: usize, budget: usize) -> Result<ExternalPlan> {
    let in_core = |items: usize| in_core_bytes_now(items, key_bytes, word);
    let merge_temp = |items: usize, ways: usize| multiway_temp_bytes(arch, key_bytes, word > 0, items, ways);
    ExternalPlan::new(n, key_bytes, word, budget, work_bytes(BATCH_BYTES), MERGE_SLOTS, in_core, merge_temp).map_err(|needed| Error::TooLargeForDevice { needed, available: budget })
}

/// A host buffer of `len` items for the sorted runs, not initialised (the runs write every
/// byte), or [`Error::HostOutOfMemory`]; its pages faulted in at once on all host threads, as
/// transparent huge pages on Linux. Left to the copies out of the staging buffers, the page
/// faults cost more than the copies: on the 16-core GPU host a 48 GiB sort spent 16.8 s
/// copying out (3 GB/s into fresh memory, 35 GB/s into resident memory), and faulting in
/// 16 GiB ran at 21 GB/s on 16 threads with 4 KiB pages, 47 GB/s with huge pages.
fn run_buffer<T>(len: usize) -> Result<Vec<MaybeUninit<T>>> {
    let mut v: Vec<MaybeUninit<T>> = try_with_capacity(len)?;
    // SAFETY: the capacity holds `len` items, and `MaybeUninit` needs no initialisation.
    unsafe { v.set_len(len) };
    let bytes = as_uninit_bytes(&mut v);
    advise_huge_pages(bytes.as_mut_ptr().cast(), bytes.len());
    fault_in(bytes);
    Ok(v)
}

/// Writes a byte of every 4 KiB page of `bytes`, on all host threads, so the pages are
/// resident before the copies into them.
fn fault_in(bytes: &mut [MaybeUninit<u8>]) {
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
    run(threads(), pieces, |piece| piece.iter_mut().step_by(PAGE).for_each(|b| *b = MaybeUninit::new(0)));
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
    let result = (|| {
        let key_bytes: &[u8] = bytemuck::cast_slice(keys);
        let values: Option<&[u8]> = match &carried {
            Carried::Values(v, _) => Some(v),
            _ => None,
        };
        let (mut run_key_bytes, mut run_value_bytes) = (as_uninit_bytes(&mut run_keys), &mut run_values[..]);
        for r in 0..plan.runs {
            let range = plan.run_range(r);
            let (k_out, rest) = std::mem::take(&mut run_key_bytes).split_at_mut(range.len() * kb);
            let (v_out, v_rest) = std::mem::take(&mut run_value_bytes).split_at_mut(range.len() * word);
            (run_key_bytes, run_value_bytes) = (rest, v_rest);
            let items = HostItems::copied(
                &key_bytes[range.start * kb..range.end * kb],
                k_out,
                kb,
                values.map(|v| &v[range.start * word..range.end * word]),
                (word > 0).then_some((v_out, word)),
                range.start,
            );
            sort_in_core::<K, C>(gpu, items, comp, &mut progress)?;
        }
        Ok(())
    })();
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
    let result = merge_runs::<K, C>(gpu, &plan, sorted_keys, sorted_values, word, keys, out_values, comp, &mut progress);
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

/// Merges the sorted runs of `plan` (`keys` and `values` of `word` bytes, in host memory) into
/// `out_keys` and `out_values`, batch by batch.
#[allow(clippy::too_many_arguments)]
fn merge_runs<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    plan: &ExternalPlan,
    keys: &[K],
    values: &[u8],
    word: usize,
    out_keys: &mut [K],
    mut out_values: Option<&mut [u8]>,
    comp: C,
    progress: &mut Progress<'_>,
) -> Result<()> {
    let kernels = gpu.kernels::<K, C>()?;
    let kb = std::mem::size_of::<K>();
    let runs: Vec<&[K]> = (0..plan.runs).map(|r| &keys[plan.run_range(r)]).collect();
    let batches = plan.batches();
    let (ranks, rows) = batch_splits(plan, &runs, comp);

    let lane_bytes = Lanes::bytes(plan.batch, kb, word);
    let slots = plan.slots;
    // The plan fitted the slots to the budget: no second query of free memory.
    let mut temp = gpu.temp(2 * slots * lane_bytes)?;
    let (base, _guard) = temp.device_ptr_mut();
    let slot = |s: usize, part: usize| Lanes::at(base + ((2 * s + part) * lane_bytes) as u64, plan.batch, kb, word);
    let out_key_bytes = bytes_mut(out_keys);

    let mut pipe = Pipeline::new(gpu)?;
    // The slots may be new, or still used by earlier work.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    let mut merged: Vec<Option<CudaEvent>> = (0..slots).map(|_| None).collect();
    let mut downloaded: Vec<Option<CudaEvent>> = (0..slots).map(|_| None).collect();
    for b in 0..batches {
        let s = b % slots;
        let (input, output) = (slot(s, 0), slot(s, 1));
        if let Some(done) = &merged[s] {
            pipe.wait(Stream::Upload, done)?;
        }
        // SAFETY: the slot's previous merge has read its input lanes (the wait above); the runs
        // stay borrowed until the pipeline finishes.
        let (pieces, piece_values) = unsafe { upload_batch(&mut pipe, &input, plan, &runs, values, word, (&rows[b], &rows[b + 1])) }?;
        let out_range = ranks[b]..ranks[b + 1];
        progress.advance(out_range.len() * (kb + word));
        pipe.order(Stream::Upload, Stream::Kernels)?;
        if let Some(done) = &downloaded[s] {
            pipe.wait(Stream::Kernels, done)?;
        }
        let values_arg: Option<(&[CheckedBuffer<'_>], usize)> = (word > 0).then_some((&piece_values[..], word));
        pipe.span(Stream::Kernels, "merge batch", || launch_multiway::<K>(gpu, &kernels, &pieces, values_arg, output.keys, (word > 0).then_some(output.values)))?;
        let done = pipe.record(Stream::Kernels)?;
        pipe.wait(Stream::Download, &done)?;
        merged[s] = Some(done);
        // SAFETY: the batch's output items written from the slot's output lanes into the
        // caller's slices, which stay borrowed until the pipeline finishes.
        unsafe {
            pipe.download_slice(&mut out_key_bytes[out_range.start * kb..out_range.end * kb], output.keys)?;
            if let Some(v) = out_values.as_deref_mut() {
                pipe.download_slice(&mut v[out_range.start * word..out_range.end * word], output.values)?;
            }
        }
        downloaded[s] = Some(pipe.record(Stream::Download)?);
        progress.advance(out_range.len() * (kb + word));
    }
    pipe.finish()
}

/// The output rank of every batch boundary (`batches + 1` of them) and the runs' split there,
/// found on the host threads (binary searches over the runs) and clamped so each batch takes
/// exactly its length.
fn batch_splits<K: Key, C: Comparator<K>>(plan: &ExternalPlan, runs: &[&[K]], comp: C) -> (Vec<usize>, Vec<Vec<usize>>) {
    let lengths: Vec<usize> = runs.iter().map(|r| r.len()).collect();
    let ranks: Vec<usize> = (0..=plan.batches()).map(|b| (b * plan.batch).min(plan.n)).collect();
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); ranks.len()];
    timeline::host_span("multiway splits", || {
        let tasks: Vec<(usize, &mut Vec<usize>)> = ranks.iter().copied().zip(rows.iter_mut()).collect();
        run(threads(), tasks, |(rank, row)| *row = multiway_split(runs, rank, |x, y| comp.is_less(x, y)));
        clamp_multiway_splits(&mut rows, &ranks, &lengths);
    });
    (ranks, rows)
}

/// Enqueues the upload of each run's slice of a batch (between the splits `rows`), one after
/// another in the `input` lanes; returns the slices' key and value buffers there.
///
/// # Safety
/// No other work reads or writes the `input` lanes until the pipeline finishes, and the runs
/// and `values` stay as they are until then.
#[allow(clippy::type_complexity)]
unsafe fn upload_batch<'a, K: Key>(
    pipe: &mut Pipeline<'_>,
    input: &'a Lanes,
    plan: &ExternalPlan,
    runs: &[&[K]],
    values: &[u8],
    word: usize,
    rows: (&[usize], &[usize]),
) -> Result<(Vec<CheckedBuffer<'a>>, Vec<CheckedBuffer<'a>>)> {
    let mut pieces = Vec::with_capacity(runs.len());
    let mut piece_values = Vec::with_capacity(runs.len());
    let mut at = 0;
    for (r, run) in runs.iter().enumerate() {
        let (from, to) = (rows.0[r], rows.1[r]);
        let start = plan.run_range(r).start;
        // SAFETY: the run's items `from..to` (inside the run: clamped splits) copied into the
        // lanes at `at` (the batch's pieces add up to its length, at most the lanes' `batch`
        // items); the runs stay as they are, and the lanes unused by other work, until the
        // pipeline finishes (this function's contract).
        unsafe {
            pipe.upload_slice(input.keys(at..at + to - from).ptr, &run[from..to])?;
            if word > 0 {
                pipe.upload_slice(input.values(at..at + to - from).ptr, &values[(start + from) * word..(start + to) * word])?;
            }
        }
        pieces.push(input.keys(at..at + to - from));
        piece_values.push(input.values(at..at + to - from));
        at += to - from;
    }
    Ok((pieces, piece_values))
}

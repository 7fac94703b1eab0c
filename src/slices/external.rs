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
use super::plan::{bytes_mut, in_core_bytes_now, ExternalPlan, Lanes, Slots};
use crate::tuning::{BATCH_BYTES, MERGE_SLOTS};
use super::batches::{run_batches, Batches};
use crate::device::kernels::Kernels;
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
use std::mem::MaybeUninit;

/// The plan of an external sort of `n` keys of `key_bytes` (values of `word` bytes) on a
/// device of `arch` in `budget` bytes of device memory, or [`Error::TooLargeForDevice`].
pub(super) fn external_plan(arch: u32, n: usize, key_bytes: usize, word: usize, budget: usize) -> Result<ExternalPlan> {
    let in_core = |items: usize| in_core_bytes_now(items, key_bytes, word);
    let merge_temp = |items: usize, ways: usize| multiway_temp_bytes(arch, key_bytes, word > 0, items, ways);
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
    out_values: Option<&mut [u8]>,
    comp: C,
    progress: &mut Progress<'_>,
) -> Result<()> {
    let kernels = gpu.kernels::<K, C>()?;
    let runs: Vec<&[K]> = (0..plan.runs).map(|r| &keys[plan.run_range(r)]).collect();
    let (ranks, rows) = batch_splits(plan, &runs, comp);
    let kb = std::mem::size_of::<K>();
    // The plan fitted the slots to the budget: no second query of free memory.
    let mut temp = gpu.temp(Slots::bytes(plan.slots, plan.batch, kb, word))?;
    let (base, _guard) = temp.device_ptr_mut();
    let slots = Slots::at(base, plan.batch, kb, word);
    let mut batches = RunBatches { gpu, kernels: &kernels, plan, slots, runs, values, word, ranks, rows, out_keys: bytes_mut(out_keys), out_values, progress };
    let mut pipe = Pipeline::new(gpu)?;
    run_batches(&mut pipe, plan.slots, plan.batches(), &mut batches)?;
    pipe.finish()
}

/// The batches of an external sort's merge: each batch's slice of every run uploaded into a
/// slot's input lanes, merged there by the multiway merge into its output lanes, and
/// downloaded into the batch's place in the caller's slices.
struct RunBatches<'a, 'p, K: Key> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    plan: &'a ExternalPlan,
    slots: Slots,
    runs: Vec<&'a [K]>,
    values: &'a [u8],
    word: usize,
    /// Each batch boundary's output rank and the runs' splits there ([`batch_splits`]).
    ranks: Vec<usize>,
    rows: Vec<Vec<usize>>,
    out_keys: &'a mut [u8],
    out_values: Option<&'a mut [u8]>,
    progress: &'a mut Progress<'p>,
}

impl<K: Key> RunBatches<'_, '_, K> {
    fn item_bytes(&self) -> usize {
        std::mem::size_of::<K>() + self.word
    }
}

impl<K: Key> Batches for RunBatches<'_, '_, K> {
    type Uploaded = (Vec<CheckedBuffer<'static>>, Vec<CheckedBuffer<'static>>);

    fn upload(&mut self, pipe: &mut Pipeline<'_>, b: usize, s: usize) -> Result<Self::Uploaded> {
        let input = self.slots.input(s);
        // SAFETY: run_batches enqueues this after the slot's previous merge has read its input
        // lanes; the runs stay borrowed until the pipeline finishes.
        let uploaded = unsafe { upload_batch(pipe, &input, self.plan, &self.runs, self.values, self.word, (&self.rows[b], &self.rows[b + 1])) }?;
        self.progress.advance((self.ranks[b + 1] - self.ranks[b]) * self.item_bytes());
        Ok(uploaded)
    }

    fn merge(&mut self, pipe: &mut Pipeline<'_>, s: usize, (pieces, piece_values): Self::Uploaded) -> Result<()> {
        let output = self.slots.output(s);
        let values = (self.word > 0).then_some((&piece_values[..], self.word));
        pipe.span(Stream::Kernels, "merge batch", || launch_multiway::<K>(self.gpu, self.kernels, &pieces, values, output.keys, (self.word > 0).then_some(output.values)))
    }

    fn download(&mut self, pipe: &mut Pipeline<'_>, b: usize, s: usize) -> Result<()> {
        let (output, kb, word) = (self.slots.output(s), std::mem::size_of::<K>(), self.word);
        let out_range = self.ranks[b]..self.ranks[b + 1];
        // SAFETY: the batch's output items written from the slot's output lanes (after its
        // merge: run_batches orders them) into the caller's slices, which stay borrowed until
        // the pipeline finishes.
        unsafe {
            pipe.download_slice(&mut self.out_keys[out_range.start * kb..out_range.end * kb], output.keys)?;
            if let Some(v) = self.out_values.as_deref_mut() {
                pipe.download_slice(&mut v[out_range.start * word..out_range.end * word], output.values)?;
            }
        }
        self.progress.advance(out_range.len() * self.item_bytes());
        Ok(())
    }
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
unsafe fn upload_batch<K: Key>(
    pipe: &mut Pipeline<'_>,
    input: &Lanes,
    plan: &ExternalPlan,
    runs: &[&[K]],
    values: &[u8],
    word: usize,
    rows: (&[usize], &[usize]),
) -> Result<(Vec<CheckedBuffer<'static>>, Vec<CheckedBuffer<'static>>)> {
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

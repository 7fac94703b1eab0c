//! Multiway merges of host slices: the output cut into batches ([`MergeBatches`]), the k-way
//! split of the inputs at every batch boundary computed on the host threads
//! ([`multiway_split`]), and each batch's slice of every input uploaded, merged on the GPU by
//! one pass of the multiway merge and downloaded into the caller's slices, up to three batches
//! in flight. The external sort's merge of its runs is one of these.

use super::batches::{run_batches, Batches};
use super::plan::{bytes_mut, Lanes, MergeBatches, Slots};
use super::positions;
use super::progress::Progress;
use crate::checks::{check_multiway_pairs, check_output};
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::MULTIWAY_MAX_WAYS;
use crate::device::timeline;
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{value_carry, Comparator, Key, Value, ValueCarry};
use crate::multiway::{merge_in_one_pass, multiway_temp_bytes};
use crate::partition::{clamp_multiway_splits, multiway_split};
use crate::threads::{run, threads};
use crate::tuning::{BATCH_BYTES, MERGE_SLOTS};
use crate::types::SortIndex;

impl Gpu {
    /// Merges host slices `inputs` (each sorted by `comp`; any number, empty ones allowed) into
    /// `out[..total]` on the GPU, stably, as [`crate::merge_multiway_keys`]: of equal keys,
    /// those of a lower input first; the rest of `out` is left as it is.
    /// [`Error::OutputTooSmall`] if `out` is shorter. The inputs may be larger than the device:
    /// the output is merged batch by batch, each batch's slice of every input uploaded, merged
    /// and downloaded.
    pub fn merge_multiway_keys<K: Key, C: Comparator<K>>(&self, inputs: &[&[K]], out: &mut [K], comp: C) -> Result<()> {
        let total = inputs.iter().map(|s| s.len()).sum();
        check_output("out", out.len(), total)?;
        let runs = HostRuns { keys: inputs.to_vec(), values: Vec::new(), word: 0 };
        merge_host_runs::<K, C>(self, &runs, &mut out[..total], None, comp)
    }

    /// [`Gpu::merge_multiway_keys`] of key/value pairs: `values[t]` (as many value inputs as
    /// key inputs, each its keys' length: [`Error::LengthMismatch`]) follow their keys into
    /// `out_values`. Values of any size (those the kernels do not move as words travel as
    /// positions and are gathered on the host).
    pub fn merge_multiway_pairs<K: Key, V: Value, C: Comparator<K>>(&self, keys: &[&[K]], values: &[&[V]], out_keys: &mut [K], out_values: &mut [V], comp: C) -> Result<()> {
        let (key_lengths, value_lengths): (Vec<usize>, Vec<usize>) = (keys.iter().map(|s| s.len()).collect(), values.iter().map(|s| s.len()).collect());
        let total = check_multiway_pairs(&key_lengths, &value_lengths, out_keys.len(), out_values.len())?;
        let (out_keys, out_values) = (&mut out_keys[..total], &mut out_values[..total]);
        match const { value_carry::<V>() } {
            ValueCarry::Words(word) => {
                let runs = HostRuns { keys: keys.to_vec(), values: values.iter().map(|v| bytemuck::cast_slice::<V, u8>(v)).collect(), word };
                merge_host_runs::<K, C>(self, &runs, out_keys, Some(bytes_mut(out_values)), comp)
            }
            ValueCarry::Positions(_) if total <= u32::MAX as usize => self.multiway_by_positions::<K, V, u32, C>(keys, values, out_keys, out_values, comp),
            ValueCarry::Positions(_) => self.multiway_by_positions::<K, V, u64, C>(keys, values, out_keys, out_values, comp),
        }
    }

    /// [`Gpu::merge_multiway_pairs`] carrying the values by position (the inputs' values one
    /// after another), gathered on the host after the merge.
    fn multiway_by_positions<K: Key, V: Value, P: SortIndex + Into<u64> + TryFrom<usize>, C: Comparator<K>>(
        &self,
        keys: &[&[K]],
        values: &[&[V]],
        out_keys: &mut [K],
        out_values: &mut [V],
        comp: C,
    ) -> Result<()> {
        let total = out_keys.len();
        let (inputs, mut order) = positions::counting_and_order::<P>(total)?;
        let mut all_values = positions::try_with_capacity(total)?;
        values.iter().for_each(|v| all_values.extend_from_slice(v));
        let (mut at, mut input_positions) = (0, Vec::with_capacity(keys.len()));
        for k in keys {
            input_positions.push(bytemuck::cast_slice::<P, u8>(&inputs[at..at + k.len()]));
            at += k.len();
        }
        let runs = HostRuns { keys: keys.to_vec(), values: input_positions, word: std::mem::size_of::<P>() };
        merge_host_runs::<K, C>(self, &runs, out_keys, Some(bytes_mut(&mut order)), comp)?;
        positions::gather(&all_values, &[], &order, out_values);
        Ok(())
    }
}

/// Sorted runs in host memory: each run's keys and (where `word > 0`) its values' bytes.
pub(super) struct HostRuns<'a, K> {
    pub keys: Vec<&'a [K]>,
    pub values: Vec<&'a [u8]>,
    pub word: usize,
}

/// The device bytes a batch's merge of `items` items from `ways` runs takes besides its lanes:
/// the multiway kernels' splits, and past [`MULTIWAY_MAX_WAYS`] runs a temporary run for each
/// group of them.
pub(super) fn batch_merge_temp(arch: u32, key_bytes: usize, word: usize, items: usize, ways: usize) -> usize {
    let groups = if ways > MULTIWAY_MAX_WAYS { Lanes::bytes(items, key_bytes, word) } else { 0 };
    multiway_temp_bytes(arch, key_bytes, word > 0, items, ways) + groups
}

/// The host-slice multiway merge of `runs` into `out_keys` (and `out_values`), batches sized to
/// the device budget.
fn merge_host_runs<K: Key, C: Comparator<K>>(gpu: &Gpu, runs: &HostRuns<'_, K>, out_keys: &mut [K], out_values: Option<&mut [u8]>, comp: C) -> Result<()> {
    let total = out_keys.len();
    if total == 0 {
        return Ok(());
    }
    let arch = gpu.kernels::<K, C>()?.arch;
    let (kb, word, ways) = (std::mem::size_of::<K>(), runs.word, runs.keys.len());
    let available = gpu.device_budget()?;
    let merge_temp = |items: usize, ways: usize| batch_merge_temp(arch, kb, word, items, ways);
    let batches = MergeBatches::new(total, ways, kb, word, available, work_bytes(BATCH_BYTES), MERGE_SLOTS, merge_temp).map_err(|needed| Error::TooLargeForDevice { needed, available })?;
    merge_runs::<K, C>(gpu, batches, runs, out_keys, out_values, comp, &mut Progress::new(None, 0))
}

/// Merges the sorted `runs` (in host memory) into `out_keys` and `out_values`, batch by batch
/// as `plan` cuts them.
pub(super) fn merge_runs<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    plan: MergeBatches,
    runs: &HostRuns<'_, K>,
    out_keys: &mut [K],
    out_values: Option<&mut [u8]>,
    comp: C,
    progress: &mut Progress<'_>,
) -> Result<()> {
    let (ranks, rows) = batch_splits(&plan, &runs.keys, comp);
    let (kb, word) = (std::mem::size_of::<K>(), runs.word);
    // The plan fitted the slots to the budget: no second query of free memory.
    let mut temp = gpu.temp(Slots::bytes(plan.slots, plan.batch, kb, word))?;
    let (base, _guard) = temp.device_ptr_mut();
    let slots = Slots::at(base, plan.batch, kb, word);
    let mut batches = RunBatches::<K, C> { gpu, slots, runs, ranks, rows, out_keys: bytes_mut(out_keys), out_values, progress, order: std::marker::PhantomData };
    let mut pipe = Pipeline::new(gpu)?;
    run_batches(&mut pipe, plan.slots, plan.batches(), &mut batches)?;
    pipe.finish()
}

/// The batches of a host-slice multiway merge: each batch's slice of every run uploaded into a
/// slot's input lanes, merged there into its output lanes, and downloaded into the batch's
/// place in the caller's slices.
struct RunBatches<'a, 'p, K: Key, C> {
    gpu: &'a Gpu,
    slots: Slots,
    runs: &'a HostRuns<'a, K>,
    /// Each batch boundary's output rank and the runs' splits there ([`batch_splits`]).
    ranks: Vec<usize>,
    rows: Vec<Vec<usize>>,
    out_keys: &'a mut [u8],
    out_values: Option<&'a mut [u8]>,
    progress: &'a mut Progress<'p>,
    /// The order the batches merge by (its kernels).
    order: std::marker::PhantomData<C>,
}

impl<K: Key, C> RunBatches<'_, '_, K, C> {
    fn item_bytes(&self) -> usize {
        std::mem::size_of::<K>() + self.runs.word
    }
}

impl<K: Key, C: Comparator<K>> Batches for RunBatches<'_, '_, K, C> {
    type Uploaded = (Vec<CheckedBuffer<'static>>, Vec<CheckedBuffer<'static>>);

    fn upload(&mut self, pipe: &mut Pipeline<'_>, b: usize, s: usize) -> Result<Self::Uploaded> {
        let input = self.slots.input(s);
        // SAFETY: run_batches enqueues this after the slot's previous merge has read its input
        // lanes; the runs stay borrowed until the pipeline finishes.
        let uploaded = unsafe { upload_batch(pipe, &input, self.runs, (&self.rows[b], &self.rows[b + 1])) }?;
        self.progress.advance((self.ranks[b + 1] - self.ranks[b]) * self.item_bytes());
        Ok(uploaded)
    }

    fn merge(&mut self, pipe: &mut Pipeline<'_>, s: usize, (pieces, piece_values): Self::Uploaded) -> Result<()> {
        let (output, word) = (self.slots.output(s), self.runs.word);
        let values = (word > 0).then_some((&piece_values[..], word));
        pipe.span(Stream::Kernels, "merge batch", || merge_in_one_pass::<K, C>(self.gpu, &pieces, values, output.keys, (word > 0).then_some(output.values)))
    }

    fn download(&mut self, pipe: &mut Pipeline<'_>, b: usize, s: usize) -> Result<()> {
        let (output, kb, word) = (self.slots.output(s), std::mem::size_of::<K>(), self.runs.word);
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
fn batch_splits<K: Key, C: Comparator<K>>(plan: &MergeBatches, runs: &[&[K]], comp: C) -> (Vec<usize>, Vec<Vec<usize>>) {
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
/// stay as they are until then.
#[allow(clippy::type_complexity)]
unsafe fn upload_batch<K: Key>(pipe: &mut Pipeline<'_>, input: &Lanes, runs: &HostRuns<'_, K>, rows: (&[usize], &[usize])) -> Result<(Vec<CheckedBuffer<'static>>, Vec<CheckedBuffer<'static>>)> {
    let (mut pieces, mut piece_values) = (Vec::with_capacity(runs.keys.len()), Vec::with_capacity(runs.keys.len()));
    let (mut at, word) = (0, runs.word);
    for (r, run) in runs.keys.iter().enumerate() {
        let (from, to) = (rows.0[r], rows.1[r]);
        // SAFETY: the run's items `from..to` (inside the run: clamped splits) copied into the
        // lanes at `at` (the batch's pieces add up to its length, at most the lanes' `batch`
        // items); the runs stay as they are, and the lanes unused by other work, until the
        // pipeline finishes (this function's contract).
        unsafe {
            pipe.upload_slice(input.keys(at..at + to - from).ptr, &run[from..to])?;
            if word > 0 {
                pipe.upload_slice(input.values(at..at + to - from).ptr, &runs.values[r][from * word..to * word])?;
            }
        }
        pieces.push(input.keys(at..at + to - from));
        piece_values.push(input.values(at..at + to - from));
        at += to - from;
    }
    Ok((pieces, piece_values))
}

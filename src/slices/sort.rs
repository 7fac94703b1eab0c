//! The host-slice sorts: chunks uploaded and sorted as they arrive, runs merged pairwise, the
//! last merge cut into ranges downloaded as each is merged.

use super::merge::merge_lanes;
use super::plan::{clamp_splits, items_per, Lanes, SortPlan};
use crate::tuning::{RANGE_BYTES, SORT_CHUNK_BYTES};
use super::progress::Progress;
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key};
use crate::partition::launch::launch_partitions;
use crate::partition::partition_count;
use crate::gather::launch_iota;
use crate::sort::launch_sort;
use crate::device::temp::Temp;
use super::plan::bytes_mut;
use cudarc::driver::{result, SyncOnDrop};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Values moving with the keys of a host-slice sort.
pub(super) enum Carried<'a> {
    None,
    /// Values in and out, in words of the given bytes.
    Values(&'a mut [u8], usize),
    /// Original positions out (generated on the device), in words of the given bytes.
    Indices(&'a mut [u8], usize),
}

impl Carried<'_> {
    pub(super) fn word(&self) -> usize {
        match self {
            Carried::None => 0,
            Carried::Values(_, w) | Carried::Indices(_, w) => *w,
        }
    }

    /// The bytes a sort of `n` keys of `key_bytes` moves to the device and back.
    pub(super) fn moved_bytes(&self, n: usize, key_bytes: usize) -> usize {
        let word = self.word();
        let up = match self {
            Carried::Values(..) => key_bytes + word,
            _ => key_bytes,
        };
        n * (up + key_bytes + word)
    }
}

/// The host memory of one in-core sort of `n` items: keys (and values) read from the inputs
/// and written sorted to the outputs, which are the inputs for a sort in place. Made from
/// slices borrowed for `'a`, so the addresses stay valid while it lives.
pub(super) struct HostItems<'a> {
    pub(super) n: usize,
    keys_in: *const u8,
    keys_out: *mut u8,
    values: HostValues,
    _borrow: PhantomData<&'a mut [u8]>,
}

/// The values of [`HostItems`].
#[derive(Clone, Copy)]
enum HostValues {
    None,
    /// Read from `input` and written to `output`, words of `word` bytes.
    Values { input: *const u8, output: *mut u8, word: usize },
    /// The keys' original positions plus `first`, written to `output` in words of `word` bytes.
    Indices { output: *mut u8, word: usize, first: usize },
}

impl<'a> HostItems<'a> {
    /// The keys of `key_bytes` each (and `carried`) sorted in place.
    pub(super) fn in_place(keys: &'a mut [u8], key_bytes: usize, carried: Carried<'a>) -> Self {
        // The inputs are the outputs' addresses (one pointer each, so reads and writes go
        // through the same borrow).
        let values = match carried {
            Carried::None => HostValues::None,
            Carried::Values(v, word) => {
                let output = v.as_mut_ptr();
                HostValues::Values { input: output.cast_const(), output, word }
            }
            Carried::Indices(v, word) => HostValues::Indices { output: v.as_mut_ptr(), word, first: 0 },
        };
        let keys_out = keys.as_mut_ptr();
        HostItems { n: keys.len() / key_bytes, keys_in: keys_out.cast_const(), keys_out, values, _borrow: PhantomData }
    }

    /// `keys_in` (keys of `key_bytes`) sorted into `keys_out` (as long), with values from
    /// `values_in` into `values_out` (words of `word` bytes), or, without `values_in`, the
    /// positions `first + i` into `values_out`.
    pub(super) fn copied(
        keys_in: &'a [u8],
        keys_out: &'a mut [MaybeUninit<u8>],
        key_bytes: usize,
        values_in: Option<&'a [u8]>,
        values_out: Option<(&'a mut [MaybeUninit<u8>], usize)>,
        first: usize,
    ) -> Self {
        assert_eq!(keys_in.len(), keys_out.len(), "a sort's host output holds its input");
        let n = keys_in.len() / key_bytes;
        let values = match (values_in, values_out) {
            (_, None) => HostValues::None,
            (Some(input), Some((output, word))) => {
                assert!(input.len() == n * word && output.len() == n * word, "values of the keys' length");
                HostValues::Values { input: input.as_ptr(), output: output.as_mut_ptr().cast(), word }
            }
            (None, Some((output, word))) => {
                assert_eq!(output.len(), n * word, "positions of the keys' length");
                HostValues::Indices { output: output.as_mut_ptr().cast(), word, first }
            }
        };
        HostItems { n, keys_in: keys_in.as_ptr(), keys_out: keys_out.as_mut_ptr().cast(), values, _borrow: PhantomData }
    }

    fn word(&self) -> usize {
        match self.values {
            HostValues::None => 0,
            HostValues::Values { word, .. } | HostValues::Indices { word, .. } => word,
        }
    }

    /// Enqueues the upload of items `r` into their places in `lanes` (keys of `key_bytes`).
    fn upload(&self, pipe: &mut Pipeline<'_>, lanes: &Lanes, r: Range<usize>, key_bytes: usize) -> Result<()> {
        assert!(r.end <= self.n, "items inside the sort");
        // SAFETY: the range's bytes of the inputs (inside them: checked above; valid while
        // `self` borrows them), copied into the range's place in the lanes (which hold `n`
        // items); the pipeline finishes before the sort returns, while `self` lives.
        unsafe {
            pipe.upload(lanes.keys(r.clone()).ptr, self.keys_in.add(r.start * key_bytes), r.len() * key_bytes)?;
            if let HostValues::Values { input, word, .. } = self.values {
                pipe.upload(lanes.values(r.clone()).ptr, input.add(r.start * word), r.len() * word)?;
            }
        }
        Ok(())
    }

    /// Stages the first piece of the keys of items `r` for their coming [`HostItems::upload`]:
    /// copied on the host threads while this thread enqueues kernels.
    fn stage(&self, pipe: &mut Pipeline<'_>, r: Range<usize>, key_bytes: usize) -> Result<()> {
        assert!(r.end <= self.n, "items inside the sort");
        // SAFETY: as in `upload`: the range's key bytes, valid while `self` borrows them.
        unsafe { pipe.stage_next(self.keys_in.add(r.start * key_bytes), r.len() * key_bytes) }
    }

    /// Enqueues the download of items `r` of `lanes` into their places in the outputs.
    fn download(&self, pipe: &mut Pipeline<'_>, lanes: &Lanes, r: Range<usize>, key_bytes: usize) -> Result<()> {
        assert!(r.end <= self.n, "items inside the sort");
        // SAFETY: as in `upload`, the other way: the outputs are valid for writes of the
        // range's bytes while `self` borrows them, and only the pipeline writes them.
        unsafe {
            pipe.download(self.keys_out.add(r.start * key_bytes), lanes.keys(r.clone()).ptr, r.len() * key_bytes)?;
            match self.values {
                HostValues::None => {}
                HostValues::Values { output, word, .. } | HostValues::Indices { output, word, .. } => {
                    pipe.download(output.add(r.start * word), lanes.values(r.clone()).ptr, r.len() * word)?
                }
            }
        }
        Ok(())
    }
}

/// The in-core sort of `items` on the GPU: chunks sorted as they arrive, runs merged
/// pairwise, the last merge downloaded range by range. The caller has checked that
/// [`in_core_bytes_now`](super::plan::in_core_bytes_now) fits the device budget.
pub(super) fn sort_in_core<K: Key, C: Comparator<K>>(gpu: &Gpu, items: HostItems<'_>, comp: C, progress: &mut Progress<'_>) -> Result<()> {
    let n = items.n;
    if n == 0 {
        return Ok(());
    }
    let (kb, word) = (std::mem::size_of::<K>(), items.word());
    let plan = &SortPlan::new(n, kb + word, work_bytes(SORT_CHUNK_BYTES));
    let mut buffers = ChunkBuffers::new(gpu, plan, Lanes::bytes(n, kb, word))?;
    let (bufs, _guards) = buffers.lanes(n, kb, word);
    let mut pipe = Pipeline::new(gpu)?;
    upload_sorting::<K, C>(gpu, &mut pipe, &items, plan, &bufs, comp, progress)?;
    let mut written = false;
    let result = match write_sorted::<K, C>(gpu, &mut pipe, &items, plan, &bufs, comp, progress, &mut written) {
        Ok(()) => pipe.finish(),
        Err(e) => {
            drop(pipe);
            Err(e)
        }
    };
    if result.is_err() && written {
        // The outputs hold some sorted items and some of before: every item written again from
        // the last level's runs, complete on the device (the last merge reads them and writes
        // the other buffer), so they hold their items, if the device allows.
        let levels = plan.levels() as usize;
        let runs = &bufs[levels.saturating_sub(1) % 2];
        let _ = rewrite_outputs(gpu, &items, runs, kb);
    }
    result
}

/// Enqueues the last merge and the downloads of the sorted items into `items`' outputs
/// (`written` set once the first is enqueued): the last merge, of runs A and B, cut into ranges
/// by merge path (the splits computed on the device and read back, a short wait), each range
/// merged and downloaded while the next one merges.
#[allow(clippy::too_many_arguments)]
fn write_sorted<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    pipe: &mut Pipeline<'_>,
    items: &HostItems<'_>,
    plan: &SortPlan,
    bufs: &[Lanes; 2],
    comp: C,
    progress: &mut Progress<'_>,
    written: &mut bool,
) -> Result<()> {
    let (n, kb, word) = (items.n, std::mem::size_of::<K>(), items.word());
    let levels = plan.levels();
    let out = &bufs[levels as usize % 2];
    let mut download = |pipe: &mut Pipeline<'_>, r: Range<usize>| -> Result<()> {
        pipe.order(Stream::Kernels, Stream::Download)?;
        *written = true;
        items.download(pipe, out, r.clone(), kb)?;
        progress.advance(r.len() * (kb + word));
        Ok(())
    };
    if levels == 0 {
        return download(pipe, 0..n);
    }
    let src = &bufs[(levels as usize - 1) % 2];
    let (a, b) = (plan.run(levels - 1, 0), plan.run(levels - 1, 1));
    let spacing = items_per(work_bytes(RANGE_BYTES), kb + word);
    let count = partition_count(n, spacing);
    let mut parts = gpu.temp(count * 8)?;
    let (parts_ptr, _parts_guard) = parts.device_ptr_mut();
    let kernels = gpu.kernels::<K, C>()?;
    pipe.span(Stream::Kernels, "partitions", || launch_partitions(gpu, &kernels, &src.keys(a.clone()), &src.keys(b.clone()), spacing, parts_ptr, count))?;
    let mut found = vec![0i64; count];
    // SAFETY: `found` holds the `count` i64 the partition kernel writes; the copy is
    // ordered after it on the stream, and the synchronize below waits for it.
    unsafe { result::memcpy_dtoh_async(&mut found, parts_ptr, gpu.stream().cu_stream()) }?;
    gpu.synchronize()?;
    let diags: Vec<usize> = (0..count).map(|p| (p * spacing).min(n)).collect();
    let mut splits: Vec<usize> = found.iter().map(|&s| usize::try_from(s).unwrap_or(0)).collect();
    clamp_splits(&mut splits, &diags, a.len(), b.len());
    for p in 0..count - 1 {
        let (d0, d1, a0, a1) = (diags[p], diags[p + 1], splits[p], splits[p + 1]);
        let (ra, rb) = (a.start + a0..a.start + a1, b.start + (d0 - a0)..b.start + (d1 - a1));
        pipe.span(Stream::Kernels, "merge range", || merge_lanes::<K, C>(gpu, (src, ra), (src, rb), (out, d0), comp))?;
        download(pipe, d0..d1)?;
    }
    Ok(())
}

/// Downloads every item of `lanes` into `items`' outputs, waited for.
fn rewrite_outputs(gpu: &Gpu, items: &HostItems<'_>, lanes: &Lanes, key_bytes: usize) -> Result<()> {
    let mut pipe = Pipeline::new(gpu)?;
    pipe.order(Stream::Kernels, Stream::Download)?;
    items.download(&mut pipe, lanes, 0..items.n, key_bytes)?;
    pipe.finish()
}

/// The device buffers of an in-core sort of host items: the data, and a second buffer as
/// large where there is more than one chunk (level l's runs are in buffer l % 2).
struct ChunkBuffers<'g> {
    data: Temp<'g>,
    merge: Option<Temp<'g>>,
}

impl<'g> ChunkBuffers<'g> {
    fn new(gpu: &'g Gpu, plan: &SortPlan, bytes: usize) -> Result<Self> {
        let data = gpu.temp(bytes)?;
        let merge = if plan.chunks > 1 { Some(gpu.temp(bytes)?) } else { None };
        Ok(ChunkBuffers { data, merge })
    }

    /// Both buffers as lanes of `n` items (the data twice where there is one), and the guards
    /// that order their use on the stream, held while work on them is enqueued.
    fn lanes(&mut self, n: usize, key_bytes: usize, word: usize) -> ([Lanes; 2], (SyncOnDrop<'_>, Option<SyncOnDrop<'_>>)) {
        let (data, data_guard) = self.data.device_ptr_mut();
        let (merge, merge_guard) = match self.merge.as_mut().map(|m| m.device_ptr_mut()) {
            Some((ptr, guard)) => (ptr, Some(guard)),
            None => (data, None),
        };
        ([Lanes::at(data, n, key_bytes, word), Lanes::at(merge, n, key_bytes, word)], (data_guard, merge_guard))
    }
}

/// Enqueues the upload of every chunk of `items` into `bufs[0]`, each sorted as it arrives,
/// and every merge of runs of `plan` below its last level.
#[allow(clippy::too_many_arguments)]
fn upload_sorting<K: Key, C: Comparator<K>>(gpu: &Gpu, pipe: &mut Pipeline<'_>, items: &HostItems<'_>, plan: &SortPlan, bufs: &[Lanes; 2], comp: C, progress: &mut Progress<'_>) -> Result<()> {
    let (n, kb, word) = (items.n, std::mem::size_of::<K>(), items.word());
    // The buffers may be new, or still used by earlier work: both in order on the kernels'
    // stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    if let HostValues::Indices { word, first, .. } = items.values {
        launch_iota(gpu, &*gpu.kernels::<K, C>()?, bufs[0].values(0..n).ptr, n, first, word)?;
    }
    for i in 0..plan.chunks {
        let r = plan.run(0, i);
        items.upload(pipe, &bufs[0], r.clone(), kb)?;
        progress.advance(r.len() * (kb + if matches!(items.values, HostValues::Values { .. }) { word } else { 0 }));
        pipe.order(Stream::Upload, Stream::Kernels)?;
        if i + 1 < plan.chunks {
            items.stage(pipe, plan.run(0, i + 1), kb)?;
        }
        let (k, v) = (bufs[0].keys(r.clone()).ptr, bufs[0].values(r.clone()).ptr);
        pipe.span(Stream::Kernels, "sort chunk", || launch_sort::<K, C>(gpu, k, k, (word > 0).then_some((v, v, word)), r.len(), comp))?;
        for (level, j) in plan.merges_after(i) {
            merge_runs_at::<K, C>(gpu, pipe, plan, bufs, level, j, comp)?;
        }
    }
    Ok(())
}

/// Enqueues level `level`'s merge of runs `2j` and `2j + 1` of the level below into run `j`.
fn merge_runs_at<K: Key, C: Comparator<K>>(gpu: &Gpu, pipe: &Pipeline<'_>, plan: &SortPlan, bufs: &[Lanes; 2], level: u32, j: usize, comp: C) -> Result<()> {
    let (src, dst) = (&bufs[(level as usize - 1) % 2], &bufs[level as usize % 2]);
    let (a, b) = (plan.run(level - 1, 2 * j), plan.run(level - 1, 2 * j + 1));
    pipe.span(Stream::Kernels, "merge runs", || merge_lanes::<K, C>(gpu, (src, a.clone()), (src, b), (dst, a.start), comp))
}

/// Sorts `keys` (host memory) into device memory as [`Gpu::sort_keys`] sorts them (chunks
/// sorted as they arrive, runs merged pairwise); returns the buffer holding the sorted keys
/// once they are there. Nothing is checked against the device budget first: where the
/// buffers do not fit, the call fails with [`crate::Error::OutOfMemory`] (the keys untouched).
pub(crate) fn sort_host_to_device<'g, K: Key, C: Comparator<K>>(gpu: &'g Gpu, keys: &mut [K], comp: C) -> Result<Temp<'g>> {
    let (n, kb) = (keys.len(), std::mem::size_of::<K>());
    let items = HostItems::in_place(bytes_mut(keys), kb, Carried::None);
    let plan = SortPlan::new(n, kb, work_bytes(SORT_CHUNK_BYTES));
    let mut buffers = ChunkBuffers::new(gpu, &plan, Lanes::bytes(n, kb, 0))?;
    let levels = plan.levels();
    {
        let (bufs, _guards) = buffers.lanes(n, kb, 0);
        let mut pipe = Pipeline::new(gpu)?;
        upload_sorting::<K, C>(gpu, &mut pipe, &items, &plan, &bufs, comp, &mut Progress::new(None, 0))?;
        if levels > 0 {
            merge_runs_at::<K, C>(gpu, &pipe, &plan, &bufs, levels, 0, comp)?;
        }
        pipe.finish()?;
    }
    let ChunkBuffers { data, merge } = buffers;
    Ok(if levels.is_multiple_of(2) { data } else { merge.expect("a second buffer where there are levels") })
}

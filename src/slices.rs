//! Data in host memory, work on the GPU: every algorithm as a method of [`Gpu`] taking host
//! slices (a `Vec`, an array, a [`PinnedBuffer`]), with the device functions' semantics and
//! errors, returning when the result is in host memory.
//!
//! ```no_run
//! use mergepath::{Gpu, Less};
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = Gpu::new(0)?;
//! let mut keys: Vec<u32> = (0..1u32 << 20).map(|i| i.wrapping_mul(2_654_435_761)).collect();
//! gpu.sort_keys(&mut keys, Less)?;
//! assert!(keys.windows(2).all(|w| w[0] <= w[1]));
//! # Ok(()) }
//! ```
//!
//! The data streams through the `Gpu`'s pinned staging buffers: host
//! threads copy pageable memory into them while the copy engines move earlier pieces, and
//! page-locked memory ([`Gpu::alloc_pinned`]) is copied directly.
//!
//! - **Sorts** ([`Gpu::sort_keys`], [`Gpu::sort_pairs`], [`Gpu::sort_indices`]) upload the
//!   input in chunks (a power of two of them) and sort each chunk as it arrives, merging
//!   pairs of sorted runs as soon as both exist, so most of the sort hides under the upload.
//!   The last merge is cut into output ranges by Merge Path (partitions computed on the
//!   device), and each range is downloaded as soon as it is merged. The whole input and a
//!   buffer as large are on the device at once: inputs that do not fit with the sort's
//!   temporaries are [`Error::TooLargeForDevice`], before anything is copied.
//! - **Merges** ([`Gpu::merge_keys`], [`Gpu::merge_pairs`]) cut the output into ranges by
//!   Merge Path on the host; each range's inputs are uploaded, merged and downloaded on their
//!   own, three ranges in flight, so uploads and downloads run at once and the inputs may be
//!   larger than the device.
//! - **Searches, multiset operations and segmented sorts** upload their inputs, run the device
//!   algorithm and download the result (all on the device at once).
//!
//! Bad input is an `Err` before anything is copied, and the slices are left as they were; an
//! error inside the pipeline waits for every copy in flight before it returns. Host slices
//! cannot overlap (Rust's borrows), so [`Error::Overlap`] does not arise here.

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::Gpu;
use crate::host::{check_output, check_values};
use crate::key::{value_word, Comparator, Key, Value};
use crate::merge::launch_merge;
use crate::partition::{launch_partitions, merge_path, partition_count};
use crate::search::{check_search, launch_search, Bound, SearchOutput};
use crate::segmented::{launch_segmented, validate_segment_offsets};
use crate::sets::{launch_set_op, Output, SetOperation};
use crate::sort::{launch_iota, launch_sort, sort_temp_bytes, SortIndex};
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use cudarc::driver::{result, CudaEvent};
use std::ops::Range;

pub use crate::device::staging::PinnedBuffer;

#[doc(hidden)]
pub use crate::device::timeline::{record_timeline, Span};

/// Runs `f` with the host-slice calls it makes on this thread cutting their work (sort chunks,
/// merge ranges, staging pieces) into pieces of `bytes`, so tests reach many chunks with small
/// inputs. Results do not depend on it.
#[doc(hidden)]
pub fn with_work_bytes<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    crate::device::transfer::with_work_bytes(bytes, f)
}

/// Bytes of keys and values per sort chunk: the chunk sorts of a 2^26 u32 sort (eight chunks)
/// keep pace with the upload, and the chunk left to sort after the last byte arrives is short.
const SORT_CHUNK_BYTES: usize = 32 << 20;
/// Bytes of keys and values per output range of a sort's last merge and of a host-slice
/// merge: ranges short enough that the first download starts soon, long enough that a merge
/// launch fills the GPU.
const RANGE_BYTES: usize = 16 << 20;
/// Ranges of a host-slice merge in flight at once (device buffers for each).
const MERGE_SLOTS: usize = 3;

/// `b` rounded up to 256 bytes: the device buffers' lane alignment.
fn round(b: usize) -> usize {
    b.div_ceil(256) * 256
}

/// Items of `item_bytes` in a piece of work of about `bytes` (at least one).
fn items_per(bytes: usize, item_bytes: usize) -> usize {
    (bytes / item_bytes.max(1)).max(1)
}

/// How a host-slice sort of `n` items runs: `chunks` (a power of two) chunks of `chunk` items
/// (the last ones possibly shorter or empty), each sorted on arrival; the runs are merged
/// pairwise, level `l` merging runs of `chunk << (l - 1)` items, up to `levels = log2(chunks)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SortPlan {
    pub n: usize,
    pub chunk: usize,
    pub chunks: usize,
}

impl SortPlan {
    /// The plan for `n >= 1` items of `item_bytes` (key and value) in chunks of about
    /// `chunk_bytes`.
    pub fn new(n: usize, item_bytes: usize, chunk_bytes: usize) -> Self {
        let chunks = n.div_ceil(items_per(chunk_bytes, item_bytes)).next_power_of_two();
        SortPlan { n, chunk: n.div_ceil(chunks), chunks }
    }

    /// Merge levels: log2(chunks).
    pub fn levels(&self) -> u32 {
        self.chunks.trailing_zeros()
    }

    /// The items of run `j` at merge level `level` (level 0: the chunks).
    pub fn run(&self, level: u32, j: usize) -> Range<usize> {
        let len = self.chunk << level;
        (j * len).min(self.n)..((j + 1) * len).min(self.n)
    }

    /// The merges (level, index of the merged run) that can run once chunk `i` is sorted,
    /// below the last level: level `l` merges runs `2j` and `2j + 1` of level `l - 1` into run
    /// `j`, once chunk `(j + 1) * 2^l - 1` has arrived.
    pub fn merges_after(&self, i: usize) -> impl Iterator<Item = (u32, usize)> {
        (1..self.levels()).take_while(move |&l| (i + 1) % (1 << l) == 0).map(move |l| (l, (i + 1) / (1 << l) - 1))
    }
}

/// A merge path split at each of the ascending `diags` of a merge of `a_len` and `b_len`
/// items, made safe: each split inside the inputs, and consecutive splits taking at most their
/// diagonals' difference from A and nothing back from either input. The splits of a real
/// merge path (sorted inputs, a strict weak order) are left as they are.
pub(crate) fn clamp_splits(splits: &mut [usize], diags: &[usize], a_len: usize, b_len: usize) {
    let mut prev: Option<(usize, usize)> = None;
    for (s, &d) in splits.iter_mut().zip(diags) {
        let (mut lo, mut hi) = (d.saturating_sub(b_len), d.min(a_len));
        if let Some((pa, pd)) = prev {
            lo = lo.max(pa);
            hi = hi.min(pa + (d - pd));
        }
        *s = (*s).clamp(lo, hi);
        prev = Some((*s, d));
    }
}

/// Values moving with the keys of a host-slice sort.
enum Carried<'a> {
    None,
    /// Values in and out, in words of the given bytes.
    Values(&'a mut [u8], usize),
    /// Original positions out (generated on the device), in words of the given bytes.
    Indices(&'a mut [u8], usize),
}

impl Carried<'_> {
    fn word(&self) -> usize {
        match self {
            Carried::None => 0,
            Carried::Values(_, w) | Carried::Indices(_, w) => *w,
        }
    }
}

/// A device buffer of keys and (optionally) values for `n` items: the keys' lane, then the
/// values', each 256-byte aligned.
#[derive(Clone, Copy)]
struct Lanes {
    keys: u64,
    values: u64,
    key_bytes: usize,
    word: usize,
}

impl Lanes {
    fn bytes(n: usize, key_bytes: usize, word: usize) -> usize {
        round(n * key_bytes) + round(n * word)
    }

    fn at(base: u64, n: usize, key_bytes: usize, word: usize) -> Self {
        Lanes { keys: base, values: base + round(n * key_bytes) as u64, key_bytes, word }
    }

    /// Items `r` of the keys.
    fn keys(&self, r: Range<usize>) -> BufArg<'static> {
        BufArg::raw(self.keys + (r.start * self.key_bytes) as u64, r.len(), self.key_bytes)
    }

    /// Items `r` of the values.
    fn values(&self, r: Range<usize>) -> BufArg<'static> {
        BufArg::raw(self.values + (r.start * self.word) as u64, r.len(), self.word)
    }
}

/// Merges `a` and `b` (device lanes) into `out` with values where `word > 0`.
fn merge_lanes<K: Key, C: Comparator<K>>(gpu: &Gpu, a: (&Lanes, Range<usize>), b: (&Lanes, Range<usize>), out: (&Lanes, usize), comp: C) -> Result<()> {
    let total = a.1.len() + b.1.len();
    let out_range = out.1..out.1 + total;
    let (ak, bk, ok) = (a.0.keys(a.1.clone()), b.0.keys(b.1.clone()), out.0.keys(out_range.clone()));
    if a.0.word == 0 {
        return launch_merge::<K, C>(gpu, &ak, &bk, &ok, None, comp);
    }
    let (av, bv, ov) = (a.0.values(a.1), b.0.values(b.1), out.0.values(out_range));
    launch_merge::<K, C>(gpu, &ak, &bk, &ok, Some((&av, &bv, &ov, a.0.word)), comp)
}

/// The bytes of a slice of `Pod` values.
fn bytes_mut<T: bytemuck::Pod>(v: &mut [T]) -> &mut [u8] {
    bytemuck::cast_slice_mut(v)
}

/// The sort of `keys` (and `carried`) on the GPU: chunks sorted as they arrive, runs merged
/// pairwise, the last merge downloaded range by range.
fn sort_host<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut [K], mut carried: Carried<'_>, comp: C) -> Result<()> {
    let n = keys.len();
    if n == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), carried.word());
    let plan = SortPlan::new(n, kb + word, work_bytes(SORT_CHUNK_BYTES));
    let data_bytes = Lanes::bytes(n, kb, word);
    let merge_bytes = if plan.chunks > 1 { data_bytes } else { 0 };
    gpu.ensure_device_memory(data_bytes + merge_bytes + sort_temp_bytes(plan.chunk, kb, word))?;
    let mut data = gpu.temp(data_bytes)?;
    let mut merge_buf = if plan.chunks > 1 { Some(gpu.temp(data_bytes)?) } else { None };
    let (data_ptr, _data_guard) = data.device_ptr_mut();
    let merge_ptr = merge_buf.as_mut().map(|t| t.device_ptr_mut());
    // Level l's runs are in `bufs[l % 2]`.
    let bufs = [Lanes::at(data_ptr, n, kb, word), Lanes::at(merge_ptr.as_ref().map_or(data_ptr, |(p, _)| *p), n, kb, word)];
    let key_bytes: &mut [u8] = bytes_mut(keys);

    let mut pipe = Pipeline::new(gpu)?;
    // The buffers may be new, or still used by earlier work: both in order on the kernels'
    // stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    if let Carried::Indices(_, w) = carried {
        launch_iota(gpu, &kernels, &bufs[0].values(0..n), w)?;
    }
    for i in 0..plan.chunks {
        let r = plan.run(0, i);
        // SAFETY: the chunk's bytes of the caller's slices, copied into the chunk's place in
        // the data buffer; both stay untouched until the pipeline finishes.
        unsafe {
            pipe.upload_slice(bufs[0].keys(r.clone()).ptr, &key_bytes[r.start * kb..r.end * kb])?;
            if let Carried::Values(v, w) = &carried {
                pipe.upload_slice(bufs[0].values(r.clone()).ptr, &v[r.start * w..r.end * w])?;
            }
        }
        pipe.order(Stream::Upload, Stream::Kernels)?;
        let (k, v) = (bufs[0].keys(r.clone()).ptr, bufs[0].values(r.clone()).ptr);
        pipe.span(Stream::Kernels, "sort chunk", || launch_sort::<K, C>(gpu, k, k, (word > 0).then_some((v, v, word)), r.len(), comp))?;
        for (level, j) in plan.merges_after(i) {
            let (src, dst) = (&bufs[(level as usize - 1) % 2], &bufs[level as usize % 2]);
            let (a, b) = (plan.run(level - 1, 2 * j), plan.run(level - 1, 2 * j + 1));
            pipe.span(Stream::Kernels, "merge runs", || merge_lanes::<K, C>(gpu, (src, a.clone()), (src, b), (dst, a.start), comp))?;
        }
    }
    let levels = plan.levels();
    let out = &bufs[levels as usize % 2];
    let mut download = |pipe: &mut Pipeline<'_>, r: Range<usize>| -> Result<()> {
        pipe.order(Stream::Kernels, Stream::Download)?;
        // SAFETY: the range's bytes of the caller's slices, written from the sorted data; the
        // slices stay borrowed until the pipeline finishes.
        unsafe {
            pipe.download_slice(&mut key_bytes[r.start * kb..r.end * kb], out.keys(r.clone()).ptr)?;
            match &mut carried {
                Carried::None => {}
                Carried::Values(v, w) | Carried::Indices(v, w) => pipe.download_slice(&mut v[r.start * *w..r.end * *w], out.values(r.clone()).ptr)?,
            }
        }
        Ok(())
    };
    if levels == 0 {
        download(&mut pipe, 0..n)?;
        return pipe.finish();
    }
    // The last merge, of runs A and B, cut into ranges by merge path: the splits are
    // computed on the device and read back (a short wait), then each range is merged and
    // downloaded while the next one merges.
    let src = &bufs[(levels as usize - 1) % 2];
    let (a, b) = (plan.run(levels - 1, 0), plan.run(levels - 1, 1));
    let spacing = items_per(work_bytes(RANGE_BYTES), kb + word);
    let count = partition_count(n, spacing);
    let mut parts = gpu.temp(count * 8)?;
    let (parts_ptr, _parts_guard) = parts.device_ptr_mut();
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
        download(&mut pipe, d0..d1)?;
    }
    pipe.finish()
}

/// The merge of host slices: output ranges cut by merge path on the host, each uploaded,
/// merged and downloaded on its own, `MERGE_SLOTS` in flight.
#[allow(clippy::type_complexity)]
fn merge_host<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &[K], b: &[K], out: &mut [K], mut values: Option<(&[u8], &[u8], &mut [u8], usize)>, comp: C) -> Result<()> {
    let total = a.len() + b.len();
    if total == 0 {
        return Ok(());
    }
    gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), values.as_ref().map_or(0, |v| v.3));
    let range = items_per(work_bytes(RANGE_BYTES), kb + word);
    let ranges = total.div_ceil(range);
    let slots = MERGE_SLOTS.min(ranges);
    let lane_bytes = Lanes::bytes(range, kb, word);
    // Per slot: the range's inputs, then its output; the merge's partitions come from the pool.
    gpu.ensure_device_memory(2 * slots * lane_bytes + 8 * (range / 256 + 2))?;
    let mut temp = gpu.temp(2 * slots * lane_bytes)?;
    let (base, _guard) = temp.device_ptr_mut();
    let slot = |s: usize, part: usize| Lanes::at(base + ((2 * s + part) * lane_bytes) as u64, range, kb, word);
    let (a_bytes, b_bytes): (&[u8], &[u8]) = (bytemuck::cast_slice(a), bytemuck::cast_slice(b));
    let out_bytes: &mut [u8] = bytes_mut(out);
    let is_less = |x: &K, y: &K| comp.is_less(x, y);

    let mut pipe = Pipeline::new(gpu)?;
    // The slots may be new, or still used by earlier work: both in order on the kernels'
    // stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    let mut merged: Vec<Option<CudaEvent>> = (0..slots).map(|_| None).collect();
    let mut downloaded: Vec<Option<CudaEvent>> = (0..slots).map(|_| None).collect();
    let (mut a0, mut d0) = (0, 0);
    for r in 0..ranges {
        let s = r % slots;
        let d1 = ((r + 1) * range).min(total);
        let mut split = [a0, if d1 == total { a.len() } else { merge_path(a, b, d1, is_less) }];
        clamp_splits(&mut split, &[d0, d1], a.len(), b.len());
        let a1 = split[1];
        let (ra, rb) = (a0..a1, d0 - a0..d1 - a1);
        let (input, output) = (slot(s, 0), slot(s, 1));
        if let Some(done) = &merged[s] {
            pipe.wait(Stream::Upload, done)?;
        }
        // SAFETY: the range's bytes of the caller's inputs, copied into the slot's input lanes
        // (A's items, then B's), which the merge of the range before in this slot has read
        // (the wait above); the inputs stay borrowed until the pipeline finishes.
        unsafe {
            pipe.upload_slice(input.keys(0..ra.len()).ptr, &a_bytes[ra.start * kb..ra.end * kb])?;
            pipe.upload_slice(input.keys(ra.len()..ra.len() + rb.len()).ptr, &b_bytes[rb.start * kb..rb.end * kb])?;
            if let Some((av, bv, _, w)) = &values {
                pipe.upload_slice(input.values(0..ra.len()).ptr, &av[ra.start * w..ra.end * w])?;
                pipe.upload_slice(input.values(ra.len()..ra.len() + rb.len()).ptr, &bv[rb.start * w..rb.end * w])?;
            }
        }
        pipe.order(Stream::Upload, Stream::Kernels)?;
        if let Some(done) = &downloaded[s] {
            pipe.wait(Stream::Kernels, done)?;
        }
        merge_lanes::<K, C>(gpu, (&input, 0..ra.len()), (&input, ra.len()..ra.len() + rb.len()), (&output, 0), comp)?;
        let done = pipe.record(Stream::Kernels)?;
        pipe.wait(Stream::Download, &done)?;
        merged[s] = Some(done);
        // SAFETY: the range's bytes of the caller's outputs, written from the slot's output
        // lanes; the outputs stay borrowed until the pipeline finishes.
        unsafe {
            pipe.download_slice(&mut out_bytes[d0 * kb..d1 * kb], output.keys(0..d1 - d0).ptr)?;
            if let Some((_, _, ov, w)) = &mut values {
                pipe.download_slice(&mut ov[d0 * *w..d1 * *w], output.values(0..d1 - d0).ptr)?;
            }
        }
        downloaded[s] = Some(pipe.record(Stream::Download)?);
        (a0, d0) = (a1, d1);
    }
    pipe.finish()
}

/// Uploads `inputs` (host bytes) into one device buffer (each 256-byte aligned) with room for
/// `outputs` (bytes each) after them, runs `launch` with the device addresses of the inputs and
/// outputs, which returns how many bytes of each output to download, then downloads them into
/// the front of `results` (one host destination per output). `temp_bytes` is what `launch`
/// takes from the temp pool.
fn on_device(gpu: &Gpu, inputs: &[&[u8]], outputs: &[usize], temp_bytes: usize, launch: impl FnOnce(&[u64], &[u64]) -> Result<Vec<usize>>, results: &mut [&mut [u8]]) -> Result<()> {
    let offsets: Vec<usize> = inputs.iter().map(|i| i.len()).chain(outputs.iter().copied()).scan(0, |at, b| Some(std::mem::replace(at, *at + round(b)))).collect();
    let bytes: usize = inputs.iter().map(|i| round(i.len())).chain(outputs.iter().map(|&b| round(b))).sum();
    gpu.ensure_device_memory(bytes + temp_bytes)?;
    let mut temp = gpu.temp(bytes)?;
    let (base, _guard) = temp.device_ptr_mut();
    let addrs: Vec<u64> = offsets.iter().map(|&o| base + o as u64).collect();
    let mut pipe = Pipeline::new(gpu)?;
    // The buffer may be new, or still used by earlier work: both in order on the kernels'
    // stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    for (input, &addr) in inputs.iter().zip(&addrs) {
        // SAFETY: the caller's input bytes into their place in the buffer; both stay as they
        // are until the pipeline finishes.
        unsafe { pipe.upload_slice(addr, input) }?;
    }
    pipe.order(Stream::Upload, Stream::Kernels)?;
    let sizes = launch(&addrs[..inputs.len()], &addrs[inputs.len()..])?;
    pipe.order(Stream::Kernels, Stream::Download)?;
    for ((result, &addr), &size) in results.iter_mut().zip(&addrs[inputs.len()..]).zip(&sizes) {
        let size = size.min(result.len());
        // SAFETY: the output's first bytes into the caller's destination, which stays
        // borrowed until the pipeline finishes.
        unsafe { pipe.download_slice(&mut result[..size], addr) }?;
    }
    pipe.finish()
}

/// The bytes a device search of `needles` in `haystack` items takes from the temp pool at most:
/// lower bounds of 8 bytes per needle and the partitions.
fn search_temp_bytes(needles: usize, haystack: usize) -> usize {
    round(needles * 8) + 8 * ((needles + haystack) / 256 + 2)
}

impl Gpu {
    /// Sorts `keys` (host memory: a `Vec`, an array, a [`PinnedBuffer`]) in place on the GPU
    /// by `comp`, stably, and returns when they are sorted. As [`crate::sort_keys`], any length;
    /// [`Error::TooLargeForDevice`] where the keys and the sort's temporaries (about twice the
    /// keys) do not fit in device memory. See [`crate::slices`] for how it streams.
    pub fn sort_keys<K: Key, C: Comparator<K>>(&self, keys: &mut [K], comp: C) -> Result<()> {
        sort_host::<K, C>(self, keys, Carried::None, comp)
    }

    /// Sorts `keys` in place on the GPU by `comp`, stably, moving `values` (host memory, the
    /// keys' length: [`Error::LengthMismatch`] otherwise; any [`Value`]) with their keys.
    pub fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(&self, keys: &mut [K], values: &mut [V], comp: C) -> Result<()> {
        let word = const { value_word::<V>() };
        check_values("values", keys.len(), values.len())?;
        sort_host::<K, C>(self, keys, Carried::Values(bytes_mut(values), word), comp)
    }

    /// Sorts `keys` in place on the GPU by `comp`, stably, and writes to `indices` (the keys'
    /// length) the original position of each sorted key. [`Error::TooLarge`] for `u32` indices
    /// past 2^32 keys.
    pub fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(&self, keys: &mut [K], indices: &mut [I], comp: C) -> Result<()> {
        check_values("indices", keys.len(), indices.len())?;
        if keys.len() > I::MAX_COUNT {
            return Err(Error::TooLarge { what: "u32 indices (more than 2^32 keys)" });
        }
        sort_host::<K, C>(self, keys, Carried::Indices(bytes_mut(indices), std::mem::size_of::<I>()), comp)
    }

    /// Merges host slices `a` and `b`, both sorted by `comp`, into `out[..a.len() + b.len()]`
    /// on the GPU, stably (as [`crate::merge_keys`]; the rest of `out` is left as it is).
    /// [`Error::OutputTooSmall`] if `out` is shorter. The inputs may be larger than the device:
    /// only a few ranges are there at once.
    pub fn merge_keys<K: Key, C: Comparator<K>>(&self, a: &[K], b: &[K], out: &mut [K], comp: C) -> Result<()> {
        let total = a.len() + b.len();
        check_output("out", out.len(), total)?;
        merge_host::<K, C>(self, a, b, &mut out[..total], None, comp)
    }

    /// Merges host key/value pairs on the GPU: keys as [`Gpu::merge_keys`], each value
    /// following its key. Each value slice must have its keys' length
    /// ([`Error::LengthMismatch`]); both outputs must hold the result ([`Error::OutputTooSmall`]).
    #[allow(clippy::too_many_arguments)]
    pub fn merge_pairs<K: Key, V: Value, C: Comparator<K>>(
        &self,
        a_keys: &[K],
        a_values: &[V],
        b_keys: &[K],
        b_values: &[V],
        out_keys: &mut [K],
        out_values: &mut [V],
        comp: C,
    ) -> Result<()> {
        let word = const { value_word::<V>() };
        check_values("a_values", a_keys.len(), a_values.len())?;
        check_values("b_values", b_keys.len(), b_values.len())?;
        let total = a_keys.len() + b_keys.len();
        check_output("out_keys", out_keys.len(), total)?;
        check_output("out_values", out_values.len(), total)?;
        let values = (bytemuck::cast_slice(a_values), bytemuck::cast_slice(b_values), bytes_mut(&mut out_values[..total]), word);
        merge_host::<K, C>(self, a_keys, b_keys, &mut out_keys[..total], Some(values), comp)
    }

    /// Searches on the GPU, writing `outs` (host slices of at least the needles' length, each
    /// with what it receives).
    fn search_host<K: Key, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], outs: &mut [(&mut [u8], SearchOutput)]) -> Result<()> {
        let n = needles.len();
        if n == 0 {
            return Ok(());
        }
        self.kernels::<K, C>()?;
        let kb = std::mem::size_of::<K>();
        let word = |what: SearchOutput| match what {
            SearchOutput::Bound(_, w) | SearchOutput::Count(w) => w,
            SearchOutput::Contains => 1,
        };
        let sizes: Vec<usize> = outs.iter().map(|o| n * word(o.1)).collect();
        let whats: Vec<SearchOutput> = outs.iter().map(|o| o.1).collect();
        let mut results: Vec<&mut [u8]> = outs.iter_mut().zip(&sizes).map(|(o, &s)| &mut o.0[..s]).collect();
        let launch = |ins: &[u64], outs: &[u64]| {
            let (nd, hd) = (BufArg::raw(ins[0], n, kb), BufArg::raw(ins[1], haystack.len(), kb));
            whats.iter().zip(outs).try_for_each(|(&what, &out)| launch_search::<K, C>(self, &nd, &hd, what, out))?;
            Ok(sizes.clone())
        };
        let inputs: [&[u8]; 2] = [bytemuck::cast_slice(needles), bytemuck::cast_slice(haystack)];
        on_device(self, &inputs, &sizes, search_temp_bytes(n, haystack.len()), launch, &mut results)
    }

    /// Writes to `out[j]` the `bound` of `needles[j]` in `haystack` (host slices, both sorted
    /// by `comp`), computed on the GPU; as [`crate::sorted_search`].
    pub fn sorted_search<K: Key, I: SortIndex, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], bound: Bound, out: &mut [I], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<I>(needles.len(), haystack.len(), &[("out", out.len())])?;
        self.search_host::<K, C>(needles, haystack, &mut [(bytes_mut(out), SearchOutput::Bound(bound, std::mem::size_of::<I>()))])
    }

    /// Both bounds of every needle, on the GPU: `lower[j]..upper[j]` is the range of haystack
    /// items equal to `needles[j]`; as [`crate::sorted_search_range`].
    pub fn sorted_search_range<K: Key, I: SortIndex, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], lower: &mut [I], upper: &mut [I], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<I>(needles.len(), haystack.len(), &[("lower", lower.len()), ("upper", upper.len())])?;
        let w = std::mem::size_of::<I>();
        self.search_host::<K, C>(
            needles,
            haystack,
            &mut [(bytes_mut(lower), SearchOutput::Bound(Bound::Lower, w)), (bytes_mut(upper), SearchOutput::Bound(Bound::Upper, w))],
        )
    }

    /// Writes to `counts[j]` how many haystack items equal `needles[j]`, on the GPU; as
    /// [`crate::sorted_search_count`].
    pub fn sorted_search_count<K: Key, I: SortIndex, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], counts: &mut [I], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<I>(needles.len(), haystack.len(), &[("counts", counts.len())])?;
        self.search_host::<K, C>(needles, haystack, &mut [(bytes_mut(counts), SearchOutput::Count(std::mem::size_of::<I>()))])
    }

    /// Writes to `found[j]` 1 if `haystack` holds an item equal to `needles[j]`, else 0, on the
    /// GPU; as [`crate::sorted_search_contains`].
    pub fn sorted_search_contains<K: Key, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], found: &mut [u8], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<u64>(needles.len(), haystack.len(), &[("found", found.len())])?;
        self.search_host::<K, C>(needles, haystack, &mut [(found, SearchOutput::Contains)])
    }

    /// `op` of host slices `a` and `b` on the GPU, into `out` (keys, and values with their
    /// word size where given): the result's length, or [`Error::OutputTooSmall`] with it after
    /// writing the result's first items that fit.
    #[allow(clippy::type_complexity)]
    fn set_host<K: Key, C: Comparator<K>>(&self, op: SetOperation, a: &[K], b: &[K], out: Option<(&mut [u8], Option<(&[u8], &[u8], &mut [u8], usize)>)>) -> Result<usize> {
        let kernels = self.kernels::<K, C>()?;
        let kb = std::mem::size_of::<K>();
        let word = out.as_ref().and_then(|o| o.1.as_ref()).map_or(0, |v| v.3);
        let capacity = match &out {
            None => 0,
            Some((keys, values)) => values.as_ref().map_or(keys.len() / kb, |v| (keys.len() / kb).min(v.2.len() / v.3)),
        };
        let room = capacity.min(op.max_len(a.len(), b.len()));
        let mut inputs: Vec<&[u8]> = vec![bytemuck::cast_slice(a), bytemuck::cast_slice(b)];
        if let Some((_, Some((av, bv, _, _)))) = &out {
            inputs.extend([*av, *bv]);
        }
        let outputs = match &out {
            None => Vec::new(),
            Some(_) => vec![room * kb, room * word],
        };
        let mut len = 0;
        let launch = |ins: &[u64], outs: &[u64]| {
            let (ad, bd) = (BufArg::raw(ins[0], a.len(), kb), BufArg::raw(ins[1], b.len(), kb));
            let keys = outs.first().map(|&p| BufArg::raw(p, room, kb));
            let (a_values, b_values, values) = match word {
                0 => (None, None, None),
                _ => (Some(BufArg::raw(ins[2], a.len(), word)), Some(BufArg::raw(ins[3], b.len(), word)), Some(BufArg::raw(outs[1], room, word))),
            };
            let output = match (&keys, &a_values, &b_values, &values) {
                (Some(keys), Some(a_values), Some(b_values), Some(values)) => Output::Pairs { keys, a_values, b_values, values, word },
                (Some(keys), ..) => Output::Keys(keys),
                _ => Output::LenOnly,
            };
            let set_len = launch_set_op::<K>(self, &kernels, op, &ad, &bd, output)?;
            // The length decides what to download: wait for it here.
            len = usize::try_from(self.download(set_len.device())?[0]).map_err(|_| Error::TooLarge { what: "set result length" })?;
            let written = len.min(room);
            Ok(vec![written * kb, written * word])
        };
        let temp = 24 * ((a.len() + b.len()) / 256 + 2) + 512;
        let mut results: Vec<&mut [u8]> = match out {
            None => Vec::new(),
            Some((keys, None)) => vec![keys],
            Some((keys, Some((_, _, values, _)))) => vec![keys, values],
        };
        on_device(self, &inputs, &outputs, temp, launch, &mut results)?;
        // A length-only call has no output to be short.
        if !results.is_empty() && len > capacity {
            return Err(Error::OutputTooSmall { what: "set operation output", needed: len, got: capacity });
        }
        Ok(len)
    }

    /// Writes `op` of `a` and `b` (host slices, both sorted by `comp`) to `out` on the GPU and
    /// returns the result's length, as [`crate::host::set_operation_keys`]: a shorter `out`
    /// receives the result's first `out.len()` keys, and the call returns
    /// [`Error::OutputTooSmall`] with the full length.
    pub fn set_operation_keys<K: Key, C: Comparator<K>>(&self, op: SetOperation, a: &[K], b: &[K], out: &mut [K], comp: C) -> Result<usize> {
        let _ = comp;
        self.set_host::<K, C>(op, a, b, Some((bytes_mut(out), None)))
    }

    /// `op` on host key/value pairs on the GPU: keys as [`Gpu::set_operation_keys`], each
    /// output key with its value (from A's values where the key comes from A, else from B's).
    /// Each value slice must have its keys' length ([`Error::LengthMismatch`]); the result is
    /// truncated to the shorter of `out_keys` and `out_values`.
    #[allow(clippy::too_many_arguments)]
    pub fn set_operation_pairs<K: Key, V: Value, C: Comparator<K>>(
        &self,
        op: SetOperation,
        a_keys: &[K],
        a_values: &[V],
        b_keys: &[K],
        b_values: &[V],
        out_keys: &mut [K],
        out_values: &mut [V],
        comp: C,
    ) -> Result<usize> {
        let _ = comp;
        let word = const { value_word::<V>() };
        check_values("a_values", a_keys.len(), a_values.len())?;
        check_values("b_values", b_keys.len(), b_values.len())?;
        let values = (bytemuck::cast_slice(a_values), bytemuck::cast_slice(b_values), bytes_mut(out_values), word);
        self.set_host::<K, C>(op, a_keys, b_keys, Some((bytes_mut(out_keys), Some(values))))
    }

    /// The length of `op`'s result on host slices `a` and `b` (sorted by `comp`), computed on
    /// the GPU without writing the result.
    pub fn set_operation_len<K: Key, C: Comparator<K>>(&self, op: SetOperation, a: &[K], b: &[K], comp: C) -> Result<usize> {
        let _ = comp;
        self.set_host::<K, C>(op, a, b, None)
    }

    /// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` of host memory in place on the
    /// GPU by `comp`, stably; as [`crate::sort_segments_keys`] with host offsets (validated:
    /// non-decreasing, within the keys, [`Error::InvalidArgument`] otherwise).
    pub fn sort_segments_keys<K: Key, C: Comparator<K>>(&self, keys: &mut [K], offsets: &[usize], comp: C) -> Result<()> {
        validate_segment_offsets(offsets, keys.len())?;
        self.segments_host::<K, C>(keys, None, offsets, comp)
    }

    /// [`Gpu::sort_segments_keys`] moving `values` (the keys' length, [`Error::LengthMismatch`]
    /// otherwise) with their keys.
    pub fn sort_segments_pairs<K: Key, V: Value, C: Comparator<K>>(&self, keys: &mut [K], values: &mut [V], offsets: &[usize], comp: C) -> Result<()> {
        let word = const { value_word::<V>() };
        check_values("values", keys.len(), values.len())?;
        validate_segment_offsets(offsets, keys.len())?;
        self.segments_host::<K, C>(keys, Some((bytes_mut(values), word)), offsets, comp)
    }

    /// The segmented sort of host keys (and values of the given word size) on the GPU: both
    /// uploaded, sorted in place on the device, downloaded into the same slices.
    fn segments_host<K: Key, C: Comparator<K>>(&self, keys: &mut [K], mut values: Option<(&mut [u8], usize)>, offsets: &[usize], comp: C) -> Result<()> {
        let n = keys.len();
        if n == 0 || offsets.len() < 2 {
            return Ok(());
        }
        self.kernels::<K, C>()?;
        let (kb, word) = (std::mem::size_of::<K>(), values.as_ref().map_or(0, |v| v.1));
        let bytes = Lanes::bytes(n, kb, word);
        self.ensure_device_memory(bytes + sort_temp_bytes(n, kb, word) + round(offsets.len() * 8))?;
        let mut temp = self.temp(bytes)?;
        let (base, _guard) = temp.device_ptr_mut();
        let lanes = Lanes::at(base, n, kb, word);
        let key_bytes = bytes_mut(keys);
        let mut pipe = Pipeline::new(self)?;
        // The buffer may be new, or still used by earlier work.
        pipe.order(Stream::Kernels, Stream::Upload)?;
        // SAFETY: the caller's slices into the device lanes, then (after the sort) back into
        // the same slices; they stay borrowed until the pipeline finishes, and the downloads
        // are ordered after the uploads (through the kernels' stream).
        unsafe {
            pipe.upload_slice(lanes.keys, key_bytes)?;
            if let Some((v, _)) = &values {
                pipe.upload_slice(lanes.values, v)?;
            }
            pipe.order(Stream::Upload, Stream::Kernels)?;
            launch_segmented::<K, C, [usize]>(self, lanes.keys, (word > 0).then_some((lanes.values, word)), n, offsets, comp)?;
            pipe.order(Stream::Kernels, Stream::Download)?;
            pipe.download_slice(key_bytes, lanes.keys)?;
            if let Some((v, _)) = &mut values {
                pipe.download_slice(v, lanes.values)?;
            }
        }
        pipe.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Chunks are a power of two, each at most the chunk bytes, and cover the input once;
        /// every merge below the last level runs exactly once, after both its runs exist, and
        /// the last level's two runs are the whole input.
        #[test]
        fn sort_plans_cover_the_input_and_merge_each_run_once(n in 1usize..100_000, item in 1usize..40, chunk_bytes in 1usize..20_000) {
            let plan = SortPlan::new(n, item, chunk_bytes);
            prop_assert!(plan.chunks.is_power_of_two());
            prop_assert!(plan.chunk <= items_per(chunk_bytes, item));
            let mut next = 0;
            for i in 0..plan.chunks {
                let r = plan.run(0, i);
                prop_assert_eq!(r.start, next);
                next = r.end;
            }
            prop_assert_eq!(next, n);
            let levels = plan.levels();
            // made[l][j]: run j of level l exists.
            let mut made: Vec<Vec<bool>> = (0..=levels).map(|l| vec![false; plan.chunks >> l]).collect();
            for i in 0..plan.chunks {
                made[0][i] = true;
                for (l, j) in plan.merges_after(i) {
                    let l = l as usize;
                    prop_assert!(l >= 1 && (l as u32) < levels);
                    prop_assert!(made[l - 1][2 * j] && made[l - 1][2 * j + 1] && !made[l][j]);
                    made[l][j] = true;
                    let (a, b, m) = (plan.run(l as u32 - 1, 2 * j), plan.run(l as u32 - 1, 2 * j + 1), plan.run(l as u32, j));
                    prop_assert_eq!((a.start, a.end, b.end), (m.start, b.start, m.end));
                }
            }
            for (l, level) in made.iter().enumerate().take(levels as usize).skip(1) {
                prop_assert!(level.iter().all(|&m| m), "level {} incomplete", l);
            }
            if levels > 0 {
                let (a, b) = (plan.run(levels - 1, 0), plan.run(levels - 1, 1));
                prop_assert_eq!((a.start, a.end, b.end), (0, b.start, n));
            }
        }

        /// The last merge's ranges, cut by merge path (the device partitions' answer) and
        /// clamped, merge to exactly the whole merge, range by range.
        #[test]
        fn ranges_cut_by_merge_path_split_the_output_exactly(
            mut a in proptest::collection::vec(0u8..20, 0..300),
            mut b in proptest::collection::vec(0u8..20, 0..300),
            spacing in 1usize..50,
        ) {
            a.sort();
            b.sort();
            let n = a.len() + b.len();
            let is_less = |x: &u8, y: &u8| x < y;
            let diags: Vec<usize> = (0..partition_count(n, spacing)).map(|p| (p * spacing).min(n)).collect();
            let mut splits: Vec<usize> = diags.iter().map(|&d| merge_path(&a, &b, d, is_less)).collect();
            let exact = splits.clone();
            clamp_splits(&mut splits, &diags, a.len(), b.len());
            prop_assert_eq!(&splits, &exact);
            let want = cpu::merge_keys(&a, &b, crate::Less);
            let mut got = Vec::new();
            for p in 0..diags.len() - 1 {
                let (d0, d1, a0, a1) = (diags[p], diags[p + 1], splits[p], splits[p + 1]);
                got.extend(cpu::merge_keys(&a[a0..a1], &b[d0 - a0..d1 - a1], crate::Less));
            }
            prop_assert_eq!(got, want);
        }

        /// Any splits (a comparator that is not a strict weak order) are clamped into ranges
        /// inside the inputs that tile the output.
        #[test]
        fn clamped_splits_always_tile_the_output(
            a_len in 0usize..200,
            b_len in 0usize..200,
            spacing in 1usize..40,
            raw in proptest::collection::vec(0usize..500, 0..20),
        ) {
            let n = a_len + b_len;
            let diags: Vec<usize> = (0..partition_count(n, spacing)).map(|p| (p * spacing).min(n)).collect();
            let mut splits: Vec<usize> = (0..diags.len()).map(|i| raw.get(i).copied().unwrap_or(i * 7)).collect();
            clamp_splits(&mut splits, &diags, a_len, b_len);
            prop_assert_eq!((splits[0], *splits.last().unwrap()), (0, a_len));
            for p in 0..diags.len() - 1 {
                let (d0, d1, a0, a1) = (diags[p], diags[p + 1], splits[p], splits[p + 1]);
                prop_assert!(a0 <= a1 && a1 <= a_len);
                prop_assert!(d0 - a0 <= d1 - a1 && d1 - a1 <= b_len);
            }
        }
    }

    #[test]
    fn a_2_26_u32_sort_runs_eight_chunks() {
        let plan = SortPlan::new(1 << 26, 4, SORT_CHUNK_BYTES);
        assert_eq!((plan.chunks, plan.chunk, plan.levels()), (8, 1 << 23, 3));
        assert_eq!(SortPlan::new(5, 4, SORT_CHUNK_BYTES).chunks, 1);
    }
}

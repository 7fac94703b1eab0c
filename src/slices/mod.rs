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
//!   buffer as large are on the device at once. Inputs that do not fit with the sort's
//!   temporaries (in the device's free memory, or under [`Gpu::with_memory_limit`]) are
//!   sorted *externally*: device-sized runs sorted into host buffers of the same size as the
//!   input, then merged in one pass, batch by batch, by the multiway merge, up to three
//!   batches in flight. An error before the merge leaves the slices as they were; one
//!   during the merge (which writes them) leaves them holding the same items, the sorted runs
//!   copied back, never a mix of merged batches and stale data. The `_with_progress`
//!   variants report the bytes moved.
//! - **Merges** ([`Gpu::merge_keys`], [`Gpu::merge_pairs`]) cut the output into ranges by
//!   Merge Path on the host; each range's inputs are uploaded, merged and downloaded on their
//!   own, three ranges in flight, so uploads and downloads run at once and the inputs may be
//!   larger than the device.
//! - **Multiway merges** ([`Gpu::merge_multiway_keys`], [`Gpu::merge_multiway_pairs`]) cut the
//!   output into batches, split every input at each batch boundary on the host threads, and
//!   upload, merge (one pass of the multiway kernels) and download each batch, a few in flight:
//!   the external sort's merge, on the caller's inputs.
//! - **Searches, multiset operations and segmented sorts** upload their inputs, run the device
//!   algorithm and download the result (all on the device at once).
//!
//! Bad input is an `Err` before anything is copied, and the slices are left as they were; an
//! error inside the pipeline waits for every copy in flight before it returns. Host slices
//! cannot overlap (Rust's borrows), so [`Error::Overlap`] does not arise here.

mod batches;
mod external;
mod merge;
mod multiway;
mod plan;
mod positions;
mod progress;
mod resident;
mod sort;

use crate::device::Gpu;
use crate::error::Result;
#[cfg(doc)]
use crate::error::Error;
use crate::checks::{check_indices, check_load_balancing, check_starts, check_merge_pairs, check_output, check_pair_inputs, check_values};
use crate::device::buffers::CheckedBuffer;
use cudarc::driver::CudaSlice;
use crate::load_balancing::{launch_load_balancing, LoadBalancingOutput};
use crate::reduce::{check_reduce, launch_segmented_reduce, Reduction, Segments};
use crate::runs::{check_lengths, runs_on, ReduceValues, RunOutputs};
use crate::key::{value_carry, value_word, Comparator, Greater, Key, Less, Value, ValueCarry};
use crate::search::{check_search, SearchOutput};
use crate::types::{Bound, SetOperation, SortIndex};
use merge::merge_host;
pub(crate) use plan::Lanes;
pub(crate) use sort::sort_host_to_device;
use plan::bytes_mut;
use external::{external_plan, sort_external};
use plan::in_core_bytes_now;
use progress::Progress;
use sort::{sort_in_core, Carried, HostItems};

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

/// The runs a host-slice sort of `n` keys of `key_bytes` (values of `word` bytes) makes on
/// `gpu` with its budget now (free memory, [`Gpu::with_memory_limit`]) and this thread's
/// [`with_work_bytes`]: 1 for a sort in core, `Err(TooLargeForDevice)` where no run fits or
/// more than 1,024 runs would be needed. A run holds about half the budget (docs/guide.md,
/// "Host slices on the GPU"); tests choose a cap by the runs it forces.
pub fn sort_runs(gpu: &Gpu, n: usize, key_bytes: usize, word: usize) -> Result<usize> {
    let budget = gpu.device_budget()?;
    if n == 0 || in_core_bytes_now(n, key_bytes, word) <= budget {
        return Ok(1);
    }
    Ok(external_plan(gpu.compute_capability()?, n, key_bytes, word, budget)?.runs)
}

/// The sort of `keys` (and `carried`) on the GPU: in core where the keys and the sort's
/// temporaries fit the device budget ([`sort_in_core`]), else as sorted runs merged from host
/// memory ([`sort_external`]). `progress` hears of the bytes moved.
fn sort_host<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut [K], carried: Carried<'_>, comp: C, progress: Option<&mut dyn FnMut(u64, u64)>) -> Result<()> {
    let n = keys.len();
    if n == 0 {
        return Ok(());
    }
    // A record has no kernels of its own: its sort is the u64 sort of its packed orders, or
    // under a custom comparator the sort of its addresses on the device.
    if let Some(order) = &C::RECORD {
        if order.custom().is_some() {
            let moved = carried.moved_bytes(n, std::mem::size_of::<K>());
            let mut progress = Progress::new(progress, moved);
            let result = gpu.sort_records_resident(keys, carried, order);
            if result.is_ok() {
                progress.advance(moved);
            }
            return progress.finish(result);
        }
        return match order.descending {
            false => sort_records_host(gpu, keys, carried, order, Less, progress),
            true => sort_records_host(gpu, keys, carried, order, Greater, progress),
        };
    }
    gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), carried.word());
    let budget = gpu.device_budget()?;
    if in_core_bytes_now(n, kb, word) <= budget {
        let mut progress = Progress::new(progress, carried.moved_bytes(n, kb));
        let result = sort_in_core::<K, C>(gpu, HostItems::in_place(bytes_mut(keys), kb, carried), comp, &mut progress);
        return progress.finish(result);
    }
    sort_external::<K, C>(gpu, keys, carried, comp, budget, progress)
}

/// The sort of records wider than the kernels' key tiles ([`Comparator::RECORD`]) in host
/// memory: their packed orders computed on host threads, sorted on the GPU as `u64` keys by
/// `U` (the packed order's direction) with the records' positions (in core or externally, as
/// any sort), one stable sort per word of the order from the last, then the records and their
/// values gathered on host threads. The caller's data changes only once the sort has succeeded;
/// `progress` reports the last word's sort (an order of one word: the whole sort).
fn sort_records_host<K: Key, U: Comparator<u64>>(
    gpu: &Gpu,
    keys: &mut [K],
    carried: Carried<'_>,
    order: &crate::key::RecordOrder,
    direction: U,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<()> {
    let n = keys.len();
    let original = positions::try_copy(keys)?;
    // Positions: the caller's indices where it asked for them, else our own (u64 storage, so
    // the bytes are aligned for either width).
    let word = if n <= u32::MAX as usize { 4 } else { 8 };
    let (mut own, values) = match carried {
        Carried::Indices(out, w) => {
            sort_record_words(gpu, &original, order, out, w, direction, progress)?;
            positions_gather_records(&original, out, w, keys);
            return Ok(());
        }
        Carried::None => (positions::try_collect((n * word).div_ceil(8), |_| 0u64)?, None),
        Carried::Values(v, w) => (positions::try_collect((n * word).div_ceil(8), |_| 0u64)?, Some((v, w))),
    };
    let original_values = match &values {
        Some((v, _)) => Some(positions::try_copy(v)?),
        None => None,
    };
    let own = &mut bytes_mut(&mut own)[..n * word];
    sort_record_words(gpu, &original, order, own, word, direction, progress)?;
    positions_gather_records(&original, own, word, keys);
    if let (Some((v, w)), Some(src)) = (values, original_values) {
        positions::gather_words(&src, own, word, v, w);
    }
    Ok(())
}

/// The positions (`word`-byte integers, as bytes) that sort `records` by `order`: the last
/// word's packed orders sorted with their indices, then each earlier word's, packed from the
/// records in the order so far, sorted stably with the positions as values.
fn sort_record_words<K: Key, U: Comparator<u64>>(
    gpu: &Gpu,
    records: &[K],
    order: &crate::key::RecordOrder,
    positions: &mut [u8],
    word: usize,
    direction: U,
    mut progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<()> {
    let n = records.len();
    let words = order.words();
    let mut packed: Vec<u64> = positions::try_collect(n, |_| 0)?;
    for w in (0..words).rev() {
        let report = if w == 0 { progress.take() } else { None };
        if w + 1 == words {
            positions::par_zip(&mut packed, records, |o, r| *o = order.pack(bytemuck::bytes_of(r), w));
            sort_host::<u64, U>(gpu, &mut packed, Carried::Indices(&mut *positions, word), direction, report)?;
        } else {
            // Word w of each record in the order so far, packed on host threads.
            let pack = |o: &mut u64, p: u64| *o = order.pack(bytemuck::bytes_of(&records[p as usize]), w);
            match word {
                4 => positions::par_zip(&mut packed, bytemuck::cast_slice::<u8, u32>(positions), |o, &p| pack(o, p as u64)),
                _ => positions::par_zip(&mut packed, bytemuck::cast_slice::<u8, u64>(positions), |o, &p| pack(o, p)),
            }
            sort_host::<u64, U>(gpu, &mut packed, Carried::Values(&mut *positions, word), direction, report)?;
        }
    }
    Ok(())
}

/// `keys[i] = original[position i]`, the positions `word`-byte integers held as bytes.
fn positions_gather_records<K: Key>(original: &[K], positions: &[u8], word: usize, keys: &mut [K]) {
    match word {
        4 => positions::gather(original, &[], bytemuck::cast_slice::<u8, u32>(positions), keys),
        _ => positions::gather(original, &[], bytemuck::cast_slice::<u8, u64>(positions), keys),
    }
}

/// [`Gpu::sort_pairs`]: the values checked, then [`sort_host`] with the values, or with their
/// positions and a gather where they are carried by position.
fn sort_pairs_host<K: Key, V: Value, C: Comparator<K>>(gpu: &Gpu, keys: &mut [K], values: &mut [V], comp: C, progress: Option<&mut dyn FnMut(u64, u64)>) -> Result<()> {
    check_values("values", keys.len(), values.len())?;
    match const { value_carry::<V>() } {
        ValueCarry::Words(word) => sort_host::<K, C>(gpu, keys, Carried::Values(bytes_mut(values), word), comp, progress),
        ValueCarry::Positions(_) if keys.len() <= u32::MAX as usize => sort_by_positions::<K, V, u32, C>(gpu, keys, values, comp, progress),
        ValueCarry::Positions(_) => sort_by_positions::<K, V, u64, C>(gpu, keys, values, comp, progress),
    }
}

/// A pair sort carrying the values by position: the keys sorted with their positions as `P`,
/// then the values gathered on the host. The values change only once the keys are sorted.
fn sort_by_positions<K: Key, V: Value, P: SortIndex + Into<u64>, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut [K],
    values: &mut [V],
    comp: C,
    progress: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<()> {
    let mut order: Vec<P> = positions::try_collect(keys.len(), |_| P::zeroed())?;
    let original = positions::try_copy(values)?;
    sort_host::<K, C>(gpu, keys, Carried::Indices(bytes_mut(&mut order), std::mem::size_of::<P>()), comp, progress)?;
    positions::gather(&original, &[], &order, values);
    Ok(())
}

/// [`Gpu::sort_indices`]: the indices checked, then [`sort_host`].
fn sort_indices_host<K: Key, I: SortIndex, C: Comparator<K>>(gpu: &Gpu, keys: &mut [K], indices: &mut [I], comp: C, progress: Option<&mut dyn FnMut(u64, u64)>) -> Result<()> {
    check_indices(keys.len(), indices.len(), I::MAX_COUNT)?;
    sort_host::<K, C>(gpu, keys, Carried::Indices(bytes_mut(indices), std::mem::size_of::<I>()), comp, progress)
}

impl Gpu {
    /// Sorts `keys` (host memory: a `Vec`, an array, a [`PinnedBuffer`]) in place on the GPU
    /// by `comp`, stably, and returns when they are sorted. As [`crate::sort_keys`], any length
    /// that fits in host memory: where the keys and the sort's temporaries (about twice the
    /// keys) do not fit in device memory, the sort runs externally (sorted runs in a host
    /// buffer as large as the keys, then one merge pass; [`Error::HostOutOfMemory`] if that
    /// buffer cannot be had). See [`crate::slices`] for how it streams.
    pub fn sort_keys<K: Key, C: Comparator<K>>(&self, keys: &mut [K], comp: C) -> Result<()> {
        sort_host::<K, C>(self, keys, Carried::None, comp, None)
    }

    /// [`Gpu::sort_keys`] calling `progress(bytes done, bytes total)` on this thread as the
    /// data moves (the bytes copied to and from the device; an external sort moves each byte
    /// four times). A panic in `progress` is resumed once the sort's copies and kernels have
    /// finished, with the keys left as an error would leave them.
    pub fn sort_keys_with_progress<K: Key, C: Comparator<K>>(&self, keys: &mut [K], comp: C, mut progress: impl FnMut(u64, u64)) -> Result<()> {
        sort_host::<K, C>(self, keys, Carried::None, comp, Some(&mut progress))
    }

    /// Sorts `keys` in place on the GPU by `comp`, stably, moving `values` (host memory, the
    /// keys' length: [`Error::LengthMismatch`] otherwise; any [`Value`]) with their keys.
    pub fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(&self, keys: &mut [K], values: &mut [V], comp: C) -> Result<()> {
        sort_pairs_host(self, keys, values, comp, None)
    }

    /// [`Gpu::sort_pairs`] with a `progress` callback as [`Gpu::sort_keys_with_progress`].
    pub fn sort_pairs_with_progress<K: Key, V: Value, C: Comparator<K>>(&self, keys: &mut [K], values: &mut [V], comp: C, mut progress: impl FnMut(u64, u64)) -> Result<()> {
        sort_pairs_host(self, keys, values, comp, Some(&mut progress))
    }

    /// Sorts `keys` in place on the GPU by `comp`, stably, and writes to `indices` (the keys'
    /// length) the original position of each sorted key. [`Error::TooLarge`] for `u32` indices
    /// past 2^32 keys.
    pub fn sort_indices<K: Key, I: SortIndex, C: Comparator<K>>(&self, keys: &mut [K], indices: &mut [I], comp: C) -> Result<()> {
        sort_indices_host(self, keys, indices, comp, None)
    }

    /// Writes to `indices` (the keys' length) the positions that sort `keys` by `comp`, stably,
    /// leaving the keys as they are (an argsort): `keys[indices[0]]`, `keys[indices[1]]`, ...
    /// are in order. As [`Gpu::sort_indices`] on a copy of the keys (made in host memory, so
    /// it takes the keys' size there too).
    pub fn argsort<K: Key, I: SortIndex, C: Comparator<K>>(&self, keys: &[K], indices: &mut [I], comp: C) -> Result<()> {
        check_values("indices", keys.len(), indices.len())?;
        sort_indices_host(self, &mut keys.to_vec(), indices, comp, None)
    }

    /// [`Gpu::sort_indices`] with a `progress` callback as [`Gpu::sort_keys_with_progress`].
    pub fn sort_indices_with_progress<K: Key, I: SortIndex, C: Comparator<K>>(&self, keys: &mut [K], indices: &mut [I], comp: C, mut progress: impl FnMut(u64, u64)) -> Result<()> {
        sort_indices_host(self, keys, indices, comp, Some(&mut progress))
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
        let total = check_merge_pairs((a_keys.len(), a_values.len()), (b_keys.len(), b_values.len()), out_keys.len(), out_values.len())?;
        let out_values = &mut out_values[..total];
        match const { value_carry::<V>() } {
            ValueCarry::Words(word) => {
                let values = (bytemuck::cast_slice(a_values), bytemuck::cast_slice(b_values), bytes_mut(out_values), word);
                merge_host::<K, C>(self, a_keys, b_keys, &mut out_keys[..total], Some(values), comp)
            }
            ValueCarry::Positions(_) if total <= u32::MAX as usize => self.merge_by_positions::<K, V, u32, C>(a_keys, a_values, b_keys, b_values, &mut out_keys[..total], out_values, comp),
            ValueCarry::Positions(_) => self.merge_by_positions::<K, V, u64, C>(a_keys, a_values, b_keys, b_values, &mut out_keys[..total], out_values, comp),
        }
    }

    /// [`Gpu::merge_pairs`] carrying the values by position (A's `0..`, then B's), gathered on
    /// the host after the merge.
    #[allow(clippy::too_many_arguments)]
    fn merge_by_positions<K: Key, V: Value, P: SortIndex + Into<u64> + TryFrom<usize>, C: Comparator<K>>(
        &self,
        a_keys: &[K],
        a_values: &[V],
        b_keys: &[K],
        b_values: &[V],
        out_keys: &mut [K],
        out_values: &mut [V],
        comp: C,
    ) -> Result<()> {
        let (inputs, mut order) = positions::counting_and_order::<P>(out_keys.len())?;
        let (pa, pb) = inputs.split_at(a_keys.len());
        let values = (bytemuck::cast_slice(pa), bytemuck::cast_slice(pb), bytes_mut(&mut order), std::mem::size_of::<P>());
        merge_host::<K, C>(self, a_keys, b_keys, out_keys, Some(values), comp)?;
        positions::gather(a_values, b_values, &order, out_values);
        Ok(())
    }

    /// Writes to `segments[i]` the segment of each of the `count` work items (host slices),
    /// computed on the GPU; as [`crate::load_balancing_search`], with the starts checked as
    /// [`crate::host::load_balancing_search`] checks them. The starts and the segments (and
    /// ranks) must fit the device together.
    pub fn load_balancing_search<I: SortIndex>(&self, count: usize, starts: &[I], segments: &mut [I]) -> Result<()> {
        check_load_balancing(count, starts.len(), I::MAX_COUNT, &[("segments", segments.len())])?;
        check_starts(starts, count)?;
        self.load_balancing_host(starts, &mut segments[..count], None)
    }

    /// [`Gpu::load_balancing_search`] writing also each item's rank in its segment; as
    /// [`crate::load_balancing_search_ranks`].
    pub fn load_balancing_search_ranks<I: SortIndex>(&self, count: usize, starts: &[I], segments: &mut [I], ranks: &mut [I]) -> Result<()> {
        check_load_balancing(count, starts.len(), I::MAX_COUNT, &[("segments", segments.len()), ("ranks", ranks.len())])?;
        check_starts(starts, count)?;
        self.load_balancing_host(starts, &mut segments[..count], Some(&mut ranks[..count]))
    }

    /// Interval expand on the GPU (host slices): `out[i]` the value of item `i`'s segment; as
    /// [`crate::interval_expand`], with the starts checked as
    /// [`crate::host::load_balancing_search`] checks them. The starts, the values and the
    /// output must fit the device together.
    pub fn interval_expand<I: SortIndex, V: Value>(&self, count: usize, starts: &[I], values: &[V], out: &mut [V]) -> Result<()> {
        check_load_balancing(count, starts.len(), I::MAX_COUNT, &[("out", out.len())])?;
        check_values("values", starts.len(), values.len())?;
        check_starts(starts, count)?;
        if count == 0 {
            return Ok(());
        }
        let value_bytes = std::mem::size_of::<V>();
        let launch = |gpu: &Gpu, starts: &CheckedBuffer<'_>, values, out| launch_load_balancing(gpu, std::mem::size_of::<I>(), count, starts, LoadBalancingOutput::Expand { values, out, value_bytes });
        let expanded = self.load_balancing_on_device(starts, Some(bytemuck::cast_slice::<V, u8>(values)), count * value_bytes, launch)?;
        self.download_into(&expanded, bytes_mut(&mut out[..count]))
    }

    /// Segmented reduction on the GPU (host slices): `out[s]` the fold of segment `s`'s values;
    /// as [`crate::segmented_reduce`], with the starts checked as
    /// [`crate::host::load_balancing_search`] checks them. The starts, the values and the
    /// output must fit the device together.
    pub fn segmented_reduce<K: Key, I: SortIndex, C: Comparator<K>>(&self, starts: &[I], values: &[K], out: &mut [K], reduction: Reduction, empty: K, comp: C) -> Result<()> {
        let _ = comp;
        check_reduce::<K>(values.len(), starts.len(), out.len(), I::MAX_COUNT, reduction)?;
        check_starts(starts, values.len())?;
        if starts.is_empty() {
            return Ok(());
        }
        let segments = starts.len();
        let launch = |gpu: &Gpu, starts: &CheckedBuffer<'_>, values_ptr, out_ptr| launch_segmented_reduce::<K, C>(gpu, std::mem::size_of::<I>(), Segments::Starts(starts), values_ptr, values.len(), out_ptr, reduction, empty);
        let reduced = self.load_balancing_on_device(starts, Some(bytemuck::cast_slice::<K, u8>(values)), segments * std::mem::size_of::<K>(), launch)?;
        self.download_into(&reduced, bytes_mut(&mut out[..segments]))
    }

    /// Writes the first key of each run of equal keys to `out` (host slices) and returns the
    /// number of runs, found on the GPU; as [`crate::unique`] (nothing written where `out` is
    /// too short).
    pub fn unique<K: Key, C: Comparator<K>>(&self, keys: &[K], out: &mut [K], comp: C) -> Result<usize> {
        let _ = comp;
        let n = keys.len();
        let (runs, run_keys, _) = self.runs_host::<K, C>(keys, None, 0, |k, _, _| Ok(RunOutputs { keys: ("out", k, n), lengths: None, values: None }))?;
        check_output("out", out.len(), runs)?;
        self.download_into(&run_keys.slice(..runs * std::mem::size_of::<K>()), bytes_mut(&mut out[..runs]))?;
        Ok(runs)
    }

    /// Each run's first key and length (host slices), found on the GPU; as
    /// [`crate::run_length_encode`].
    pub fn run_length_encode<K: Key, I: SortIndex, C: Comparator<K>>(&self, keys: &[K], out_keys: &mut [K], lengths: &mut [I], comp: C) -> Result<usize> {
        let _ = comp;
        check_lengths::<I>(keys.len())?;
        let (n, word) = (keys.len(), std::mem::size_of::<I>());
        let (runs, run_keys, run_lengths) = self.runs_host::<K, C>(keys, None, word, |k, l, _| Ok(RunOutputs { keys: ("out_keys", k, n), lengths: Some((l, n, word)), values: None }))?;
        check_output("out_keys", out_keys.len(), runs)?;
        check_output("lengths", lengths.len(), runs)?;
        self.download_into(&run_keys.slice(..runs * std::mem::size_of::<K>()), bytes_mut(&mut out_keys[..runs]))?;
        self.download_into(&run_lengths.slice(..runs * word), bytes_mut(&mut lengths[..runs]))?;
        Ok(runs)
    }

    /// Each run's first key and its values' fold (host slices), on the GPU; as
    /// [`crate::reduce_by_key`].
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_by_key<K: Key, V: Key, C: Comparator<K>, D: Comparator<V>>(&self, keys: &[K], values: &[V], out_keys: &mut [K], out_values: &mut [V], reduction: Reduction, comp: C, value_order: D) -> Result<usize> {
        let _ = (comp, value_order);
        check_values("values", keys.len(), values.len())?;
        let (n, vb) = (keys.len(), std::mem::size_of::<V>());
        let outputs = |k, o, v| Ok(RunOutputs { keys: ("out_keys", k, n), lengths: None, values: Some(ReduceValues::new::<V, D>(v, (o, n), reduction)?) });
        let (runs, run_keys, folds) = self.runs_host::<K, C>(keys, Some(bytemuck::cast_slice::<V, u8>(values)), vb, outputs)?;
        check_output("out_keys", out_keys.len(), runs)?;
        check_output("out_values", out_values.len(), runs)?;
        self.download_into(&run_keys.slice(..runs * std::mem::size_of::<K>()), bytes_mut(&mut out_keys[..runs]))?;
        self.download_into(&folds.slice(..runs * vb), bytes_mut(&mut out_values[..runs]))?;
        Ok(runs)
    }

    /// The runs of host `keys` on the GPU: the keys (and `values`' bytes) uploaded, room for a
    /// run per key allocated (the keys', and `extra_bytes` a key for lengths or folds), and the
    /// outputs `outputs` makes of their addresses (keys, extra, values in) written. Returns the
    /// run count and both output buffers, to download.
    fn runs_host<K: Key, C: Comparator<K>>(
        &self,
        keys: &[K],
        values: Option<&[u8]>,
        extra_bytes: usize,
        outputs: impl FnOnce(u64, u64, u64) -> Result<RunOutputs>,
    ) -> Result<(usize, CudaSlice<u8>, CudaSlice<u8>)> {
        let (n, kb) = (keys.len(), std::mem::size_of::<K>());
        let keys_on_device = self.upload(bytemuck::cast_slice::<K, u8>(keys))?;
        let values_on_device = values.map(|v| self.upload(v)).transpose()?;
        let (mut keys_out, mut extra_out) = (self.alloc_zeros::<u8>(n.max(1) * kb)?, self.alloc_zeros::<u8>((n * extra_bytes).max(1))?);
        let runs = {
            // Fresh allocations: aligned for any key, and apart from each other.
            let keys_in = self.input("keys", &keys_on_device, 1)?;
            let values_in = values_on_device.as_ref().map(|v| self.input("values", v, 1)).transpose()?;
            let (k_out, e_out) = (self.output("out_keys", &mut keys_out, 1, 0, &[])?, self.output("out", &mut extra_out, 1, 0, &[])?);
            let outputs = outputs(k_out.ptr, e_out.ptr, values_in.as_ref().map_or(0, |v| v.ptr))?;
            runs_on::<K, C>(self, &CheckedBuffer::raw(keys_in.ptr, n, kb), outputs)?
        };
        Ok((runs, keys_out, extra_out))
    }

    /// The search of the items `0..segments.len()` over `starts`, through device buffers: the
    /// segments (and ranks) written on the device and downloaded.
    fn load_balancing_host<I: SortIndex>(&self, starts: &[I], segments: &mut [I], ranks: Option<&mut [I]>) -> Result<()> {
        let (count, word) = (segments.len(), std::mem::size_of::<I>());
        if count == 0 {
            return Ok(());
        }
        let out_bytes = count * word * if ranks.is_some() { 2 } else { 1 };
        let with_ranks = ranks.is_some();
        let launch = |gpu: &Gpu, starts: &CheckedBuffer<'_>, _, segments| {
            let ranks = if with_ranks { segments + (count * word) as u64 } else { 0 };
            launch_load_balancing(gpu, word, count, starts, LoadBalancingOutput::Search { segments, ranks })
        };
        let out = self.load_balancing_on_device(starts, None, out_bytes, launch)?;
        self.download_into(&out.slice(..count * word), bytes_mut(segments))?;
        if let Some(ranks) = ranks {
            self.download_into(&out.slice(count * word..), bytes_mut(ranks))?;
        }
        Ok(())
    }

    /// A launch over host segments (the load-balancing family's): `starts` and `values` (bytes)
    /// uploaded, an output of `out_bytes` allocated, and `launch` given the device starts, the
    /// values' address (0 without) and the output's. Returns the output, to download.
    fn load_balancing_on_device<I: SortIndex>(
        &self,
        starts: &[I],
        values: Option<&[u8]>,
        out_bytes: usize,
        launch: impl FnOnce(&Gpu, &CheckedBuffer<'_>, u64, u64) -> Result<()>,
    ) -> Result<CudaSlice<u8>> {
        let word = std::mem::size_of::<I>();
        let starts_on_device = self.upload(bytemuck::cast_slice::<I, u8>(starts))?;
        let values_on_device = values.map(|v| self.upload(v)).transpose()?;
        let mut out = self.alloc_zeros::<u8>(out_bytes)?;
        {
            // Fresh allocations: aligned for any word, and apart from each other.
            let starts_in = self.input("starts", &starts_on_device, word)?;
            let values_in = values_on_device.as_ref().map(|v| self.input("values", v, 1)).transpose()?;
            let values_ptr = values_in.as_ref().map_or(0, |v| v.ptr);
            let out_buf = self.output("out", &mut out, 1, 0, &[&starts_in])?;
            launch(self, &CheckedBuffer::raw(starts_in.ptr, starts.len(), word), values_ptr, out_buf.ptr)?;
        }
        Ok(out)
    }

    /// Writes to `out[j]` the `bound` of `needles[j]` in `haystack` (host slices, both sorted
    /// by `comp`), computed on the GPU; as [`crate::sorted_search`].
    pub fn sorted_search<K: Key, I: SortIndex, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], bound: Bound, out: &mut [I], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<I>(needles.len(), haystack.len(), &[("out", out.len())])?;
        self.search_host::<K, C>(needles, haystack, SearchOutput::Bound(bound, std::mem::size_of::<I>()), &mut [bytes_mut(out)])
    }

    /// Both bounds of every needle, on the GPU: `lower[j]..upper[j]` is the range of haystack
    /// items equal to `needles[j]`; as [`crate::sorted_search_range`].
    pub fn sorted_search_range<K: Key, I: SortIndex, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], lower: &mut [I], upper: &mut [I], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<I>(needles.len(), haystack.len(), &[("lower", lower.len()), ("upper", upper.len())])?;
        self.search_host::<K, C>(needles, haystack, SearchOutput::Range(std::mem::size_of::<I>()), &mut [bytes_mut(lower), bytes_mut(upper)])
    }

    /// Writes to `counts[j]` how many haystack items equal `needles[j]`, on the GPU; as
    /// [`crate::sorted_search_count`].
    pub fn sorted_search_count<K: Key, I: SortIndex, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], counts: &mut [I], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<I>(needles.len(), haystack.len(), &[("counts", counts.len())])?;
        self.search_host::<K, C>(needles, haystack, SearchOutput::Count(std::mem::size_of::<I>()), &mut [bytes_mut(counts)])
    }

    /// Writes to `found[j]` 1 if `haystack` holds an item equal to `needles[j]`, else 0, on the
    /// GPU; as [`crate::sorted_search_contains`].
    pub fn sorted_search_contains<K: Key, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], found: &mut [u8], comp: C) -> Result<()> {
        let _ = comp;
        check_search::<u64>(needles.len(), haystack.len(), &[("found", found.len())])?;
        self.search_host::<K, C>(needles, haystack, SearchOutput::Contains, &mut [found])
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
        check_pair_inputs((a_keys.len(), a_values.len()), (b_keys.len(), b_values.len()))?;
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
        self.segments_host::<K, C>(keys, None, offsets, comp)
    }

    /// [`Gpu::sort_segments_keys`] moving `values` (the keys' length, [`Error::LengthMismatch`]
    /// otherwise) with their keys.
    pub fn sort_segments_pairs<K: Key, V: Value, C: Comparator<K>>(&self, keys: &mut [K], values: &mut [V], offsets: &[usize], comp: C) -> Result<()> {
        check_values("values", keys.len(), values.len())?;
        match const { value_carry::<V>() } {
            ValueCarry::Words(word) => self.segments_host::<K, C>(keys, Some((bytes_mut(values), word)), offsets, comp),
            // Positions as u64 (segmented sorts of more than 2^32 keys are rare; one width).
            ValueCarry::Positions(_) => {
                let mut order: Vec<u64> = positions::try_collect(keys.len(), |i| i as u64)?;
                let original = positions::try_copy(values)?;
                self.segments_host::<K, C>(keys, Some((bytes_mut(&mut order), 8)), offsets, comp)?;
                positions::gather(&original, &[], &order, values);
                Ok(())
            }
        }
    }

}

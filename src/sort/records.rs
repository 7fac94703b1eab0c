//! Device sorts by packed orders ([`Comparator::SORT_BY_WORDS`](crate::Comparator::SORT_BY_WORDS): records
//! wider than the kernels' key tiles, and derived keys of 9 to 16 bytes): each item's order packed
//! into `u64` words beside its position (`mergepath_record_order`), the (first word, position)
//! pairs sorted as `u64` keys, then each later word sorted only inside the runs of items tied on
//! the words before it (a segmented sort over the runs the tie kernels find on the device; where
//! no items tie, nothing), then the items (and their values) gathered by position, so
//! each item's bytes move once instead of once per pass. Records under a custom comparator
//! sort their device addresses instead of packed words, with the comparator's own module.
use crate::device::contract::{RecordHeadsParams, RecordOrderParams, RecordSegmentsParams, ComparatorHeadsParams, RECORD_TIES_CHUNKS, RECORD_TIES_THREADS};
use crate::device::kernels::Kernels;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::Result;
use crate::gather::{copy_device, launch_addresses, launch_gather, launch_iota, position_bytes};
use crate::key::{Greater, Key, Less, RecordOrder};
use crate::segmented::launch::launch_segmented;
use crate::segmented::offsets::TempOffsets;
use crate::segmented::plan::MAX_SEGMENT_OFFSETS;
use cudarc::driver::LaunchConfig;
use std::sync::Arc;

/// The kernels a record's sort runs: the packed order's `u64` ones.
pub(crate) fn record_kernels(gpu: &Gpu, order: &RecordOrder) -> Result<Arc<Kernels>> {
    order_key_kernels(gpu, order.descending)
}

/// The `u64` kernels that order records' order keys: of `Greater` where `descending`, else of
/// `Less`.
pub(crate) fn order_key_kernels(gpu: &Gpu, descending: bool) -> Result<Arc<Kernels>> {
    if descending {
        gpu.kernels::<u64, Greater>()
    } else {
        gpu.kernels::<u64, Less>()
    }
}


/// Enqueues the sort of `n >= 1` records of `K` by `order` from `keys_in` into `keys_out` (the
/// same address for a sort in place), values (input, output, word) following:
/// `sort_packed(kernels, packed orders, positions, position bytes)` sorts the n packed orders
/// in place as u64 keys by the kernels' order, the positions following.
pub(crate) fn sort_records<K: Key>(
    gpu: &Gpu,
    order: &RecordOrder,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    sort_packed: impl Fn(&Kernels, u64, u64, usize) -> Result<()>,
) -> Result<()> {
    let kernels = record_kernels(gpu, order)?;
    let record_bytes = std::mem::size_of::<K>();
    let word = position_bytes(n);
    // Temp: packed orders, positions, and the inputs a sort in place overwrites before it has
    // gathered from them.
    let mut layout = TempLayout::default();
    let order_at = layout.region(n * 8);
    let positions_at = layout.region(n * word);
    let records_at = layout.region(if keys_in == keys_out { n * record_bytes } else { 0 });
    let values_at = layout.region(match values {
        Some((vin, vout, w)) if vin == vout => n * w,
        _ => 0,
    });
    let ties_at = (order.words() > 1).then(|| TieRuns::regions(&mut layout, n));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let (packed, positions) = (base + order_at as u64, base + positions_at as u64);
    // The sources of the gathers: set aside where the sort is in place.
    let set_aside = |from: u64, at: usize, bytes: usize| -> Result<u64> {
        let to = base + at as u64;
        copy_device(gpu, to, from, bytes)?;
        Ok(to)
    };
    let records_src = if keys_in == keys_out { set_aside(keys_in, records_at, n * record_bytes)? } else { keys_in };
    let values_src = match values {
        Some((vin, vout, w)) if vin == vout => Some((set_aside(vin, values_at, n * w)?, vout, w)),
        other => other,
    };

    match order.custom() {
        Some(fatbin) => {
            // A custom comparator: the records' addresses sorted with their positions.
            launch_addresses(gpu, &kernels, packed, n, (records_src, record_bytes), order.descending)?;
            launch_iota(gpu, &kernels, positions, n, 0, word)?;
            sort_packed(&*gpu.address_kernels(fatbin)?, packed, positions, word)?;
        }
        None => {
            let words = PackedWords { gpu, kernels: &kernels, order, records: records_src, record_bytes, n, packed, positions, word, sort_packed };
            words.sort(ties_at.map(|at| TieRuns::at(base, at, n)).as_ref())?;
        }
    }
    launch_gather(gpu, &kernels, (records_src, n), None, (positions, word), keys_out, n, record_bytes)?;
    if let Some((vsrc, vout, w)) = values_src {
        launch_gather(gpu, &kernels, (vsrc, n), None, (positions, word), vout, n, w)?;
    }
    Ok(())
}

/// A sort's packed words: of `n` records at `records`, the words at `packed` and the positions
/// (`word` bytes each) at `positions`; `sort_packed` sorts them whole.
pub(super) struct PackedWords<'a, S> {
    pub gpu: &'a Gpu,
    pub kernels: &'a Kernels,
    pub order: &'a RecordOrder,
    pub records: u64,
    pub record_bytes: usize,
    pub n: usize,
    pub packed: u64,
    pub positions: u64,
    pub word: usize,
    pub sort_packed: S,
}

impl<S> PackedWords<'_, S> {
    /// Packs word `w` of each record's order; `gather`: of the record at positions[i] (else of
    /// record i, and positions[i] = i written). Nothing where `runs` (the tied runs' offsets on
    /// the device) hold no run.
    pub(super) fn pack(&self, w: usize, gather: bool, runs: Option<&TempOffsets>) -> Result<()> {
        let n = self.n;
        let ctas = n.div_ceil(256).min(1 << 16) as u32;
        let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let params = RecordOrderParams {
            records: self.records,
            record_bytes: self.record_bytes as i64,
            count: n as i64,
            fields: self.order.encoded(),
            num_fields: self.order.fields.len() as i64,
            word: w as i64,
            gather: gather as i64,
            order: self.packed,
            positions: self.positions,
            runs: runs.map_or(0, |r| r.ptr),
        };
        // SAFETY: `RecordOrderParams` is `mergepath_record_order_{4,8}`'s parameter struct; the
        // records hold n items of `record_bytes`, every element of the order (from the derive:
        // offsets and sizes inside the record, at most RECORD_MAX_FIELDS) is read in bounds and
        // aligned (offsets are multiples of the element size, the records of the record's
        // alignment), `packed` and `positions` hold n items (positions below n: written by the
        // first word's pass, permuted by the sorts since), the grid-stride loop stays below n,
        // and `runs` is null or the n + 1 offsets the tie kernels wrote before this launch.
        unsafe { self.gpu.launch(&self.kernels.record_order(self.word)?, cfg, &params) }
    }
}

impl<S: Fn(&Kernels, u64, u64, usize) -> Result<()>> PackedWords<'_, S> {
    /// Word `w` packed through the positions and sorted stably, whole or inside the runs at
    /// `offsets`.
    fn sort_word(&self, w: usize, runs: Option<&TempOffsets>) -> Result<()> {
        self.pack(w, true, runs)?;
        let (gpu, values) = (self.gpu, Some((self.positions, self.word)));
        match runs {
            None => (self.sort_packed)(self.kernels, self.packed, self.positions, self.word),
            Some(offsets) if self.order.descending => launch_segmented::<u64, Greater, _>(gpu, self.packed, values, self.n, offsets, Greater),
            Some(offsets) => launch_segmented::<u64, Less, _>(gpu, self.packed, values, self.n, offsets, Less),
        }
    }

    /// Leaves the positions in the order's order: the first word sorted whole, then each later
    /// word only inside the runs tied on the words before (`ties`: for orders of several words,
    /// left holding the runs tied on the words before the last).
    pub(super) fn sort(&self, ties: Option<&TieRuns>) -> Result<()> {
        self.pack(0, false, None)?;
        (self.sort_packed)(self.kernels, self.packed, self.positions, self.word)?;
        let Some(ties) = ties else { return Ok(()) };
        if self.n + 1 > MAX_SEGMENT_OFFSETS {
            // Possibly more runs than a segmented sort takes: every word sorted whole, the last
            // first, the first again last (stable, so ties keep the order so far).
            return (0..self.order.words()).rev().try_for_each(|w| self.sort_word(w, None));
        }
        // The runs' offsets stay on the device (n + 1 of them, empty segments at the end), so
        // nothing waits for the GPU; where no items tie, all segments are empty, and the word's
        // packing and segmented sort return at once.
        let runs = TempOffsets { ptr: ties.offsets, len: self.n + 1 };
        for w in 1..self.order.words() {
            ties.find(self.gpu, self.kernels, self.packed, w == 1)?;
            self.sort_word(w, Some(&runs))?;
        }
        Ok(())
    }
}

/// The device storage of the tie kernels, in a sort's temporary storage: a head flag per item,
/// a count per chunk, and the runs' offsets (at most n + 1).
pub(super) struct TieRuns {
    n: usize,
    heads: u64,
    chunk_heads: u64,
    pub offsets: u64,
}

impl TieRuns {
    /// Items per CTA of the tie kernels: at most RECORD_TIES_CHUNKS CTAs, none empty.
    fn chunk(n: usize) -> usize {
        n.div_ceil(n.div_ceil(RECORD_TIES_THREADS).min(RECORD_TIES_CHUNKS))
    }

    /// Adds the regions for at most `n` items to `layout` (a count per CTA: at most one per
    /// RECORD_TIES_THREADS items, at most RECORD_TIES_CHUNKS); returns their offsets.
    pub(super) fn regions(layout: &mut TempLayout, n: usize) -> [usize; 3] {
        let most_chunks = n.div_ceil(RECORD_TIES_THREADS).min(RECORD_TIES_CHUNKS);
        [layout.region(n), layout.region(most_chunks * 8), layout.region((n + 1) * 8)]
    }

    pub(super) fn at(base: u64, [heads, chunk_heads, offsets]: [usize; 3], n: usize) -> Self {
        let at = |offset: usize| base + offset as u64;
        TieRuns { n, heads: at(heads), chunk_heads: at(chunk_heads), offsets: at(offsets) }
    }

    /// The tie kernels' chunk of items and grid: one CTA a chunk.
    fn grid(&self) -> (usize, LaunchConfig) {
        let chunk = Self::chunk(self.n);
        (chunk, LaunchConfig { grid_dim: (self.n.div_ceil(chunk) as u32, 1, 1), block_dim: (RECORD_TIES_THREADS as u32, 1, 1), shared_mem_bytes: 0 })
    }

    /// The runs of items tied on every word sorted so far, `packed` holding the last of them
    /// (`first`: the first word), as segment offsets: the runs' starts, then n up to offsets[n].
    pub(super) fn find(&self, gpu: &Gpu, kernels: &Kernels, packed: u64, first: bool) -> Result<()> {
        let (chunk, cfg) = self.grid();
        let heads = RecordHeadsParams { order: packed, count: self.n as i64, chunk: chunk as i64, first: first as i64, heads: self.heads, chunk_heads: self.chunk_heads };
        // SAFETY: `RecordHeadsParams` is `mergepath_record_heads`'s parameter struct; `packed`
        // and `heads` hold n items, `chunk_heads` one per CTA (ceil(n / chunk) CTAs, at most
        // RECORD_TIES_CHUNKS), and each CTA stays inside its chunk.
        unsafe { gpu.launch(&kernels.record_heads()?, cfg, &heads) }?;
        self.segments(gpu, kernels)
    }

    /// The runs of keys equal under the comparator of `kernels` among the n keys at `keys`
    /// (the addresses of records under a custom comparator), as [`TieRuns::find`]'s.
    pub(super) fn find_by_comparator(&self, gpu: &Gpu, kernels: &Kernels, keys: u64) -> Result<()> {
        let (chunk, cfg) = self.grid();
        let heads = ComparatorHeadsParams { keys, count: self.n as i64, chunk: chunk as i64, heads: self.heads, chunk_heads: self.chunk_heads };
        // SAFETY: `ComparatorHeadsParams` is `mergepath_comparator_heads`'s parameter struct;
        // `keys` (keys of the module: for an address module, addresses of live records) and
        // `heads` hold n items, `chunk_heads` one per CTA, and each CTA stays inside its chunk.
        unsafe { gpu.launch(&kernels.comparator_heads()?, cfg, &heads) }?;
        self.segments(gpu, kernels)
    }

    /// The runs' offsets from the heads just found.
    fn segments(&self, gpu: &Gpu, kernels: &Kernels) -> Result<()> {
        let (chunk, cfg) = self.grid();
        let segments = RecordSegmentsParams { heads: self.heads, count: self.n as i64, chunk: chunk as i64, chunk_heads: self.chunk_heads, offsets: self.offsets };
        // SAFETY: `RecordSegmentsParams` is `mergepath_record_segments`'s parameter struct; the
        // heads and chunk counts are the ones just written over the same chunks (the same
        // grid), and `offsets` has room for n + 1 (at most n heads, then n up to offsets[n]).
        unsafe { gpu.launch(&kernels.record_segments()?, cfg, &segments) }
    }
}

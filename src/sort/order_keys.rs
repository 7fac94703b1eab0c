//! Records wider than the kernels' key tiles ([`Comparator::RECORD`](crate::Comparator::RECORD))
//! in the algorithms other than sorts: each record's order as one `u64` key, so merges,
//! searches, set operations, segmented sorts, multiway merges and runs run their `u64` kernels
//! on the keys (with the records' positions as values where records move) and gather the
//! records once.
//!
//! An order of one packed word is that word, ascending (descending for `Greater`). An order of
//! several words becomes each record's rank: the records sorted by their words (the record
//! sort's passes), the runs tied on every word found, each sorted record given its run's index
//! by a load-balancing search, and the ranks put back in the records' order by a sort of
//! (position, rank) pairs. Ranks ascend with the order and tie exactly where the records do.

use super::launch::launch_sort;
use super::records::{record_kernels, PackedWords, TieRuns};
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::gather::{copy_device, launch_gather, launch_iota, position_bytes, ValueSources};
use crate::key::{Greater, Key, Less, RecordOrder};
use crate::load_balancing::{launch_load_balancing, LoadBalancingOutput};
use crate::segmented::plan::MAX_SEGMENT_OFFSETS;

/// Runs `run(keys, descending)` where `keys` (a device address) holds one `u64` per record of
/// `inputs` (device addresses and counts of records of `K`), input after input, ordered as
/// the records are by the `u64` kernels of `Less` (`descending == false`) or `Greater`.
pub(crate) fn with_order_keys<K: Key, R>(gpu: &Gpu, order: &RecordOrder, inputs: &[(u64, usize)], run: impl FnOnce(u64, bool) -> Result<R>) -> Result<R> {
    let total: usize = inputs.iter().map(|i| i.1).sum();
    if total == 0 {
        return run(0, order.descending);
    }
    let mut layout = TempLayout::default();
    let keys_at = layout.region(total * 8);
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let keys = base + keys_at as u64;
    if order.words() == 1 {
        pack_first_words::<K>(gpu, order, inputs, keys)?;
        return run(keys, order.descending);
    }
    ranks::<K>(gpu, order, inputs, total, keys)?;
    run(keys, false)
}

/// What an algorithm on records' order keys reads and writes: the keys and positions `0..total`
/// (`word` bytes each) of the inputs, input after input, whether the keys' order is
/// descending, and room for `total` keys and `total` positions it may write.
pub(crate) struct OrderedPositions {
    pub keys: u64,
    pub descending: bool,
    pub positions: u64,
    pub word: usize,
    pub keys_out: u64,
    pub positions_out: u64,
}

/// The records of `sources` (of `K`) moved by an algorithm on their order keys: `run` writes
/// the positions of its outputs and returns how many and where; the records at those
/// positions are gathered into `out`, and the values of `values` (sources, output, bytes of a
/// value) into theirs. `out` may be the only source (in-place algorithms): the records (and
/// values) are set aside first.
pub(crate) fn move_records<K: Key>(
    gpu: &Gpu,
    order: &RecordOrder,
    sources: ValueSources,
    out: u64,
    values: Option<(ValueSources, u64, usize)>,
    run: impl FnOnce(&OrderedPositions) -> Result<(usize, u64)>,
) -> Result<()> {
    let kernels = record_kernels(gpu, order)?;
    let total = sources.a.1 + sources.b.map_or(0, |b| b.1);
    let record_bytes = std::mem::size_of::<K>();
    let inputs = [sources.a, sources.b.unwrap_or((0, 0))];
    with_order_keys::<K, _>(gpu, order, &inputs, |keys, descending| {
        let word = position_bytes(total);
        let in_place = sources.b.is_none() && sources.a.0 == out;
        let value_bytes = values.as_ref().map_or(0, |v| v.2);
        let mut layout = TempLayout::default();
        let regions = [total * word, total * word, total * 8, if in_place { total * record_bytes } else { 0 }, if in_place { total * value_bytes } else { 0 }];
        let [positions, positions_out, keys_out, records_aside, values_aside] = regions.map(|bytes| layout.region(bytes));
        let mut temp = gpu.temp(layout.bytes())?;
        let (base, _guard) = temp.device_ptr_mut();
        let at = |offset: usize| base + offset as u64;
        if total > 0 {
            launch_iota(gpu, &kernels, at(positions), total, 0, word)?;
        }
        let set_aside = |src: ValueSources, to: usize, bytes: usize| -> Result<ValueSources> {
            if !in_place || total == 0 {
                return Ok(src);
            }
            copy_device(gpu, at(to), src.a.0, total * bytes)?;
            Ok(ValueSources { a: (at(to), total), b: None })
        };
        let records = set_aside(sources, records_aside, record_bytes)?;
        let values = values.map(|(src, vout, bytes)| set_aside(src, values_aside, bytes).map(|src| (src, vout, bytes))).transpose()?;
        let ordered = OrderedPositions { keys, descending, positions: at(positions), word, keys_out: at(keys_out), positions_out: at(positions_out) };
        let (count, gathered) = run(&ordered)?;
        launch_gather(gpu, &kernels, records.a, records.b, (gathered, word), out, count, record_bytes)?;
        if let Some((src, vout, bytes)) = values {
            launch_gather(gpu, &kernels, src.a, src.b, (gathered, word), vout, count, bytes)?;
        }
        Ok(())
    })
}

/// Writes the one packed word of each record of `inputs` to `keys`, input after input.
fn pack_first_words<K: Key>(gpu: &Gpu, order: &RecordOrder, inputs: &[(u64, usize)], keys: u64) -> Result<()> {
    let kernels = record_kernels(gpu, order)?;
    let longest = inputs.iter().map(|i| i.1).max().unwrap_or(0);
    let word = position_bytes(longest);
    // The packing kernel writes each record's position too: a scratch region for them.
    let mut scratch = gpu.temp(longest * word)?;
    let (positions, _guard) = scratch.device_ptr_mut();
    let mut at = 0;
    for &(records, n) in inputs.iter().filter(|i| i.1 > 0) {
        let packed = keys + (at * 8) as u64;
        let words = PackedWords { gpu, kernels: &kernels, order, records, record_bytes: std::mem::size_of::<K>(), n, packed, positions, word, sort_packed: () };
        words.pack(0, false, None)?;
        at += n;
    }
    Ok(())
}

/// Writes each record's rank in `order` among the `total` records of `inputs` to `keys`
/// (`u64`s), input after input: the index of its run of records tied on every word, in
/// ascending order.
fn ranks<K: Key>(gpu: &Gpu, order: &RecordOrder, inputs: &[(u64, usize)], total: usize, keys: u64) -> Result<()> {
    if total + 2 > MAX_SEGMENT_OFFSETS {
        return Err(Error::TooLarge { what: "records of an order of several words outside sorts: at most 2^31 - 3 of them" });
    }
    let kernels = record_kernels(gpu, order)?;
    let (record_bytes, word) = (std::mem::size_of::<K>(), position_bytes(total));
    let several = inputs.iter().filter(|i| i.1 > 0).count() > 1;
    // The tie kernels' last pass runs over one item more, tied with the last: so not every
    // item heads a run, and the offsets they write are the runs' starts (where every item
    // heads one, they write no starts).
    let mut layout = TempLayout::default();
    let (packed_at, positions_at) = (layout.region((total + 1) * 8), layout.region(total * word));
    let records_at = layout.region(if several { total * record_bytes } else { 0 });
    let runs_at = layout.region((total + 1) * 8);
    let ties_at = TieRuns::regions(&mut layout, total + 1);
    let mut temp = gpu.temp(layout.bytes())?;
    let extra_head = ties_at[0] + total;
    gpu.stream().memset_zeros(&mut temp.view_mut::<u8>(extra_head + 1)?.slice_mut(extra_head..))?;
    let (base, _guard) = temp.device_ptr_mut();
    let at = |offset: usize| base + offset as u64;
    let (packed, positions, runs) = (at(packed_at), at(positions_at), at(runs_at));
    // The inputs one after another, where there are several.
    let records = match inputs.iter().find(|i| i.1 > 0) {
        Some(&(only, _)) if !several => only,
        _ => {
            let mut copied = 0;
            for &(from, n) in inputs {
                copy_device(gpu, at(records_at + copied * record_bytes), from, n * record_bytes)?;
                copied += n;
            }
            at(records_at)
        }
    };
    let sort_packed = |_: &Kernels, packed: u64, positions: u64, word: usize| match order.descending {
        true => launch_sort::<u64, Greater>(gpu, packed, packed, Some((positions, positions, word)), total, Greater),
        false => launch_sort::<u64, Less>(gpu, packed, packed, Some((positions, positions, word)), total, Less),
    };
    let words = PackedWords { gpu, kernels: &kernels, order, records, record_bytes, n: total, packed, positions, word, sort_packed };
    words.sort(Some(&TieRuns::at(base, ties_at, total)))?;
    // The runs tied on the last word too, over the items and one more equal to the last; each
    // sorted record's run; then the runs sorted by position: the records' order.
    copy_device(gpu, packed + (total * 8) as u64, packed + ((total - 1) * 8) as u64, 8)?;
    let ties = TieRuns::at(base, ties_at, total + 1);
    ties.find(gpu, &kernels, packed, false)?;
    let starts = CheckedBuffer::raw(ties.offsets, total + 2, 8);
    launch_load_balancing(gpu, 8, total + 1, &starts, LoadBalancingOutput::Search { segments: runs, ranks: 0 })?;
    match word {
        4 => launch_sort::<u32, Less>(gpu, positions, positions, Some((runs, runs, 8)), total, Less),
        _ => launch_sort::<u64, Less>(gpu, positions, positions, Some((runs, runs, 8)), total, Less),
    }?;
    copy_device(gpu, keys, runs, total * 8)
}

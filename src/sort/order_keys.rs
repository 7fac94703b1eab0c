//! Records wider than the kernels' key tiles ([`Comparator::RECORD`](crate::Comparator::RECORD))
//! in the algorithms other than sorts: one `u64` key per record and a module whose kernels
//! order those keys as the records ([`with_comparable_keys`]), so merges, searches, set
//! operations, partitions, segmented sorts, multiway merges and runs run that module's kernels
//! on the keys (with the records' positions as values where records move) and gather the
//! records once.
//!
//! An order of one packed word: that word, under the `u64` kernels of its direction. An order
//! with a module on the records' device addresses (a custom comparator's, or a field order's
//! of several words): the addresses, under that module, which compares the records they point
//! to.
//!
//! [`with_order_keys`] gives keys that compare as plain `u64`s (the testing kit reads them on
//! the host): the packed word, or each record's rank. For ranks the records are put in order
//! by their words (the first word sorted, each later word sorted only inside the runs tied on
//! the words before, as the record sort does), the runs tied on every word found, each record
//! given its run's index by a load-balancing search, and the ranks scattered back to the
//! records' positions. Ranks ascend with the order and tie exactly where the records do.
//! Under a custom comparator the records' addresses are sorted instead of their words, and the
//! runs are those of records equal under it.

use super::launch::{launch_sort, launch_sort_positions};
use super::records::{order_key_kernels, record_kernels, PackedWords, TieRuns};
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::gather::{copy_device, copy_one_after_another, launch_addresses, launch_gather, launch_iota, launch_scatter, position_bytes, ValueSources};
use crate::key::{Greater, Key, Less, RecordOrder};
use crate::load_balancing::{launch_load_balancing, LoadBalancingOutput};
use crate::segmented::plan::MAX_SEGMENT_OFFSETS;

/// Runs `run(keys, descending)` where `keys` (a device address) holds one `u64` per record of
/// `inputs` (device addresses and counts of records of `K`), input after input, ordered as the
/// records are by the `u64` kernels of `Less` (`descending == false`) or `Greater`.
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
    match order.custom() {
        Some(fatbin) => ranks_by_address::<K>(gpu, order, fatbin, inputs, keys)?,
        None if order.words() == 1 => {
            pack_first_words::<K>(gpu, order, inputs, keys)?;
            return run(keys, order.descending);
        }
        None => ranks::<K>(gpu, order, inputs, keys)?,
    }
    run(keys, false)
}

/// Runs `run(keys, kernels)` where `keys` holds one `u64` per record of `inputs` (as
/// [`with_order_keys`]), input after input, and `kernels` is the module whose kernels order
/// the keys as `order` orders the records: the records' device addresses under the order's
/// module on addresses (one pass writes them; nothing is ranked), else the order keys under
/// the `u64` kernels of their direction. For algorithms that only compare the keys with
/// `kernels` (merges, searches, set operations, partitions, segmented sorts).
pub(crate) fn with_comparable_keys<K: Key, R>(gpu: &Gpu, order: &RecordOrder, inputs: &[(u64, usize)], run: impl FnOnce(u64, &Kernels) -> Result<R>) -> Result<R> {
    let total: usize = inputs.iter().map(|i| i.1).sum();
    let Some(fatbin) = order.by_address.filter(|_| total > 0) else {
        return with_order_keys::<K, _>(gpu, order, inputs, |keys, descending| run(keys, &*order_key_kernels(gpu, descending)?));
    };
    let kernels = record_kernels(gpu, order)?;
    let mut temp = gpu.temp(total * 8)?;
    let (keys, _guard) = temp.device_ptr_mut();
    let mut at = keys;
    for &(records, n) in inputs.iter().filter(|i| i.1 > 0) {
        launch_addresses(gpu, &kernels, at, n, (records, std::mem::size_of::<K>()), order.descending)?;
        at += (n * 8) as u64;
    }
    run(keys, &*gpu.address_kernels(fatbin)?)
}

/// What an algorithm on records' order keys reads and writes: the keys and positions `0..total`
/// (`word` bytes each) of the inputs, input after input, the module whose kernels order the
/// keys, and room for `total` keys and `total` positions it may write.
pub(crate) struct OrderedPositions<'a> {
    pub keys: u64,
    pub kernels: &'a Kernels,
    pub positions: u64,
    pub word: usize,
    pub keys_out: u64,
    pub positions_out: u64,
}

/// The records of `sources` (of `K`) moved by an algorithm on their comparable keys
/// ([`with_comparable_keys`]): `run` writes the positions of its outputs and returns how
/// many and where; the records at those positions are gathered into `out`, and the values of
/// `values` (sources, output, bytes of a value) into theirs. `out` may be the only source
/// (in-place algorithms): the records (and values) are set aside first.
pub(crate) fn move_records<K: Key>(
    gpu: &Gpu,
    order: &RecordOrder,
    sources: ValueSources,
    out: u64,
    values: Option<(ValueSources, u64, usize)>,
    run: impl FnOnce(&OrderedPositions<'_>) -> Result<(usize, u64)>,
) -> Result<()> {
    let kernels = record_kernels(gpu, order)?;
    let total = sources.a.1 + sources.b.map_or(0, |b| b.1);
    let record_bytes = std::mem::size_of::<K>();
    let inputs = [sources.a, sources.b.unwrap_or((0, 0))];
    with_comparable_keys::<K, _>(gpu, order, &inputs, |keys, key_kernels| {
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
        let ordered = OrderedPositions { keys, kernels: key_kernels, positions: at(positions), word, keys_out: at(keys_out), positions_out: at(positions_out) };
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

/// Writes each record's rank in `order` among the records of `inputs` to `keys` (`u64`s),
/// input after input: the index of its run of records tied on every word, in ascending order.
fn ranks<K: Key>(gpu: &Gpu, order: &RecordOrder, inputs: &[(u64, usize)], keys: u64) -> Result<()> {
    let lengths: Vec<usize> = inputs.iter().map(|i| i.1).filter(|&n| n > 0).collect();
    let total: usize = lengths.iter().sum();
    if total + 2 > MAX_SEGMENT_OFFSETS {
        return Err(Error::TooLarge { what: "records of an order of several words outside sorts: at most 2^31 - 3 of them" });
    }
    let kernels = record_kernels(gpu, order)?;
    let (record_bytes, word) = (std::mem::size_of::<K>(), position_bytes(total));
    // The tie kernels' last pass runs over one item more, tied with the last: so not every
    // item heads a run, and the offsets they write are the runs' starts (where every item
    // heads one, they write no starts).
    let mut layout = TempLayout::default();
    let (packed_at, positions_at) = (layout.region((total + 1) * 8), layout.region(total * word));
    let records_at = layout.region(if lengths.len() > 1 { total * record_bytes } else { 0 });
    let runs_at = layout.region((total + 1) * 8);
    let ties_at = TieRuns::regions(&mut layout, total + 1);
    let mut temp = gpu.temp(layout.bytes())?;
    let extra_head = ties_at[0] + total;
    gpu.stream().memset_zeros(&mut temp.view_mut::<u8>(extra_head + 1)?.slice_mut(extra_head..))?;
    let (base, _guard) = temp.device_ptr_mut();
    let at = |offset: usize| base + offset as u64;
    let (packed, positions, runs) = (at(packed_at), at(positions_at), at(runs_at));
    let records = match inputs.iter().find(|i| i.1 > 0) {
        Some(&(only, _)) if lengths.len() == 1 => only,
        _ => {
            copy_one_after_another(gpu, inputs.iter().copied(), at(records_at), record_bytes)?;
            at(records_at)
        }
    };
    let first_word = |_: &Kernels, packed: u64, positions: u64, word: usize| sort_words(gpu, order, packed, positions, word, total);
    let words = PackedWords { gpu, kernels: &kernels, order, records, record_bytes, n: total, packed, positions, word, sort_packed: first_word };
    words.sort(Some(&TieRuns::at(base, ties_at, total)))?;
    // The runs tied on the last word too, over the items and one more equal to the last; each
    // record's run in the order; then the runs scattered back to the records' positions.
    let ties = TieRuns::at(base, ties_at, total + 1);
    copy_device(gpu, packed + (total * 8) as u64, packed + ((total - 1) * 8) as u64, 8)?;
    ties.find(gpu, &kernels, packed, false)?;
    let starts = CheckedBuffer::raw(ties.offsets, total + 2, 8);
    launch_load_balancing(gpu, 8, total + 1, &starts, LoadBalancingOutput::Search { segments: runs, ranks: 0 })?;
    launch_scatter(gpu, &kernels, runs, (positions, word), keys, total)
}

/// [`ranks`] under a custom comparator (`fatbin`, its module on records' addresses): the
/// records' addresses sorted with their positions, the runs of records equal under the
/// comparator found, each record given its run's index.
fn ranks_by_address<K: Key>(gpu: &Gpu, order: &RecordOrder, fatbin: &'static [u8], inputs: &[(u64, usize)], keys: u64) -> Result<()> {
    let inputs: Vec<(u64, usize)> = inputs.iter().copied().filter(|i| i.1 > 0).collect();
    let total: usize = inputs.iter().map(|i| i.1).sum();
    if total + 2 > MAX_SEGMENT_OFFSETS {
        return Err(Error::TooLarge { what: "records under a custom comparator outside sorts: at most 2^31 - 3 of them" });
    }
    let (kernels, by_address) = (record_kernels(gpu, order)?, gpu.address_kernels(fatbin)?);
    let (record_bytes, word) = (std::mem::size_of::<K>(), position_bytes(total));
    let mut layout = TempLayout::default();
    let (addresses_at, positions_at, runs_at) = (layout.region((total + 1) * 8), layout.region(total * word), layout.region((total + 1) * 8));
    let ties_at = TieRuns::regions(&mut layout, total + 1);
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let [addresses, positions, runs] = [addresses_at, positions_at, runs_at].map(|at| base + at as u64);
    let mut at = 0;
    for &(records, n) in &inputs {
        launch_addresses(gpu, &kernels, addresses + (at * 8) as u64, n, (records, record_bytes), false)?;
        at += n;
    }
    launch_iota(gpu, &kernels, positions, total, 0, word)?;
    launch_sort_positions(gpu, &by_address, addresses, positions, word, total)?;
    // One item more, the last record again: tied with the last, so the offsets are the runs'
    // starts (see `ranks`).
    copy_device(gpu, addresses + (total * 8) as u64, addresses + ((total - 1) * 8) as u64, 8)?;
    let ties = TieRuns::at(base, ties_at, total + 1);
    ties.find_by_comparator(gpu, &by_address, addresses)?;
    let starts = CheckedBuffer::raw(ties.offsets, total + 2, 8);
    launch_load_balancing(gpu, 8, total + 1, &starts, LoadBalancingOutput::Search { segments: runs, ranks: 0 })?;
    launch_scatter(gpu, &kernels, runs, (positions, word), keys, total)
}

/// Sorts the `n` packed first words at `packed` as `u64` keys in the order's direction, the
/// positions (`word` bytes) following.
fn sort_words(gpu: &Gpu, order: &RecordOrder, packed: u64, positions: u64, word: usize, n: usize) -> Result<()> {
    match order.descending {
        true => launch_sort::<u64, Greater>(gpu, packed, packed, Some((positions, positions, word)), n, Greater),
        false => launch_sort::<u64, Less>(gpu, packed, packed, Some((positions, positions, word)), n, Less),
    }
}

//! Bulk insert and bulk remove (Modern GPU's `BulkInsert` and `BulkRemove`): a sorted batch of
//! items put into an array at given positions, or the items at given positions taken out,
//! both stable.
//!
//! - **Insert** is the merge of the positions (A, each inserted value following its position)
//!   with the array's own positions `0, 1, ..., n - 1` (B, the array's items following them),
//!   A first on ties: `values[j]` lands just before `array[positions[j]]`, and inserts at one
//!   position keep their order. One pass on the load-balancing search's tiles
//!   (`kernel/bulk.cuh`): each tile merges its positions with its share of the counting
//!   sequence (never stored) and copies each output from the array or the values, so every
//!   item is read and written once. Unsorted device positions make the merges' fallback write
//!   the values, then the array.
//! - **Remove** finds the distinct positions (the runs of equal positions' first ones) and how
//!   many are inside the array (a lower bound), then merges them with the array's positions on
//!   the same tiles: an item whose position precedes it goes, the others are copied to their
//!   place. Positions may repeat (an item goes once).
//!
//! This folder holds the whole algorithm: the device calls and their checks here, the host
//! backend (`host.rs`), the host-slice [`Gpu`] methods (`slices.rs`) and the sequential oracle
//! ([`crate::cpu::bulk_insert`], `cpu.rs`) and the properties that hold them to it
//! ([`crate::testing::bulk_insert`], `properties.rs`).

pub(crate) mod cpu;
pub(crate) mod host;
#[cfg(feature = "testing")]
pub(crate) mod properties;
mod slices;

use crate::checks::{check_output, check_values};
use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{BulkParams, MergeFallbackParams};
use crate::device::launch::{grid_ctas, merge_fallback_config, widest_word};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{value_align, Comparator, Key, Less, Value};
use crate::partition::launch::partition_launch_config;
use crate::tuning::search_shape;
use crate::runs::{runs_on, RunOutputs};
use crate::search::{launch_search, SearchOutput};
use crate::types::{Bound, SortIndex};
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};

/// Inserts `values[j]` before `array[positions[j]]` for every `j`, writing the `array.len() +
/// positions.len()` items to `out` (longer is fine, the rest is left as it is;
/// [`Error::OutputTooSmall`] if shorter, nothing written). Positions are sorted, each at most
/// `array.len()` (`array.len()` appends); equal positions keep their values' order. Values of
/// any size; positions `u32` (arrays of fewer than 2^32 items, [`Error::TooLarge`] past that)
/// or `u64`. `values` has one value per position ([`Error::LengthMismatch`]); `out` must not
/// overlap the inputs. Returns without waiting for the GPU.
///
/// Device positions are not checked (that would wait for the GPU): unsorted positions, or
/// positions past the array's end, still put every item of `array` and `values` in `out`
/// once, in an unspecified order. The host-slice and host-backend calls check theirs
/// ([`Error::InvalidArgument`]).
///
/// ```no_run
/// # fn main() -> Result<(), mergepath::Error> {
/// let gpu = mergepath::Gpu::new(0)?;
/// let array = gpu.upload(&[10u32, 20, 30])?;
/// let (positions, values) = (gpu.upload(&[0u32, 2, 2, 3])?, gpu.upload(&[1u32, 21, 22, 31])?);
/// let mut out = gpu.alloc_zeros::<u32>(7)?;
/// mergepath::bulk_insert(&gpu, &array, &positions, &values, &mut out)?;
/// assert_eq!(gpu.download(&out)?, [1, 10, 20, 21, 22, 30, 31]);
/// # Ok(())
/// # }
/// ```
pub fn bulk_insert<I: SortIndex, V: Value>(
    gpu: &Gpu,
    array: &impl DevicePtr<V>,
    positions: &impl DevicePtr<I>,
    values: &impl DevicePtr<V>,
    out: &mut impl DevicePtrMut<V>,
) -> Result<()> {
    let value_align = const { value_align::<V>() };
    let array = gpu.input("array", array, value_align)?;
    let positions = gpu.input("positions", positions, std::mem::size_of::<I>())?;
    let values = gpu.input("values", values, value_align)?;
    let total = check_insert::<I>(array.len, positions.len, values.len, usize::MAX)?;
    let out = gpu.output("out", out, value_align, total, &[&array, &positions, &values])?;
    launch_insert::<I, V>(gpu, &array, &positions, &values, &out)
}

/// Removes the items of `array` at `positions`, writing the others to `out` in their order,
/// and returns how many there are (`array.len()` less the distinct positions). Positions are
/// sorted and below `array.len()`; a position given twice removes its item once. `out` holds
/// at least the kept items ([`Error::OutputTooSmall`] with their count otherwise, nothing
/// written; `array.len() - positions.len()` is enough where positions do not repeat) and must
/// not overlap the inputs. Values of any size; positions `u32` (arrays of fewer than 2^32
/// items, [`Error::TooLarge`] past that) or `u64`.
///
/// Waits for the GPU: the distinct positions' count and how many of them are inside the
/// array, found on the device, size the output before anything is written.
///
/// Device positions are not checked: positions past the array's end remove nothing, and
/// unsorted ones give an unspecified selection of the array's items (or
/// [`Error::OutputTooSmall`]), never an out-of-bounds access. The host-slice and host-backend
/// calls check theirs ([`Error::InvalidArgument`]).
pub fn bulk_remove<I: SortIndex, V: Value>(gpu: &Gpu, array: &impl DevicePtr<V>, positions: &impl DevicePtr<I>, out: &mut impl DevicePtrMut<V>) -> Result<usize> {
    let array = gpu.input("array", array, std::mem::align_of::<V>())?;
    let positions = gpu.input("positions", positions, std::mem::size_of::<I>())?;
    check_index_room::<I>(array.len)?;
    let out = gpu.output("out", out, std::mem::align_of::<V>(), 0, &[&array, &positions])?;
    launch_remove::<I, V>(gpu, &array, &positions, &out)
}

/// The checks of a bulk insert of `inserts` values at `positions` positions into an array of
/// `n` items, with room for `out_len`: returns the result's length.
pub(crate) fn check_insert<I: SortIndex>(n: usize, positions: usize, inserts: usize, out_len: usize) -> Result<usize> {
    check_values("values", positions, inserts)?;
    check_index_room::<I>(n)?;
    let total = n.checked_add(positions).ok_or(Error::TooLarge { what: "bulk insert result" })?;
    check_output("out", out_len, total)?;
    Ok(total)
}

/// Positions of `I` reach every position of an array of `n` items and its end (`n`).
pub(crate) fn check_index_room<I: SortIndex>(n: usize) -> Result<()> {
    if n >= I::MAX_COUNT {
        return Err(Error::TooLarge { what: "array for bulk insert or remove with these positions' type (u32: fewer than 2^32 items)" });
    }
    Ok(())
}

/// `positions` (host) sorted and each inside an array of `n` items (`at_end`: or at its end,
/// where an insert appends).
pub(crate) fn check_positions<I: SortIndex>(positions: &[I], n: usize, at_end: bool) -> Result<()> {
    if let Some(i) = positions.windows(2).position(|w| w[1].value() < w[0].value()) {
        return Err(Error::invalid("positions", format!("not sorted: positions[{}] = {} is below positions[{i}] = {}", i + 1, positions[i + 1].value(), positions[i].value())));
    }
    match positions.last().map(|&p| p.value()) {
        Some(last) if at_end && last > n as u64 => Err(Error::invalid("positions", format!("position {last} is past the end of the {n} items"))),
        Some(last) if !at_end && last >= n as u64 => Err(Error::invalid("positions", format!("position {last} is not one of the {n} items"))),
        _ => Ok(()),
    }
}

/// Enqueues a checked insert: the bulk tiles over the merge of the positions with the array's
/// positions, where unsorted positions make the fallback write the values, then the array.
pub(crate) fn launch_insert<I: SortIndex, V: Value>(gpu: &Gpu, array: &CheckedBuffer<'_>, positions: &CheckedBuffer<'_>, values: &CheckedBuffer<'_>, out: &CheckedBuffer<'_>) -> Result<()> {
    if array.len + positions.len == 0 {
        return Ok(());
    }
    let fallback = [(values.ptr, positions.len), (array.ptr, array.len)];
    launch_bulk(gpu, BulkTile::Insert, (std::mem::size_of::<I>(), std::mem::size_of::<V>()), positions, array, values.ptr, out, fallback)
}

/// A checked remove: the distinct positions, how many are inside the array (both read back),
/// then the bulk tiles, where unsorted positions make the fallback write the array's first
/// kept items.
pub(crate) fn launch_remove<I: SortIndex, V: Value>(gpu: &Gpu, array: &CheckedBuffer<'_>, positions: &CheckedBuffer<'_>, out: &CheckedBuffer<'_>) -> Result<usize> {
    match std::mem::size_of::<I>() {
        4 => remove_by::<u32, V>(gpu, array, positions, out),
        _ => remove_by::<u64, V>(gpu, array, positions, out),
    }
}

/// [`launch_remove`] with positions of `K`.
fn remove_by<K: Key, V: Value>(gpu: &Gpu, array: &CheckedBuffer<'_>, positions: &CheckedBuffer<'_>, out: &CheckedBuffer<'_>) -> Result<usize>
where
    Less: Comparator<K>,
{
    let (n, word) = (array.len, std::mem::size_of::<K>());
    if n == 0 {
        return Ok(0);
    }
    let mut temp = gpu.temp(positions.len * word)?;
    let (distinct_ptr, _guard) = temp.device_ptr_mut();
    let distinct_count = match positions.len {
        0 => 0,
        len => runs_on::<K, Less>(gpu, positions, RunOutputs { keys: ("positions", distinct_ptr, len), lengths: None, values: None })?,
    };
    let distinct = CheckedBuffer::raw(distinct_ptr, distinct_count, word);
    let kept = n - positions_below::<K>(gpu, &distinct, n)?.min(n);
    check_output("out", out.len, kept)?;
    if kept > 0 {
        launch_bulk(gpu, BulkTile::Remove, (word, std::mem::size_of::<V>()), &distinct, array, 0, out, [(array.ptr, kept), (0, 0)])?;
    }
    Ok(kept)
}

/// How many of the sorted `positions` (of `K`) are below `n`: all of them where the last is
/// (read back), else their lower bound of `n`, found on the device and read back.
fn positions_below<K: Key>(gpu: &Gpu, positions: &CheckedBuffer<'_>, n: usize) -> Result<usize>
where
    Less: Comparator<K>,
{
    if positions.len == 0 {
        return Ok(0);
    }
    let word = std::mem::size_of::<K>();
    let mut last = [0u8; 8];
    // SAFETY: `positions` holds `len` positions of `word` bytes, written by work enqueued
    // before on this stream; the copy fills `word` bytes of `last`, waited for below.
    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut last[..word], positions.ptr + ((positions.len - 1) * word) as u64, gpu.stream().cu_stream()) }?;
    gpu.synchronize()?;
    if u64::from_le_bytes(last) < n as u64 {
        return Ok(positions.len);
    }
    let needle = gpu.upload(&(n as u64).to_le_bytes()[..word])?;
    let mut bound = gpu.alloc_zeros::<u64>(1)?;
    {
        let needles = gpu.input("needle", &needle, 1)?;
        let out = gpu.output("bound", &mut bound, 8, 1, &[&needles])?;
        launch_search::<K, Less>(gpu, &CheckedBuffer::raw(needles.ptr, 1, word), positions, SearchOutput::Bound(Bound::Lower, 8), &[out.ptr])?;
    }
    Ok(gpu.download(&bound)?[0] as usize)
}

/// The tiles a bulk launch runs.
#[derive(Clone, Copy)]
enum BulkTile {
    Insert,
    Remove,
}

/// Enqueues `tile`'s kernels over the merge of `positions` (of `index_bytes`) with the array's
/// positions, values of `value_bytes` (`values`: insert's, 0 for a remove): the partitions, the tiles, then the
/// merges' fallback (kernel/unsorted.cuh) over `fallback`'s two inputs (values and counts),
/// which writes them one after the other into `out` only where a tile found its share inexact.
#[allow(clippy::too_many_arguments)]
fn launch_bulk(gpu: &Gpu, tile: BulkTile, (index_bytes, value_bytes): (usize, usize), positions: &CheckedBuffer<'_>, array: &CheckedBuffer<'_>, values: u64, out: &CheckedBuffer<'_>, fallback: [(u64, usize); 2]) -> Result<()> {
    let (n, count) = (array.len, positions.len);
    let kernels = gpu.index_kernels()?;
    let word = widest_word(value_bytes, array.ptr | values | out.ptr);
    // The sorted search's shape, as the tiles' (entry/bulk.cuh).
    let shape = search_shape(kernels.arch, index_bytes);
    let tiles = (n + count).div_ceil(shape.tile());
    let grid = grid_ctas(tiles, "bulk grid")?;
    let words = value_bytes / word;
    // The tiles count a tile's words in 32 bits.
    if shape.tile().saturating_mul(words) > i32::MAX as usize {
        return Err(Error::TooLarge { what: "bulk insert or remove: values too large for a tile (2^31 words)" });
    }
    let mut temp = gpu.temp((tiles + 1) * 8)?;
    let (partitions, _temp_guard) = temp.device_ptr_mut();
    // Held until the fallback is enqueued: this call's tiles and fallback stay adjacent.
    let (guard, _guard_lock) = gpu.merge_guard()?;
    let params = BulkParams { positions: positions.ptr, count: count as i64, n: n as i64, spacing: shape.tile() as i64, num_partitions: (tiles + 1) as i64, partitions, array: array.ptr, values, out: out.ptr, out_len: out.len as i64, words: words as i64, guard };
    // SAFETY: `BulkParams` is `mergepath_bulk_partitions_{4,8}`'s parameter struct; one thread
    // per partition (tiles + 1 of them, the temp's room), each a search of the `count`
    // positions (of the index's width) against the counting sequence.
    unsafe { gpu.launch(&kernels.bulk_partitions(index_bytes)?, partition_launch_config(tiles + 1)?, &params) }?;
    let entry = match tile {
        BulkTile::Insert => kernels.bulk_insert(word, index_bytes)?,
        BulkTile::Remove => kernels.bulk_remove(word, index_bytes)?,
    };
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: as above for `mergepath_bulk_{insert,remove}_{word}_{4,8}`, whose tile is the
    // search shape of the index width (the partitions' spacing), one CTA per tile of the
    // n + count merge outputs; the array holds n values and (insert) `values` one per
    // position, all aligned to the word, which divides the value; an insert's `out` holds
    // n + count values (check_insert), a remove writes none at or past out_len; the tiles
    // read only inside their partitions' clamped ranges.
    unsafe { gpu.launch_dependent(&entry, cfg, &params, kernels.arch) }?;
    let [(a_vals, a_count), (b_vals, b_count)] = fallback;
    let (a_count, b_count, value_bytes) = (a_count as i64, b_count as i64, value_bytes as i64);
    let fallback = MergeFallbackParams { guard, a: 0, a_vals, a_count, b: 0, b_vals, b_count, key_bytes: 0, value_bytes, out: 0, out_vals: out.ptr };
    // SAFETY: `MergeFallbackParams` is `mergepath_merge_fallback`'s parameter struct; no keys
    // (key_bytes 0), `fallback`'s values as its two inputs (their counts, at most the arrays'),
    // which `out` holds together; it waits for the tiles and writes only where one reported.
    unsafe { gpu.launch_dependent(&kernels.merge_fallback()?, merge_fallback_config(), &fallback, kernels.arch) }
}

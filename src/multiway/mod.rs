//! Multiway merge: k sorted inputs merged stably into one output. The merge runs in
//! ceil(log4 k) four-way passes (`plan.rs`: each merges groups of four consecutive runs, the
//! first reading the inputs where they are), on the mergesort's four-way kernels over a table
//! of frames (`passes.rs`): each pass reads and writes everything once, a little slower than
//! the sort's own pass (BENCHMARKS.md). Where the temporary buffer the passes take does not fit, one pass of the multiway
//! kernels (`launch.rs`: multiway Merge Path, [`crate::partition::multiway_partitions`], splits
//! every input at each output tile's first rank; slower, but with temporary memory for the
//! splits only). For merging many sorted runs at once (compaction, external sorts, the last
//! passes of a sort) instead of a tree of two-way merges.
//!
//! ```no_run
//! use mergepath::{Gpu, Less};
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = Gpu::new(0)?;
//! let runs = [gpu.upload(&[1u32, 5, 9])?, gpu.upload(&[])?, gpu.upload(&[2u32, 5])?, gpu.upload(&[0u32, 5, 10])?];
//! let inputs: Vec<_> = runs.iter().collect();
//! let mut out = gpu.alloc_zeros::<u32>(8)?;
//! mergepath::merge_multiway_keys(&gpu, &inputs, &mut out, Less)?;
//! assert_eq!(gpu.download(&out)?, [0, 1, 2, 5, 5, 5, 9, 10]);
//! # Ok(()) }
//! ```

mod launch;
mod passes;
mod plan;

use crate::checks::check_values;
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::device::temp::TempLayout;
use crate::gather::{copy_one_after_another, ValueSources};
use crate::key::{value_word, Comparator, Key, RecordOrder, Value};
use crate::sort::move_records;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use launch::launch_multiway;
pub(crate) use launch::multiway_temp_bytes;

/// Merges `inputs` (each sorted by `comp`; any number, empty ones allowed) into
/// `out[..total]`, stably: of equal keys, those of a lower input first, each input's in its
/// own order. `out` must hold the total ([`Error::OutputTooSmall`]) and overlap no input
/// ([`Error::Overlap`]); the rest of it is left alone. Runs in ceil(log4 k) passes over the
/// data; more than four non-empty inputs take temporary device memory of the output's size
/// (keys, and values for [`merge_multiway_pairs`]), and where that does not fit, the merge runs
/// in one pass of slower kernels whose temporary memory is a split per input and tile. Unsorted
/// inputs give an unspecified order of the same keys (each value with its key, for
/// [`merge_multiway_pairs`]), never an item lost or doubled nor an access out of bounds: every
/// tile checks that its splits are exact and its slices sorted, and where one is not, the output
/// is the inputs one after another. Returns without waiting for the GPU.
pub fn merge_multiway_keys<K: Key, C: Comparator<K>, S: DevicePtr<K>>(gpu: &Gpu, inputs: &[&S], out: &mut impl DevicePtrMut<K>, comp: C) -> Result<()> {
    let _ = comp;
    let keys = checked_inputs(gpu, "inputs", inputs, K::DEVICE_ALIGN)?;
    let total = keys.iter().map(|b| b.len).sum();
    let refs: Vec<&CheckedBuffer<'_>> = keys.iter().collect();
    let out = gpu.output("out", out, K::DEVICE_ALIGN, total, &refs)?;
    if total == 0 {
        return Ok(());
    }
    merge::<K, C>(gpu, &keys, None, out.ptr, None)
}

/// [`merge_multiway_keys`] of key/value pairs: `values[t]` (the length of `keys[t]`,
/// [`Error::LengthMismatch`] otherwise; as many value inputs as key inputs) follow their keys
/// into `out_values`. Values of 4, 8 or 16 bytes (other sizes are a compile error here: carry
/// a `u32` index).
pub fn merge_multiway_pairs<K: Key, V: Value, C: Comparator<K>, S: DevicePtr<K>, SV: DevicePtr<V>>(
    gpu: &Gpu,
    keys: &[&S],
    values: &[&SV],
    out_keys: &mut impl DevicePtrMut<K>,
    out_values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    let _ = comp;
    let word = const { value_word::<V>() };
    check_values("values (inputs)", keys.len(), values.len())?;
    let k = checked_inputs(gpu, "keys", keys, K::DEVICE_ALIGN)?;
    let v = checked_inputs(gpu, "values", values, word)?;
    for (kb, vb) in k.iter().zip(&v) {
        check_values("values", kb.len, vb.len)?;
    }
    let total = k.iter().map(|b| b.len).sum();
    let refs: Vec<&CheckedBuffer<'_>> = k.iter().chain(&v).collect();
    let ok = gpu.output("out_keys", out_keys, K::DEVICE_ALIGN, total, &refs)?;
    let refs: Vec<&CheckedBuffer<'_>> = k.iter().chain(&v).chain(std::iter::once(&ok)).collect();
    let ov = gpu.output("out_values", out_values, word, total, &refs)?;
    if total == 0 {
        return Ok(());
    }
    merge::<K, C>(gpu, &k, Some((&v, word)), ok.ptr, Some(ov.ptr))
}

/// A launch of the multiway merge of validated keys (and values of a word's bytes) by a
/// module's kernels: [`launch_merge`] or [`launch_multiway`].
type MergeLaunch = fn(&Gpu, &Kernels, &[CheckedBuffer<'_>], Option<(&[CheckedBuffer<'_>], usize)>, u64, Option<u64>) -> Result<()>;

/// The merge of validated `keys` (and `values` of `word` bytes) into `out` (and `out_values`):
/// [`launch_merge`], or for records wider than the key tiles [`merge_records`].
pub(crate) fn merge<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &[CheckedBuffer<'_>], values: Option<(&[CheckedBuffer<'_>], usize)>, out: u64, out_values: Option<u64>) -> Result<()> {
    merge_by::<K, C>(gpu, launch_merge::<K>, keys, values, out, out_values)
}

/// [`merge`] in one pass of the multiway kernels, whose temporary memory is the splits only
/// ([`multiway_temp_bytes`]): a batch of a host-slice merge.
pub(crate) fn merge_in_one_pass<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &[CheckedBuffer<'_>], values: Option<(&[CheckedBuffer<'_>], usize)>, out: u64, out_values: Option<u64>) -> Result<()> {
    merge_by::<K, C>(gpu, launch_multiway::<K>, keys, values, out, out_values)
}

/// The merge of `keys` by `launch` with the key's kernels, or for records [`merge_records`].
fn merge_by<K: Key, C: Comparator<K>>(gpu: &Gpu, launch: MergeLaunch, keys: &[CheckedBuffer<'_>], values: Option<(&[CheckedBuffer<'_>], usize)>, out: u64, out_values: Option<u64>) -> Result<()> {
    match &C::RECORD {
        Some(order) => merge_records::<K>(gpu, order, keys, values, out, out_values),
        None => launch(gpu, &*gpu.kernels::<K, C>()?, keys, values, out, out_values),
    }
}

/// The merge of records by their comparable keys ([`move_records`]): the inputs (and values) set
/// one after another, so the gathers read one source; the keys merged by their module's
/// kernels with the records' positions; then the records and values gathered.
fn merge_records<K: Key>(gpu: &Gpu, order: &RecordOrder, keys: &[CheckedBuffer<'_>], values: Option<(&[CheckedBuffer<'_>], usize)>, out: u64, out_values: Option<u64>) -> Result<()> {
    let total: usize = keys.iter().map(|b| b.len).sum();
    let (record_bytes, value_bytes) = (std::mem::size_of::<K>(), values.map_or(0, |v| v.1));
    let mut layout = TempLayout::default();
    let (records_at, values_at) = (layout.region(total * record_bytes), layout.region(total * value_bytes));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let one_after_another = |inputs: &[CheckedBuffer<'_>], to: u64, bytes: usize| -> Result<ValueSources> {
        copy_one_after_another(gpu, inputs.iter().map(|b| (b.ptr, b.len)), to, bytes)?;
        Ok(ValueSources { a: (to, total), b: None })
    };
    let records = one_after_another(keys, base + records_at as u64, record_bytes)?;
    let values = match (values, out_values) {
        (Some((v, word)), Some(to)) => Some((one_after_another(v, base + values_at as u64, word)?, to, word)),
        _ => None,
    };
    move_records::<K>(gpu, order, records, out, values, |o| {
        let (mut order_keys, mut positions, mut at) = (Vec::new(), Vec::new(), 0);
        for input in keys {
            order_keys.push(CheckedBuffer::raw(o.keys + (at * 8) as u64, input.len, 8));
            positions.push(CheckedBuffer::raw(o.positions + (at * o.word) as u64, input.len, o.word));
            at += input.len;
        }
        launch_merge::<u64>(gpu, o.kernels, &order_keys, Some((&positions, o.word)), o.keys_out, Some(o.positions_out))?;
        Ok((total, o.positions_out))
    })
}

/// The merge in four-way passes ([`passes`]), or, where their temporary buffer does not fit on
/// the device, in single passes of the multiway kernels ([`launch`]), which take temporary
/// memory only for their splits.
fn launch_merge<K: Key>(gpu: &Gpu, kernels: &Kernels, keys: &[CheckedBuffer<'_>], values: Option<(&[CheckedBuffer<'_>], usize)>, out: u64, out_values: Option<u64>) -> Result<()> {
    match passes::launch_passes::<K>(gpu, kernels, keys, values, out, out_values) {
        Err(Error::OutOfMemory { .. }) => launch_multiway::<K>(gpu, kernels, keys, values, out, out_values),
        other => other,
    }
}

/// Each of `inputs` validated (context, alignment).
fn checked_inputs<'a, T, S: DevicePtr<T>>(gpu: &'a Gpu, what: &'static str, inputs: &[&'a S], align: usize) -> Result<Vec<CheckedBuffer<'a>>> {
    inputs.iter().map(|s| gpu.input(what, *s, align)).collect()
}

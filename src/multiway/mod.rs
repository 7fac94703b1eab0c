//! Multiway merge: k sorted inputs merged stably into one output in one pass, partitioned by
//! multiway Merge Path ([`crate::partition::multiway_partitions`]): the exact split of every
//! input at each output tile's first rank, then one CTA per tile merging the tile's slices of
//! all inputs. For merging many sorted runs at once (compaction, external sorts, the last
//! passes of a sort) instead of a tree of two-way merges that reads and writes everything
//! log2(k) times.
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

use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{value_word, Comparator, Key, Value};
use cudarc::driver::{DevicePtr, DevicePtrMut};
pub(crate) use launch::{launch_multiway, multiway_temp_bytes};

/// Merges `inputs` (each sorted by `comp`; any number, empty ones allowed) into
/// `out[..total]`, stably: of equal keys, those of a lower input first, each input's in its
/// own order. `out` must hold the total ([`Error::OutputTooSmall`]) and overlap no input
/// ([`Error::Overlap`]); the rest of it is left alone. More than 1,024 inputs are merged in
/// groups of 1,024 first (through temporary device memory), then the groups' results. Unsorted
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
    let kernels = gpu.kernels::<K, C>()?;
    launch_multiway::<K>(gpu, &kernels, &keys, None, out.ptr, None)
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
    if values.len() != keys.len() {
        return Err(Error::LengthMismatch { what: "values (inputs)", expected: keys.len(), got: values.len() });
    }
    let k = checked_inputs(gpu, "keys", keys, K::DEVICE_ALIGN)?;
    let v = checked_inputs(gpu, "values", values, word)?;
    for (kb, vb) in k.iter().zip(&v) {
        if kb.len != vb.len {
            return Err(Error::LengthMismatch { what: "values", expected: kb.len, got: vb.len });
        }
    }
    let total = k.iter().map(|b| b.len).sum();
    let refs: Vec<&CheckedBuffer<'_>> = k.iter().chain(&v).collect();
    let ok = gpu.output("out_keys", out_keys, K::DEVICE_ALIGN, total, &refs)?;
    let refs: Vec<&CheckedBuffer<'_>> = k.iter().chain(&v).chain(std::iter::once(&ok)).collect();
    let ov = gpu.output("out_values", out_values, word, total, &refs)?;
    if total == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    launch_multiway::<K>(gpu, &kernels, &k, Some((&v, word)), ok.ptr, Some(ov.ptr))
}

/// Each of `inputs` validated (context, alignment).
fn checked_inputs<'a, T, S: DevicePtr<T>>(gpu: &'a Gpu, what: &'static str, inputs: &[&'a S], align: usize) -> Result<Vec<CheckedBuffer<'a>>> {
    inputs.iter().map(|s| gpu.input(what, *s, align)).collect()
}

//! Segmented sort: many independent arrays sorted in one call. Segment `s` is
//! `keys[offsets[s]..offsets[s + 1]]`; each is sorted stably by the comparator (any, derived
//! ones included), and nothing moves across a segment boundary.
//!
//! Segments that fit a tile are packed, whole, into units of at most a tile ([`segment_units`],
//! on the host), and one kernel sorts every unit in place by (segment, key)
//! (`segmented_blocksort_tile`: one CTA per unit, in shared memory and registers, as
//! mergesort's first pass, with each item's segment as the leading key) — the HPCA "Batch
//! Sort" project's one block per batch of small arrays — so all of them take one launch,
//! however many there are. A segment longer than a tile is sorted on its own by mergesort's
//! passes (blocksort and merge passes over that segment only, so no merge crosses its
//! boundaries): a few launches per long segment.
//!
//! The offsets are a host slice: which segments need merge passes is decided on the host, so
//! nothing waits for the GPU. Run independent batches concurrently by calling this on
//! [`Gpu`]s made with [`Gpu::with_stream`] on different streams (each has its own temporary
//! storage).

use crate::error::{Error, Result};
use crate::gpu::{grid_ctas, value_slot, Gpu, KernelArg};
use crate::key::{value_word, Comparator, Key, Value};
use crate::sort::launch_sort;
use crate::tuning::{sort_pairs_shape, sort_shape};
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};

/// Sorts each segment `keys[offsets[s]..offsets[s + 1]]` in place by `comp`, stably. `offsets`
/// must be non-decreasing and end at most at `keys.len()` ([`Error::InvalidArgument`]);
/// items before `offsets[0]` and after the last offset are left as they are. Empty segments,
/// one segment, and fewer than 2 offsets (no segments) all work; at most 2^31 - 1 segments.
/// Returns without waiting for the GPU.
pub fn sort_segments_keys<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    offsets: &[usize],
    comp: C,
) -> Result<()> {
    let n = keys.len();
    let keys = gpu.output("keys", keys, std::mem::align_of::<K>(), n, &[])?;
    launch_segmented::<K, C>(gpu, keys.ptr, None, n, offsets, comp)
}

/// [`sort_segments_keys`] moving `values` (the keys' length, any [`Value`]) with their keys.
pub fn sort_segments_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    offsets: &[usize],
    comp: C,
) -> Result<()> {
    let word = const { value_word::<V>() };
    let (keys, values) = gpu.inplace_pairs(keys, values, "values", word)?;
    launch_segmented::<K, C>(gpu, keys.ptr, Some((values.ptr, word)), keys.len, offsets, comp)
}

/// Checks the offsets against a buffer of `len` items: non-decreasing, within it, fewer than
/// 2^31 segments.
pub fn validate_segment_offsets(offsets: &[usize], len: usize) -> Result<()> {
    if offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::InvalidArgument("segment offsets must be non-decreasing"));
    }
    if offsets.last().is_some_and(|&last| last > len) {
        return Err(Error::InvalidArgument("segment offsets past the end of the keys"));
    }
    if offsets.len() > i32::MAX as usize {
        return Err(Error::TooLarge { what: "segments (at most 2^31 - 1)" });
    }
    Ok(())
}

/// A range of items, (start, end).
pub type Span = (usize, usize);

/// How [`sort_segments_keys`] splits the work: `units`, runs of whole segments of at most
/// `tile` items in all (start, end), packed greedily in order, one CTA each; and `long`, the
/// segments longer than `tile` (start, end), each sorted by its own mergesort. Empty segments
/// are in neither.
pub fn segment_units(offsets: &[usize], tile: usize) -> (Vec<Span>, Vec<Span>) {
    let (mut units, mut long) = (Vec::new(), Vec::new());
    let mut unit: Option<(usize, usize)> = None;
    for w in offsets.windows(2) {
        let (start, end) = (w[0], w[1]);
        if end - start > tile {
            long.push((start, end));
            units.extend(unit.take());
        } else if end > start {
            unit = match unit {
                Some((s, e)) if e == start && end - s <= tile => Some((s, end)),
                other => {
                    units.extend(other);
                    Some((start, end))
                }
            };
        }
    }
    units.extend(unit);
    (units, long)
}

/// Enqueues the unit kernel over the segments that fit a tile, then a whole sort of each
/// longer segment.
fn launch_segmented<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    keys: u64,
    values: Option<(u64, usize)>,
    n: usize,
    offsets: &[usize],
    comp: C,
) -> Result<()> {
    validate_segment_offsets(offsets, n)?;
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else { return Ok(()) };
    if last == first {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let key_bytes = std::mem::size_of::<K>();
    let shape = if values.is_some() { sort_pairs_shape(kernels.arch, key_bytes) } else { sort_shape(kernels.arch, key_bytes) };
    let (units, long) = segment_units(offsets, shape.tile());
    let at = |base: u64, index: usize, size: usize| base + (index * size) as u64;
    if !units.is_empty() {
        let ctas = grid_ctas(units.len(), "segmented sort grid")?;
        // The offsets as they are (usize is u64 on 64-bit hosts: no copy), the units' (start,
        // end) pairs after them in a second buffer.
        let offsets_u64: std::borrow::Cow<[u64]> = match bytemuck::try_cast_slice(offsets) {
            Ok(same) => std::borrow::Cow::Borrowed(same),
            Err(_) => std::borrow::Cow::Owned(offsets.iter().map(|&o| o as u64).collect()),
        };
        let offsets_dev = gpu.upload(&offsets_u64)?;
        let units_dev = gpu.upload(&units.iter().flat_map(|&(s, e)| [s as u64, e as u64]).collect::<Vec<u64>>())?;
        let (offsets_ptr, offsets_guard) = offsets_dev.device_ptr(gpu.stream());
        let (units_ptr, units_guard) = units_dev.device_ptr(gpu.stream());
        let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
        let segments_arg = KernelArg::I64(offsets.len() as i64 - 1);
        match values {
            None => {
                let args = [KernelArg::Ptr(keys), KernelArg::Ptr(units_ptr), KernelArg::Ptr(offsets_ptr), segments_arg];
                // SAFETY: the arguments match `mergepath_segmented_blocksort_keys`; one CTA per
                // unit, each of at most the kernel's tile (`shape`, the same table row), inside
                // the validated buffer, and the offsets (validated) bound the segments.
                unsafe { gpu.launch(&kernels.segmented_blocksort_keys, cfg, &args) }?;
            }
            Some((vals, word)) => {
                let args = [KernelArg::Ptr(keys), KernelArg::Ptr(vals), KernelArg::Ptr(units_ptr), KernelArg::Ptr(offsets_ptr), segments_arg];
                // SAFETY: as above for `mergepath_segmented_blocksort_pairs_{4,8,16}`; the
                // values have the keys' length and the word alignment.
                unsafe { gpu.launch(&kernels.segmented_blocksort_pairs[value_slot(word)], cfg, &args) }?;
            }
        }
        drop((offsets_guard, units_guard));
    }
    for (start, end) in long {
        let seg_keys = at(keys, start, key_bytes);
        let seg_values = values.map(|(v, word)| (at(v, start, word), at(v, start, word), word));
        launch_sort::<K, C>(gpu, seg_keys, seg_keys, seg_values, end - start, comp)?;
    }
    Ok(())
}

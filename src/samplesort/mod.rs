//! Stable sample sort of keys and key/value pairs: a comparison sort that moves the data a few
//! times instead of log2(n / tile) times.
//!
//! A *distribution pass* splits each piece of the keys into `BUCKETS` buckets by
//! `SPLITTERS` splitters, every 8th key of a sorted sample of the piece (`sample_count`
//! evenly spaced keys, sorted in one CTA): the keys below the first splitter, those equal to it,
//! those between it and the next, and so on. Chunks of `CHUNK_TILES` tiles (one CTA each)
//! classify their keys (an unrolled binary search over the splitters in shared memory) and
//! count them per bucket, one scan over all the chunks' counts gives every (bucket, chunk) its
//! place, and the chunks write each key to its place, a tile at a time, ranked among the keys of
//! its bucket in input order, so the pass is stable. Buckets of keys equal to a splitter are
//! done; buckets of at most a blocksort tile are sorted in shared memory, consecutive ones
//! packed into one CTA's tile (`finish_jobs`); larger ones are split again by the next pass
//! (2^26 random keys take two). The host reads each pass's bucket starts to plan the next
//! (`bucket_fates`). Equal keys thus never make a bucket large: they go to an equality bucket.
//!
//! A bucket that `MAX_PASSES` passes leave larger than a tile, or one a pass did not shrink
//! (a comparator that is not a strict weak order), is sorted by the mergesort
//! ([`crate::sort`]), as are inputs of at most a blocksort tile.
//!
//! Peak device memory beyond the caller's buffers: one buffer of `n` keys (and `n` values),
//! plus per pass 12 bytes per bucket and chunk and the samples.
//!
//! `samplesort_cpu` runs the same steps on the CPU.
//!
//! Speed: [`crate::sort_keys`] (the mergesort) is faster at every measured size but one (u32
//! pairs at 2^26), and much faster where the second pass leaves buckets just over a tile (2^28
//! u32 keys: a third pass over ~65,000 small pieces, each with its own bucket counts planned on
//! the host, takes 9× the mergesort's time). BENCHMARKS.md has the figures.

mod launch;
mod plan;

use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key, Value};
use crate::sort::{sort_keys_copy_with, sort_keys_with, sort_pairs_copy_with, sort_pairs_with};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use launch::launch_samplesort;
// The plan, for the CPU tests of the passes (`models`): not part of the API.
#[cfg(any(test, feature = "models"))]
pub use plan::{bucket_fates, bucket_of, finish_jobs, pass_chunks, sample_count, sample_position, samplesort_cpu, splitters_of, Fate, FinishJob, Piece, BUCKETS, CHUNK_TILES, MAX_PASSES, SPLITTERS};

/// Sorts `keys` in place by `comp`, stably, by sample sort. Any length, including 0 and more
/// than 2^31 items. Waits for the GPU between passes (the host plans each pass from the last).
///
/// ```no_run
/// # fn main() -> mergepath::Result<()> {
/// let gpu = mergepath::Gpu::new(0)?;
/// let mut keys = gpu.upload(&[5u32, 3, 9, 1])?;
/// mergepath::samplesort::sort_keys(&gpu, &mut keys, mergepath::Less)?;
/// assert_eq!(gpu.download(&keys)?, [1, 3, 5, 9]);
/// # Ok(())
/// # }
/// ```
pub fn sort_keys<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut impl DevicePtrMut<K>, comp: C) -> Result<()> {
    sort_keys_with(gpu, keys, comp, launch_samplesort::<K, C>)
}

/// Sorts `input` into `output[..input.len()]` by `comp`, stably, by sample sort, leaving `input`
/// as it is. `output` may be longer (the rest is left as it is) and must not overlap `input`.
pub fn sort_keys_copy<K: Key, C: Comparator<K>>(gpu: &Gpu, input: &impl DevicePtr<K>, output: &mut impl DevicePtrMut<K>, comp: C) -> Result<()> {
    sort_keys_copy_with(gpu, input, output, comp, launch_samplesort::<K, C>)
}

/// Sorts `keys` in place by `comp`, stably, by sample sort, moving `values` (same length, any
/// [`Value`]) with their keys.
pub fn sort_pairs<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys: &mut impl DevicePtrMut<K>,
    values: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    sort_pairs_with(gpu, keys, values, comp, launch_samplesort::<K, C>)
}

/// Sorts `keys_in`/`values_in` pairs into `keys_out`/`values_out` (at least as long) by `comp`,
/// stably, by sample sort, leaving the inputs as they are. Outputs must not overlap inputs or
/// each other.
pub fn sort_pairs_copy<K: Key, V: Value, C: Comparator<K>>(
    gpu: &Gpu,
    keys_in: &impl DevicePtr<K>,
    values_in: &impl DevicePtr<V>,
    keys_out: &mut impl DevicePtrMut<K>,
    values_out: &mut impl DevicePtrMut<V>,
    comp: C,
) -> Result<()> {
    sort_pairs_copy_with(gpu, keys_in, values_in, keys_out, values_out, comp, launch_samplesort::<K, C>)
}

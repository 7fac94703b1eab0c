//! The host-slice merges: output ranges cut by merge path on the host, each uploaded, merged
//! and downloaded on its own.

use super::plan::{bytes_mut, clamp_splits, Lanes, MergePlan};
use crate::tuning::RANGE_BYTES;
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::merge::launch_merge;
use crate::partition::merge_path;
use cudarc::driver::CudaEvent;
use std::ops::Range;

/// Merges `a` and `b` (device lanes) into `out` with values where `word > 0`.
pub(crate) fn merge_lanes<K: Key, C: Comparator<K>>(gpu: &Gpu, a: (&Lanes, Range<usize>), b: (&Lanes, Range<usize>), out: (&Lanes, usize), comp: C) -> Result<()> {
    let total = a.1.len() + b.1.len();
    let out_range = out.1..out.1 + total;
    let (ak, bk, ok) = (a.0.keys(a.1.clone()), b.0.keys(b.1.clone()), out.0.keys(out_range.clone()));
    if a.0.word == 0 {
        return launch_merge::<K, C>(gpu, &ak, &bk, &ok, None, comp);
    }
    let (av, bv, ov) = (a.0.values(a.1), b.0.values(b.1), out.0.values(out_range));
    launch_merge::<K, C>(gpu, &ak, &bk, &ok, Some((&av, &bv, &ov, a.0.word)), comp)
}

/// The merge of host slices: output ranges cut by merge path on the host, each uploaded,
/// merged and downloaded on its own, a few in flight; ranges and slots sized to the device
/// budget ([`MergePlan`]), so inputs of any length merge under any cap that holds a short
/// range.
#[allow(clippy::type_complexity)]
pub(super) fn merge_host<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &[K], b: &[K], out: &mut [K], mut values: Option<(&[u8], &[u8], &mut [u8], usize)>, comp: C) -> Result<()> {
    let total = a.len() + b.len();
    if total == 0 {
        return Ok(());
    }
    gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), values.as_ref().map_or(0, |v| v.3));
    let available = gpu.device_budget()?;
    let MergePlan { range, slots } = MergePlan::new(total, kb, word, work_bytes(RANGE_BYTES), available).map_err(|needed| Error::TooLargeForDevice { needed, available })?;
    let ranges = total.div_ceil(range);
    let lane_bytes = Lanes::bytes(range, kb, word);
    // Per slot: the range's inputs, then its output; the merge's partitions come from the pool.
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

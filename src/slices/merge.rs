//! The host-slice merges: output ranges cut by merge path on the host, each uploaded, merged
//! and downloaded on its own.

use super::plan::{bytes_mut, clamp_splits, Lanes, MergePlan, Slots};
use crate::tuning::RANGE_BYTES;
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::merge::launch_merge;
use crate::partition::merge_path;
use super::batches::{run_batches, Batches};
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
/// merged and downloaded on its own, a few in flight ([`run_batches`]); ranges and slots sized
/// to the device budget ([`MergePlan`]), so inputs of any length merge under any cap that holds
/// a short range.
#[allow(clippy::type_complexity)]
pub(super) fn merge_host<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &[K], b: &[K], out: &mut [K], values: Option<(&[u8], &[u8], &mut [u8], usize)>, comp: C) -> Result<()> {
    let total = a.len() + b.len();
    if total == 0 {
        return Ok(());
    }
    gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), values.as_ref().map_or(0, |v| v.3));
    let available = gpu.device_budget()?;
    let MergePlan { range, slots } = MergePlan::new(total, kb, word, work_bytes(RANGE_BYTES), available).map_err(|needed| Error::TooLargeForDevice { needed, available })?;
    // Per slot: the range's inputs, then its output; the merge's partitions come from the pool.
    let mut temp = gpu.temp(Slots::bytes(slots, range, kb, word))?;
    let (base, _guard) = temp.device_ptr_mut();
    let (values_in, values_out) = match values {
        Some((av, bv, ov, w)) => (Some((av, bv, w)), Some(ov)),
        None => (None, None),
    };
    let mut ranges = MergeRanges { gpu, a, b, values: values_in, out: bytes_mut(out), out_values: values_out, comp, range, slots: Slots::at(base, range, kb, word), split: (0, 0) };
    let mut pipe = Pipeline::new(gpu)?;
    run_batches(&mut pipe, slots, total.div_ceil(range), &mut ranges)?;
    pipe.finish()
}

/// The ranges of a host-slice merge: range r is the output's items `r * range ..`, cut from
/// A and B by merge path on the host.
struct MergeRanges<'a, K: Key, C> {
    gpu: &'a Gpu,
    a: &'a [K],
    b: &'a [K],
    /// A's and B's values and their word.
    values: Option<(&'a [u8], &'a [u8], usize)>,
    out: &'a mut [u8],
    out_values: Option<&'a mut [u8]>,
    comp: C,
    range: usize,
    slots: Slots,
    /// The items of A and of the output before the next range to upload.
    split: (usize, usize),
}

impl<K: Key, C: Comparator<K>> Batches for MergeRanges<'_, K, C> {
    /// The range's items of A and of B, one after the other in the slot's input.
    type Uploaded = (usize, usize);

    fn upload(&mut self, pipe: &mut Pipeline<'_>, r: usize, s: usize) -> Result<Self::Uploaded> {
        let (a, b, total) = (self.a, self.b, self.a.len() + self.b.len());
        let ((a0, d0), d1) = (self.split, ((r + 1) * self.range).min(total));
        let comp = self.comp;
        let mut split = [a0, if d1 == total { a.len() } else { merge_path(a, b, d1, |x: &K, y: &K| comp.is_less(x, y)) }];
        clamp_splits(&mut split, &[d0, d1], a.len(), b.len());
        let (ra, rb) = (a0..split[1], d0 - a0..d1 - split[1]);
        let input = self.slots.input(s);
        // SAFETY: the range's bytes of the caller's inputs, copied into the slot's input lanes
        // (A's items, then B's), which the merge of the range before in this slot has read
        // (run_batches orders them); the inputs stay borrowed until the pipeline finishes.
        unsafe {
            pipe.upload_slice(input.keys(0..ra.len()).ptr, bytemuck::cast_slice::<K, u8>(&a[ra.clone()]))?;
            pipe.upload_slice(input.keys(ra.len()..ra.len() + rb.len()).ptr, bytemuck::cast_slice::<K, u8>(&b[rb.clone()]))?;
            if let Some((av, bv, w)) = self.values {
                pipe.upload_slice(input.values(0..ra.len()).ptr, &av[ra.start * w..ra.end * w])?;
                pipe.upload_slice(input.values(ra.len()..ra.len() + rb.len()).ptr, &bv[rb.start * w..rb.end * w])?;
            }
        }
        self.split = (split[1], d1);
        Ok((ra.len(), rb.len()))
    }

    fn merge(&mut self, pipe: &mut Pipeline<'_>, s: usize, (a_len, b_len): Self::Uploaded) -> Result<()> {
        let (input, output) = (self.slots.input(s), self.slots.output(s));
        let (gpu, comp) = (self.gpu, self.comp);
        pipe.span(Stream::Kernels, "merge range", || merge_lanes::<K, C>(gpu, (&input, 0..a_len), (&input, a_len..a_len + b_len), (&output, 0), comp))
    }

    fn download(&mut self, pipe: &mut Pipeline<'_>, r: usize, s: usize) -> Result<()> {
        let (output, kb, total) = (self.slots.output(s), std::mem::size_of::<K>(), self.a.len() + self.b.len());
        let d = r * self.range..((r + 1) * self.range).min(total);
        // SAFETY: the range's bytes of the caller's outputs, written from the slot's output
        // lanes after its merge (run_batches orders them); the outputs stay borrowed until the
        // pipeline finishes.
        unsafe {
            pipe.download_slice(&mut self.out[d.start * kb..d.end * kb], output.keys(0..d.len()).ptr)?;
            if let (Some(ov), Some((_, _, w))) = (self.out_values.as_deref_mut(), self.values) {
                pipe.download_slice(&mut ov[d.start * w..d.end * w], output.values(0..d.len()).ptr)?;
            }
        }
        Ok(())
    }
}

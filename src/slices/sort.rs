//! The host-slice sorts: chunks uploaded and sorted as they arrive, runs merged pairwise, the
//! last merge cut into ranges downloaded as each is merged.

use super::merge::merge_lanes;
use super::plan::{bytes_mut, clamp_splits, items_per, Lanes, SortPlan, RANGE_BYTES, SORT_CHUNK_BYTES};
use crate::device::transfer::{work_bytes, Pipeline, Stream};
use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key};
use crate::partition::{launch_partitions, partition_count};
use crate::sort::{launch_iota, launch_sort, sort_temp_bytes};
use cudarc::driver::result;
use std::ops::Range;

/// Values moving with the keys of a host-slice sort.
pub(super) enum Carried<'a> {
    None,
    /// Values in and out, in words of the given bytes.
    Values(&'a mut [u8], usize),
    /// Original positions out (generated on the device), in words of the given bytes.
    Indices(&'a mut [u8], usize),
}

impl Carried<'_> {
    fn word(&self) -> usize {
        match self {
            Carried::None => 0,
            Carried::Values(_, w) | Carried::Indices(_, w) => *w,
        }
    }
}

/// The sort of `keys` (and `carried`) on the GPU: chunks sorted as they arrive, runs merged
/// pairwise, the last merge downloaded range by range.
pub(super) fn sort_host<K: Key, C: Comparator<K>>(gpu: &Gpu, keys: &mut [K], mut carried: Carried<'_>, comp: C) -> Result<()> {
    let n = keys.len();
    if n == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let (kb, word) = (std::mem::size_of::<K>(), carried.word());
    let plan = SortPlan::new(n, kb + word, work_bytes(SORT_CHUNK_BYTES));
    let data_bytes = Lanes::bytes(n, kb, word);
    let merge_bytes = if plan.chunks > 1 { data_bytes } else { 0 };
    gpu.ensure_device_memory(data_bytes + merge_bytes + sort_temp_bytes(plan.chunk, kb, word))?;
    let mut data = gpu.temp(data_bytes)?;
    let mut merge_buf = if plan.chunks > 1 { Some(gpu.temp(data_bytes)?) } else { None };
    let (data_ptr, _data_guard) = data.device_ptr_mut();
    let merge_ptr = merge_buf.as_mut().map(|t| t.device_ptr_mut());
    // Level l's runs are in `bufs[l % 2]`.
    let bufs = [Lanes::at(data_ptr, n, kb, word), Lanes::at(merge_ptr.as_ref().map_or(data_ptr, |(p, _)| *p), n, kb, word)];
    let key_bytes: &mut [u8] = bytes_mut(keys);

    let mut pipe = Pipeline::new(gpu)?;
    // The buffers may be new, or still used by earlier work: both in order on the kernels'
    // stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    if let Carried::Indices(_, w) = carried {
        launch_iota(gpu, &kernels, &bufs[0].values(0..n), w)?;
    }
    for i in 0..plan.chunks {
        let r = plan.run(0, i);
        // SAFETY: the chunk's bytes of the caller's slices, copied into the chunk's place in
        // the data buffer; both stay untouched until the pipeline finishes.
        unsafe {
            pipe.upload_slice(bufs[0].keys(r.clone()).ptr, &key_bytes[r.start * kb..r.end * kb])?;
            if let Carried::Values(v, w) = &carried {
                pipe.upload_slice(bufs[0].values(r.clone()).ptr, &v[r.start * w..r.end * w])?;
            }
        }
        pipe.order(Stream::Upload, Stream::Kernels)?;
        let (k, v) = (bufs[0].keys(r.clone()).ptr, bufs[0].values(r.clone()).ptr);
        pipe.span(Stream::Kernels, "sort chunk", || launch_sort::<K, C>(gpu, k, k, (word > 0).then_some((v, v, word)), r.len(), comp))?;
        for (level, j) in plan.merges_after(i) {
            let (src, dst) = (&bufs[(level as usize - 1) % 2], &bufs[level as usize % 2]);
            let (a, b) = (plan.run(level - 1, 2 * j), plan.run(level - 1, 2 * j + 1));
            pipe.span(Stream::Kernels, "merge runs", || merge_lanes::<K, C>(gpu, (src, a.clone()), (src, b), (dst, a.start), comp))?;
        }
    }
    let levels = plan.levels();
    let out = &bufs[levels as usize % 2];
    let mut download = |pipe: &mut Pipeline<'_>, r: Range<usize>| -> Result<()> {
        pipe.order(Stream::Kernels, Stream::Download)?;
        // SAFETY: the range's bytes of the caller's slices, written from the sorted data; the
        // slices stay borrowed until the pipeline finishes.
        unsafe {
            pipe.download_slice(&mut key_bytes[r.start * kb..r.end * kb], out.keys(r.clone()).ptr)?;
            match &mut carried {
                Carried::None => {}
                Carried::Values(v, w) | Carried::Indices(v, w) => pipe.download_slice(&mut v[r.start * *w..r.end * *w], out.values(r.clone()).ptr)?,
            }
        }
        Ok(())
    };
    if levels == 0 {
        download(&mut pipe, 0..n)?;
        return pipe.finish();
    }
    // The last merge, of runs A and B, cut into ranges by merge path: the splits are
    // computed on the device and read back (a short wait), then each range is merged and
    // downloaded while the next one merges.
    let src = &bufs[(levels as usize - 1) % 2];
    let (a, b) = (plan.run(levels - 1, 0), plan.run(levels - 1, 1));
    let spacing = items_per(work_bytes(RANGE_BYTES), kb + word);
    let count = partition_count(n, spacing);
    let mut parts = gpu.temp(count * 8)?;
    let (parts_ptr, _parts_guard) = parts.device_ptr_mut();
    pipe.span(Stream::Kernels, "partitions", || launch_partitions(gpu, &kernels, &src.keys(a.clone()), &src.keys(b.clone()), spacing, parts_ptr, count))?;
    let mut found = vec![0i64; count];
    // SAFETY: `found` holds the `count` i64 the partition kernel writes; the copy is
    // ordered after it on the stream, and the synchronize below waits for it.
    unsafe { result::memcpy_dtoh_async(&mut found, parts_ptr, gpu.stream().cu_stream()) }?;
    gpu.synchronize()?;
    let diags: Vec<usize> = (0..count).map(|p| (p * spacing).min(n)).collect();
    let mut splits: Vec<usize> = found.iter().map(|&s| usize::try_from(s).unwrap_or(0)).collect();
    clamp_splits(&mut splits, &diags, a.len(), b.len());
    for p in 0..count - 1 {
        let (d0, d1, a0, a1) = (diags[p], diags[p + 1], splits[p], splits[p + 1]);
        let (ra, rb) = (a.start + a0..a.start + a1, b.start + (d0 - a0)..b.start + (d1 - a1));
        pipe.span(Stream::Kernels, "merge range", || merge_lanes::<K, C>(gpu, (src, ra), (src, rb), (out, d0), comp))?;
        download(&mut pipe, d0..d1)?;
    }
    pipe.finish()
}

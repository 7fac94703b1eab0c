//! The host-slice calls that run on the device at once: searches, multiset operations and
//! segmented sorts upload their inputs, run the device algorithm and download the result.

use super::plan::{bytes_mut, search_temp_bytes, Lanes};
use crate::device::buffers::CheckedBuffer;
use crate::device::temp::{temp_aligned, TempLayout};
use crate::device::transfer::{Pipeline, Stream};
use crate::device::Gpu;
use crate::error::{Error, Result};
use super::positions::try_copy;
use super::sort::Carried;
use crate::gather::{launch_iota, position_bytes};
use crate::key::{Comparator, Key, Less, RecordOrder};
use crate::sort::launch_sort_by_words;
use crate::search::{launch_search, SearchOutput};
use crate::segmented::{sort_segments, validate_segment_offsets};
use crate::sets::{launch_set_operation, Output};
use crate::sort::sort_temp_bytes;
use crate::types::SetOperation;

/// Uploads `inputs` (host bytes) into one device buffer (each a region of a temp layout) with room for
/// `outputs` (bytes each) after them, runs `launch` with the device addresses of the inputs and
/// outputs, which returns how many bytes of each output to download, then downloads them into
/// the front of `results` (one host destination per output). `temp_bytes` is what `launch`
/// takes from the temp pool.
fn on_device(gpu: &Gpu, inputs: &[&[u8]], outputs: &[usize], temp_bytes: usize, launch: impl FnOnce(&[u64], &[u64]) -> Result<Vec<usize>>, results: &mut [&mut [u8]]) -> Result<()> {
    let mut layout = TempLayout::default();
    let offsets: Vec<usize> = inputs.iter().map(|i| i.len()).chain(outputs.iter().copied()).map(|b| layout.region(b)).collect();
    let bytes = layout.bytes();
    gpu.ensure_device_memory(bytes + temp_bytes)?;
    let mut temp = gpu.temp(bytes)?;
    let (base, _guard) = temp.device_ptr_mut();
    let addrs: Vec<u64> = offsets.iter().map(|&o| base + o as u64).collect();
    let mut pipe = Pipeline::new(gpu)?;
    // The buffer may be new, or still used by earlier work: both in order on the kernels'
    // stream.
    pipe.order(Stream::Kernels, Stream::Upload)?;
    for (input, &addr) in inputs.iter().zip(&addrs) {
        // SAFETY: the caller's input bytes into their place in the buffer; both stay as they
        // are until the pipeline finishes.
        unsafe { pipe.upload_slice(addr, input) }?;
    }
    pipe.order(Stream::Upload, Stream::Kernels)?;
    let sizes = launch(&addrs[..inputs.len()], &addrs[inputs.len()..])?;
    pipe.order(Stream::Kernels, Stream::Download)?;
    for ((result, &addr), &size) in results.iter_mut().zip(&addrs[inputs.len()..]).zip(&sizes) {
        let size = size.min(result.len());
        // SAFETY: the output's first bytes into the caller's destination, which stays
        // borrowed until the pipeline finishes.
        unsafe { pipe.download_slice(&mut result[..size], addr) }?;
    }
    pipe.finish()
}

impl Gpu {
    /// Searches on the GPU, writing `what` to `outs` (host slices of at least the needles'
    /// length of outputs: the range's lower and upper, or one).
    pub(super) fn search_host<K: Key, C: Comparator<K>>(&self, needles: &[K], haystack: &[K], what: SearchOutput, outs: &mut [&mut [u8]]) -> Result<()> {
        let n = needles.len();
        if n == 0 {
            return Ok(());
        }
        self.kernels::<K, C>()?;
        let kb = std::mem::size_of::<K>();
        let sizes = vec![n * what.word(); outs.len()];
        let mut results: Vec<&mut [u8]> = outs.iter_mut().map(|o| &mut o[..n * what.word()]).collect();
        let launch = |ins: &[u64], outs: &[u64]| {
            let (nd, hd) = (CheckedBuffer::raw(ins[0], n, kb), CheckedBuffer::raw(ins[1], haystack.len(), kb));
            launch_search::<K, C>(self, &nd, &hd, what, outs)?;
            Ok(sizes.clone())
        };
        let inputs: [&[u8]; 2] = [bytemuck::cast_slice(needles), bytemuck::cast_slice(haystack)];
        on_device(self, &inputs, &sizes, search_temp_bytes(n, haystack.len()), launch, &mut results)
    }

    /// `op` of host slices `a` and `b` on the GPU, into `out` (keys, and values with their
    /// word size where given): the result's length, or [`Error::OutputTooSmall`] with it after
    /// writing the result's first items that fit.
    #[allow(clippy::type_complexity)]
    pub(super) fn set_host<K: Key, C: Comparator<K>>(&self, op: SetOperation, a: &[K], b: &[K], out: Option<(&mut [u8], Option<(&[u8], &[u8], &mut [u8], usize)>)>) -> Result<usize> {
        self.kernels::<K, C>()?;
        let kb = std::mem::size_of::<K>();
        let word = out.as_ref().and_then(|o| o.1.as_ref()).map_or(0, |v| v.3);
        let capacity = match &out {
            None => 0,
            Some((keys, values)) => values.as_ref().map_or(keys.len() / kb, |v| (keys.len() / kb).min(v.2.len() / v.3)),
        };
        let room = capacity.min(op.max_len(a.len(), b.len()));
        let mut inputs: Vec<&[u8]> = vec![bytemuck::cast_slice(a), bytemuck::cast_slice(b)];
        if let Some((_, Some((av, bv, _, _)))) = &out {
            inputs.extend([*av, *bv]);
        }
        let outputs = match &out {
            None => Vec::new(),
            Some(_) => vec![room * kb, room * word],
        };
        let mut len = 0;
        let launch = |ins: &[u64], outs: &[u64]| {
            let (ad, bd) = (CheckedBuffer::raw(ins[0], a.len(), kb), CheckedBuffer::raw(ins[1], b.len(), kb));
            let keys = outs.first().map(|&p| CheckedBuffer::raw(p, room, kb));
            let (a_values, b_values, values) = match word {
                0 => (None, None, None),
                _ => (Some(CheckedBuffer::raw(ins[2], a.len(), word)), Some(CheckedBuffer::raw(ins[3], b.len(), word)), Some(CheckedBuffer::raw(outs[1], room, word))),
            };
            let output = match (&keys, &a_values, &b_values, &values) {
                (Some(keys), Some(a_values), Some(b_values), Some(values)) => Output::Pairs { keys, a_values, b_values, values, word },
                (Some(keys), ..) => Output::Keys(keys),
                _ => Output::LenOnly,
            };
            let set_len = launch_set_operation::<K, C>(self, op, &ad, &bd, output)?;
            // The length decides what to download: wait for it here.
            len = usize::try_from(self.download(set_len.device())?[0]).map_err(|_| Error::TooLarge { what: "set result length" })?;
            let written = len.min(room);
            Ok(vec![written * kb, written * word])
        };
        let temp = 24 * ((a.len() + b.len()) / 256 + 2) + 512;
        let mut results: Vec<&mut [u8]> = match out {
            None => Vec::new(),
            Some((keys, None)) => vec![keys],
            Some((keys, Some((_, _, values, _)))) => vec![keys, values],
        };
        on_device(self, &inputs, &outputs, temp, launch, &mut results)?;
        // A length-only call has no output to be short.
        if !results.is_empty() && len > capacity {
            return Err(Error::OutputTooSmall { what: "set operation output", needed: len, got: capacity });
        }
        Ok(len)
    }

    /// The sort of records in host memory by a custom comparator ([`RecordOrder::by_address`]),
    /// on the device at once: the records (and values) uploaded, sorted there by their
    /// addresses with their positions ([`launch_sort_by_words`]), and downloaded into the same
    /// slices; indices are generated on the device. [`Error::TooLargeForDevice`] where it all
    /// does not fit the device budget (there is no sort of them in runs), the slices as they
    /// were.
    pub(super) fn sort_records_resident<K: Key>(&self, keys: &mut [K], carried: Carried<'_>, order: &RecordOrder) -> Result<()> {
        let n = keys.len();
        let (kb, word) = (std::mem::size_of::<K>(), carried.word());
        let records = try_copy(keys)?;
        let (values, mut out) = match carried {
            Carried::None => (None, None),
            Carried::Values(v, _) => (Some(try_copy(v)?), Some(v)),
            Carried::Indices(out, _) => (None, Some(out)),
        };
        let mut inputs: Vec<&[u8]> = vec![bytemuck::cast_slice(&records)];
        inputs.extend(values.as_deref());
        let sizes = vec![n * kb, n * word];
        let launch = |ins: &[u64], outs: &[u64]| {
            let carried = match (&values, word) {
                (_, 0) => None,
                (Some(_), _) => Some((ins[1], outs[1], word)),
                (None, _) => {
                    launch_iota(self, &*self.kernels::<u64, Less>()?, outs[1], n, 0, word)?;
                    Some((outs[1], outs[1], word))
                }
            };
            launch_sort_by_words::<K>(self, order, ins[0], outs[0], carried, n)?;
            Ok(sizes.clone())
        };
        // The addresses and positions, then the address sort's temporaries.
        let temp = temp_aligned(n * 8) + temp_aligned(n * position_bytes(n)) + sort_temp_bytes(n, 8, position_bytes(n));
        let mut results: Vec<&mut [u8]> = vec![bytemuck::cast_slice_mut(keys)];
        results.extend(out.take());
        on_device(self, &inputs, &sizes[..results.len()], temp, launch, &mut results)
    }

    /// The segmented sort of host keys (and values of the given word size) on the GPU: both
    /// uploaded, sorted in place on the device, downloaded into the same slices; the offsets
    /// checked before any key is downloaded ([`sort_segments`] checks them).
    pub(super) fn segments_host<K: Key, C: Comparator<K>>(&self, keys: &mut [K], mut values: Option<(&mut [u8], usize)>, offsets: &[usize], comp: C) -> Result<()> {
        let n = keys.len();
        if n == 0 || offsets.len() < 2 {
            return validate_segment_offsets(offsets, n);
        }
        self.kernels::<K, C>()?;
        let (kb, word) = (std::mem::size_of::<K>(), values.as_ref().map_or(0, |v| v.1));
        let bytes = Lanes::bytes(n, kb, word);
        self.ensure_device_memory(bytes + sort_temp_bytes(n, kb, word) + temp_aligned(offsets.len() * 8))?;
        let mut temp = self.temp(bytes)?;
        let (base, _guard) = temp.device_ptr_mut();
        let lanes = Lanes::at(base, n, kb, word);
        let key_bytes = bytes_mut(keys);
        let mut pipe = Pipeline::new(self)?;
        // The buffer may be new, or still used by earlier work.
        pipe.order(Stream::Kernels, Stream::Upload)?;
        // SAFETY: the caller's slices into the device lanes, then (after the sort) back into
        // the same slices; they stay borrowed until the pipeline finishes, and the downloads
        // are ordered after the uploads (through the kernels' stream).
        unsafe {
            pipe.upload_slice(lanes.keys, key_bytes)?;
            if let Some((v, _)) = &values {
                pipe.upload_slice(lanes.values, v)?;
            }
            pipe.order(Stream::Upload, Stream::Kernels)?;
            sort_segments::<K, C, [usize]>(self, lanes.keys, (word > 0).then_some((lanes.values, word)), n, offsets, comp)?;
            pipe.order(Stream::Kernels, Stream::Download)?;
            pipe.download_slice(key_bytes, lanes.keys)?;
            if let Some((v, _)) = &mut values {
                pipe.download_slice(v, lanes.values)?;
            }
        }
        pipe.finish()
    }
}

//! Moving data between host memory and the device at PCIe speed: page-locked buffers, the
//! [`Gpu`]'s staging pool and copy streams, and host threads that copy between pageable slices
//! and the staging buffers.
//!
//! Pageable memory goes through the staging buffers in pieces: host threads copy a piece into a
//! free staging buffer and a DMA on the upload stream moves it to the device while the threads
//! fill the next one; downloads go the other way, each piece copied out of its staging buffer
//! once its DMA is done. The host threads' copies run while the calling thread enqueues DMAs
//! and kernels ([`Copier::start`](super::staging::Copier::start)), and a sort stages the next
//! chunk's first piece before enqueueing the chunk's kernels ([`Pipeline::stage_next`]).
//! Page-locked memory (a [`PinnedBuffer`], or any memory the driver has pinned) is copied
//! directly. Kernels stay on the `Gpu`'s stream; events order the
//! three streams where data passes from one to the next, so both copy engines and the SMs work
//! at once.

use super::staging::{is_page_locked, PinnedBuffer, Staging, StagingPool};
use crate::tuning::{DIRECT_COPY_BYTES, MAX_COPY_THREADS, STAGING_SLOTS, STAGING_SLOT_BYTES};
use super::timeline;
use super::{oom, Gpu};
use crate::error::{Error, Result};
use bytemuck::Pod;
use cudarc::driver::{result, sys, CudaEvent, CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use std::cell::Cell;

#[cfg(feature = "testing")]
thread_local! {
    /// The transfer steps this thread may still enqueue before one fails
    /// ([`crate::testing::fail_transfer_after`]); `None`: none fails.
    static FAIL_AFTER: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Makes the host-slice transfer step after the next `steps` on this thread fail (`None`:
/// none), for the tests of what a failure in the middle of a pipeline leaves.
#[cfg(feature = "testing")]
pub(crate) fn fail_transfer_after(steps: Option<usize>) {
    FAIL_AFTER.set(steps);
}

/// The failure [`fail_transfer_after`] injects, at the step it names (once); `Ok` otherwise,
/// and always without the `testing` feature.
fn injected_failure() -> Result<()> {
    #[cfg(feature = "testing")]
    if let Some(left) = FAIL_AFTER.get() {
        FAIL_AFTER.set(left.checked_sub(1));
        if left == 0 {
            return Err(Error::Driver(cudarc::driver::DriverError(sys::cudaError_enum::CUDA_ERROR_UNKNOWN)));
        }
    }
    Ok(())
}

/// The copy threads of a `Gpu`'s staging: [`MAX_COPY_THREADS`], and no more than half the host
/// backend's thread count ([`crate::threads::threads`]).
fn copy_threads() -> usize {
    MAX_COPY_THREADS.min(crate::threads::threads() / 2)
}

/// Bytes a transfer of host slices moves per piece of work (sort chunk, merge range); the
/// default is the algorithm's own.
pub(crate) const DEFAULT_WORK_BYTES: usize = 0;

thread_local! {
    static WORK_BYTES: Cell<usize> = const { Cell::new(DEFAULT_WORK_BYTES) };
}

/// The piece of work of host-slice calls on this thread: `default` unless
/// [`crate::slices::with_work_bytes`] overrides it.
pub(crate) fn work_bytes(default: usize) -> usize {
    match WORK_BYTES.with(Cell::get) {
        DEFAULT_WORK_BYTES => default,
        bytes => bytes,
    }
}

/// Runs `f` with host-slice calls on this thread cutting their work into pieces of `bytes`
/// (and staging pieces no larger), restoring the setting afterwards.
pub(crate) fn with_work_bytes<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            WORK_BYTES.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(WORK_BYTES.with(|c| c.replace(bytes)));
    f()
}

/// The three streams of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Host to device copies.
    Upload,
    /// The `Gpu`'s stream, where the kernels run.
    Kernels,
    /// Device to host copies.
    Download,
}

impl Stream {
    /// Its lane on a timeline.
    fn lane(self) -> &'static str {
        match self {
            Stream::Upload => "upload",
            Stream::Kernels => "kernels",
            Stream::Download => "download",
        }
    }
}

/// One call's transfers: the `Gpu`'s staging pool, taken for the call, the host threads, and
/// the downloads whose data still waits in a staging buffer. A call made while another holds
/// the pool copies directly on the `Gpu`'s stream instead (the driver stages pageable memory
/// itself, at pageable speed): making more staging per call costs more than that (tens of
/// megabytes of page-locked memory), and several calls' copy threads would starve each other. Dropping it waits for every copy it enqueued, so nothing in flight
/// outlives the call, on success or error.
pub(crate) struct Pipeline<'a> {
    gpu: &'a Gpu,
    staging: Option<Staging>,
    next: usize,
    /// Per staging buffer: a download's destination and length, copied out before the buffer
    /// is used again.
    pending: Vec<Option<(usize, usize)>>,
    /// The staging copy the host threads are doing while this thread enqueues other work.
    copying: Option<StagingCopy>,
    piece_bytes: usize,
}

/// A copy between a staging buffer and host memory, running on the host threads.
#[derive(Clone, Copy)]
struct StagingCopy {
    slot: usize,
    /// Into the buffer: the upload piece's source and length. Out of it (`None`): the
    /// buffer's pending download.
    into: Option<(usize, usize)>,
    started: Option<std::time::Instant>,
}

impl<'a> Pipeline<'a> {
    pub(crate) fn new(gpu: &'a Gpu) -> Result<Self> {
        gpu.context().bind_to_thread()?;
        let pooled = std::mem::replace(&mut *gpu.staging.lock().unwrap_or_else(|p| p.into_inner()), StagingPool::Lent);
        let staging = match pooled {
            StagingPool::Free(staging) => Some(staging),
            StagingPool::Unmade => match Staging::new(gpu.context(), copy_threads()) {
                Ok(staging) => Some(staging),
                Err(e) => {
                    *gpu.staging.lock().unwrap_or_else(|p| p.into_inner()) = StagingPool::Unmade;
                    return Err(e);
                }
            },
            StagingPool::Lent => None,
        };
        if let Some(staging) = &staging {
            staging.copier.set_active(true);
        }
        let piece_bytes = STAGING_SLOT_BYTES.min(work_bytes(STAGING_SLOT_BYTES)).max(1);
        Ok(Pipeline { gpu, staging, next: 0, pending: vec![None; STAGING_SLOTS], copying: None, piece_bytes })
    }

    fn staging(&self) -> &Staging {
        self.staging.as_ref().expect("staging present until drop")
    }

    fn stream(&self, which: Stream) -> sys::CUstream {
        match (which, &self.staging) {
            (Stream::Upload, Some(staging)) => staging.upload.0,
            (Stream::Download, Some(staging)) => staging.download.0,
            _ => self.gpu.stream().cu_stream(),
        }
    }

    /// An event recorded on `on` now: it completes when everything enqueued there so far has.
    pub(crate) fn record(&self, on: Stream) -> Result<CudaEvent> {
        let event = self.gpu.context().new_event(None)?;
        // SAFETY: both handles belong to the bound context.
        unsafe { result::event::record(event.cu_event(), self.stream(on)) }?;
        Ok(event)
    }

    /// Runs `f`, which enqueues work on `on`, as a span of the timeline if one is recorded
    /// ([`crate::timeline`]).
    pub(crate) fn span<R>(&self, on: Stream, what: &'static str, f: impl FnOnce() -> Result<R>) -> Result<R> {
        timeline::device_span(self.gpu, on.lane(), self.stream(on), what, f)
    }

    /// Makes `stream` wait for `event` before what is enqueued on it next.
    pub(crate) fn wait(&self, stream: Stream, event: &CudaEvent) -> Result<()> {
        // SAFETY: both handles belong to the bound context; the wait takes the event's state now.
        unsafe { result::stream::wait_event(self.stream(stream), event.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }?;
        Ok(())
    }

    /// Makes `to` wait for everything enqueued on `from` so far.
    pub(crate) fn order(&self, from: Stream, to: Stream) -> Result<()> {
        self.wait(to, &self.record(from)?)
    }

    fn staging_mut(&mut self) -> &mut Staging {
        self.staging.as_mut().expect("staging present until drop")
    }

    /// Waits for the staging copy in flight, if any: a copy out has then emptied its buffer; a
    /// copy in holds its piece in its buffer.
    fn settle(&mut self) {
        let Some(copy) = self.copying.take() else { return };
        self.staging_mut().copier.wait();
        if copy.into.is_none() {
            self.pending[copy.slot] = None;
        }
        timeline::host_span_end(if copy.into.is_some() { "copy in" } else { "copy out" }, copy.started);
    }

    /// The next staging buffer, once its last copy has finished and a download's data in it
    /// has been copied out (a piece staged ahead for an upload that did not come is dropped).
    fn take_slot(&mut self) -> Result<usize> {
        self.settle();
        let s = self.next;
        self.next = (s + 1) % STAGING_SLOTS;
        self.staging().events[s].synchronize()?;
        if let Some((dst, bytes)) = self.pending[s].take() {
            let staging = self.staging_mut();
            let slot = staging.slots[s].as_ptr();
            // SAFETY: the download into the slot has finished (event above); `dst` is the
            // caller's destination, valid until `finish` by `download`'s contract.
            timeline::host_span("copy out", || unsafe { staging.copier.copy(dst as *mut u8, slot, bytes) });
        }
        Ok(s)
    }

    /// Starts copying the upload piece `src..src + len` into a staging buffer on the host
    /// threads, unless that copy is already running: returns its buffer.
    ///
    /// # Safety
    /// `src` readable for `len` bytes until `finish` or drop.
    unsafe fn start_copy_in(&mut self, src: *const u8, len: usize) -> Result<usize> {
        let into = Some((src as usize, len));
        if let Some(copy) = self.copying.filter(|c| c.into == into) {
            return Ok(copy.slot);
        }
        let s = self.take_slot()?;
        let staging = self.staging_mut();
        let slot = staging.slots[s].as_mut_ptr();
        // SAFETY: the slot is free (taken above) and holds `len` <= its size; `src` stays
        // readable by this function's contract; `settle` (on every path: drop too) waits for it.
        unsafe { staging.copier.start(slot, src, len) };
        self.copying = Some(StagingCopy { slot: s, into, started: timeline::host_span_start() });
        Ok(s)
    }

    /// Starts copying out, on the host threads, the oldest download still in a staging buffer
    /// once its DMA has finished, unless the host threads are busy.
    fn start_copy_out(&mut self) -> Result<()> {
        let t = self.next;
        let (None, Some((dst, bytes))) = (self.copying, self.pending[t]) else { return Ok(()) };
        self.staging().events[t].synchronize()?;
        let staging = self.staging_mut();
        let slot = staging.slots[t].as_ptr();
        // SAFETY: the download into the slot has finished (event above); `dst` is the caller's
        // destination, valid until `finish` by `download`'s contract; `settle` waits for it.
        unsafe { staging.copier.start(dst as *mut u8, slot, bytes) };
        self.copying = Some(StagingCopy { slot: t, into: None, started: timeline::host_span_start() });
        Ok(())
    }

    /// Stages the first piece of a coming [`Pipeline::upload`] of `bytes` at `src`: its copy
    /// into a staging buffer runs on the host threads while this thread enqueues other work,
    /// and that upload starts from it.
    ///
    /// # Safety
    /// `src` readable for `bytes` until `finish` or drop.
    pub(crate) unsafe fn stage_next(&mut self, src: *const u8, bytes: usize) -> Result<()> {
        if self.staging.is_none() || bytes == 0 || is_page_locked(src, bytes) {
            return Ok(());
        }
        // SAFETY: forwarded.
        unsafe { self.start_copy_in(src, self.piece_bytes.min(bytes)) }.map(drop)
    }

    /// Enqueues the copy of `bytes` host bytes at `src` to device address `dst` on the upload
    /// stream: directly where `src` is page-locked, else through staging buffers (the host part
    /// done before this returns).
    ///
    /// # Safety
    /// `src` readable for `bytes` and `dst` device memory writable for `bytes`, both until
    /// `finish` or drop, and nothing else writing either meanwhile.
    pub(crate) unsafe fn upload(&mut self, dst: sys::CUdeviceptr, src: *const u8, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let upload = self.stream(Stream::Upload);
        if self.staging.is_none() || is_page_locked(src, bytes) {
            injected_failure()?;
            // SAFETY: forwarded from this function's contract; page-locked memory is read until
            // the stream reaches the copy, pageable memory is staged by the driver before the
            // call returns.
            return self.span(Stream::Upload, "direct upload", || Ok(unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, upload) }.result()?));
        }
        // Each piece's copy into its staging buffer runs on the host threads while this thread
        // enqueues the DMA of the piece before it.
        let mut off = 0;
        // SAFETY: the first piece lies inside the caller's range.
        let mut s = unsafe { self.start_copy_in(src, self.piece_bytes.min(bytes)) }?;
        loop {
            let len = self.piece_bytes.min(bytes - off);
            self.settle();
            let rest = bytes - off - len;
            // SAFETY: the next piece lies inside the caller's range.
            let next = if rest > 0 { Some(unsafe { self.start_copy_in(src.add(off + len), self.piece_bytes.min(rest)) }?) } else { None };
            injected_failure()?;
            let slot = self.staging().slots[s].as_ptr();
            // SAFETY: the slot holds the piece (settled above) and stays untouched until its
            // event completes; `dst + off` is inside the caller's range.
            self.span(Stream::Upload, "staged upload", || Ok(unsafe { sys::cuMemcpyHtoDAsync_v2(dst + off as u64, slot.cast(), len, upload) }.result()?))?;
            // SAFETY: both handles belong to the bound context.
            unsafe { result::event::record(self.staging().events[s].cu_event(), upload) }?;
            off += len;
            match next {
                Some(n) => s = n,
                None => return Ok(()),
            }
        }
    }

    /// Enqueues the copy of `bytes` device bytes at `src` to host memory at `dst` on the
    /// download stream: directly where `dst` is page-locked, else through staging buffers,
    /// copied out when the buffer is next taken or at `finish`.
    ///
    /// # Safety
    /// `dst` writable for `bytes` and `src` readable for `bytes`, both until `finish` or drop,
    /// and nothing else accessing `dst` meanwhile.
    pub(crate) unsafe fn download(&mut self, dst: *mut u8, src: sys::CUdeviceptr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let download = self.stream(Stream::Download);
        if self.staging.is_none() || is_page_locked(dst, bytes) {
            injected_failure()?;
            // SAFETY: forwarded from this function's contract (a copy into pageable memory
            // returns when it is done).
            return self.span(Stream::Download, "direct download", || Ok(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, download) }.result()?));
        }
        let mut off = 0;
        while off < bytes {
            let len = self.piece_bytes.min(bytes - off);
            injected_failure()?;
            let s = self.take_slot()?;
            // The oldest download's copy out runs on the host threads while this DMA is enqueued.
            self.start_copy_out()?;
            let slot = self.staging_mut().slots[s].as_mut_ptr();
            // SAFETY: the slot is free and page-locked; `src + off` is inside the caller's range.
            self.span(Stream::Download, "staged download", || Ok(unsafe { sys::cuMemcpyDtoHAsync_v2(slot.cast(), src + off as u64, len, download) }.result()?))?;
            // SAFETY: both handles belong to the bound context.
            unsafe { result::event::record(self.staging().events[s].cu_event(), download) }?;
            // SAFETY (for the copy out): `dst + off` is inside the caller's range.
            self.pending[s] = Some((dst as usize + off, len));
            off += len;
        }
        Ok(())
    }

    /// [`Pipeline::upload`] of a slice.
    ///
    /// # Safety
    /// As `upload`: `src` stays as it is, and `dst` holds `src`'s bytes, until `finish` or drop.
    pub(crate) unsafe fn upload_slice<T: Pod>(&mut self, dst: sys::CUdeviceptr, src: &[T]) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.upload(dst, src.as_ptr().cast(), std::mem::size_of_val(src)) }
    }

    /// [`Pipeline::download`] into a slice.
    ///
    /// # Safety
    /// As `download`: `dst` stays borrowed by the caller, untouched, until `finish` or drop.
    pub(crate) unsafe fn download_slice<T: Pod>(&mut self, dst: &mut [T], src: sys::CUdeviceptr) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.download(dst.as_mut_ptr().cast(), src, std::mem::size_of_val(dst)) }
    }

    /// Waits for every copy and copies the staged downloads out: the host memory holds them
    /// afterwards.
    pub(crate) fn finish(mut self) -> Result<()> {
        if self.staging.is_some() {
            for _ in 0..STAGING_SLOTS {
                self.take_slot()?;
            }
        }
        for stream in [Stream::Upload, Stream::Download] {
            // SAFETY: a stream of the bound context.
            unsafe { result::stream::synchronize(self.stream(stream)) }?;
        }
        Ok(())
    }
}

impl Drop for Pipeline<'_> {
    fn drop(&mut self) {
        // No copy may still read or write the caller's memory or the device buffers once the
        // call returns, on success or error.
        let ctx = self.gpu.context();
        ctx.record_err(ctx.bind_to_thread());
        if self.staging.is_some() {
            self.settle();
        }
        for stream in [Stream::Upload, Stream::Download] {
            // SAFETY: a stream of the bound context.
            ctx.record_err(unsafe { result::stream::synchronize(self.stream(stream)) });
        }
        let Some(staging) = self.staging.take() else { return };
        staging.copier.set_active(false);
        *self.gpu.staging.lock().unwrap_or_else(|p| p.into_inner()) = StagingPool::Free(staging);
    }
}

impl Gpu {
    /// Copies a host slice to a new device buffer, through the pinned staging buffers (host
    /// threads copy pageable memory into them while the copy engine moves earlier pieces;
    /// page-locked memory, such as a [`PinnedBuffer`](crate::PinnedBuffer), and slices of up
    /// to 1 MiB are copied directly). Returns when the copy is done.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let bytes = std::mem::size_of_val(host);
        // SAFETY: every byte is written by the copy below before the buffer is returned.
        let mut buf = unsafe { self.stream.alloc::<T>(host.len()) }.map_err(|e| oom(e, bytes))?;
        if bytes > DIRECT_COPY_BYTES {
            let (ptr, _guard) = buf.device_ptr_mut(&self.stream);
            let mut pipe = Pipeline::new(self)?;
            // The allocation is ordered on this handle's stream.
            pipe.order(Stream::Kernels, Stream::Upload)?;
            // SAFETY: `host` holds `bytes` and stays borrowed until `finish`; `buf` holds
            // `bytes`. DeviceRepr types are copied as plain bytes, as cudarc copies them.
            unsafe { pipe.upload(ptr, host.as_ptr().cast(), bytes) }?;
            pipe.finish()?;
        } else if bytes > 0 {
            self.stream.memcpy_htod(host, &mut buf)?;
            self.synchronize()?;
        }
        Ok(buf)
    }

    /// A slice's bytes in a new device buffer (one byte for an empty slice, so no allocation
    /// is empty).
    pub(crate) fn upload_bytes<T: bytemuck::Pod>(&self, host: &[T]) -> Result<CudaSlice<u8>> {
        match host.is_empty() {
            true => self.upload(&[0u8]),
            false => self.upload(bytemuck::cast_slice::<T, u8>(host)),
        }
    }

    /// Copies a small host table (launch parameters, a few KB to a few MB) to a new device
    /// buffer with one copy in stream order, without the staging pipeline: for tables a host
    /// plan builds between launches, where the pipeline's setup would cost more than the copy.
    pub(crate) fn upload_table<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        Ok(self.stream.clone_htod(host)?)
    }

    /// Copies a small device table into `host` (as long as it) with one copy, waiting for the
    /// work before it on the stream: the counterpart of [`Gpu::upload_table`].
    pub(crate) fn download_table<T: DeviceRepr>(&self, buf: &CudaSlice<T>, host: &mut [T]) -> Result<()> {
        if host.len() != buf.len() {
            return Err(Error::LengthMismatch { what: "host", expected: buf.len(), got: host.len() });
        }
        self.stream.memcpy_dtoh(buf, host)?;
        self.synchronize()
    }

    /// Copies a device buffer into `host` (its length: [`Error::LengthMismatch`] otherwise),
    /// after the work enqueued on the stream that writes it, through the pinned staging
    /// buffers (directly into page-locked memory). Unlike [`Gpu::download`], it writes memory
    /// the caller already has, so no page is touched for the first time.
    pub fn download_into<T: DeviceRepr, S: DevicePtr<T>>(&self, buf: &S, host: &mut [T]) -> Result<()> {
        if host.len() != buf.len() {
            return Err(Error::LengthMismatch { what: "host", expected: buf.len(), got: host.len() });
        }
        self.check_context("buf", buf)?;
        let bytes = std::mem::size_of_val(host);
        if bytes == 0 {
            return Ok(());
        }
        let (ptr, _guard) = buf.device_ptr(&self.stream);
        let mut pipe = Pipeline::new(self)?;
        pipe.order(Stream::Kernels, Stream::Download)?;
        // SAFETY: `host` holds `bytes` and stays borrowed until `finish`; so does `buf`.
        unsafe { pipe.download(host.as_mut_ptr().cast(), ptr, bytes) }?;
        pipe.finish()
    }

    /// Copies a device buffer to a new `Vec`, waiting for the work that writes it (as
    /// [`Gpu::download_into`]; the host threads that copy out of the staging buffers also take
    /// the new memory's first-touch page faults, in parallel).
    pub fn download<T: DeviceRepr, S: DevicePtr<T>>(&self, buf: &S) -> Result<Vec<T>> {
        self.check_context("buf", buf)?;
        let len = buf.len();
        let bytes = len * std::mem::size_of::<T>();
        if bytes == 0 {
            return Ok(Vec::new());
        }
        if bytes <= DIRECT_COPY_BYTES {
            let out = self.stream.clone_dtoh(buf)?;
            self.synchronize()?;
            return Ok(out);
        }
        let mut out: Vec<T> = Vec::with_capacity(len);
        {
            let (ptr, _guard) = buf.device_ptr(&self.stream);
            let mut pipe = Pipeline::new(self)?;
            pipe.order(Stream::Kernels, Stream::Download)?;
            // SAFETY: the vector's spare capacity holds `bytes` and stays alive until
            // `finish`; so does `buf`.
            unsafe { pipe.download(out.as_mut_ptr().cast(), ptr, bytes) }?;
            pipe.finish()?;
        }
        // SAFETY: all `len` elements were written by the finished copy, with the bytes the
        // device holds for them (as cudarc's own downloads give them).
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// `len` zeroed values of `T` in page-locked host memory, which the host-slice calls and
    /// [`Gpu::upload`] / [`Gpu::download_into`] copy directly, at full speed.
    pub fn alloc_pinned<T: bytemuck::Pod>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        PinnedBuffer::zeroed(&self.ctx, len)
    }

    /// A copy of `data` in page-locked host memory (see [`Gpu::alloc_pinned`]).
    pub fn pinned_from<T: bytemuck::Pod>(&self, data: &[T]) -> Result<PinnedBuffer<T>> {
        let mut buf = self.alloc_pinned(data.len())?;
        buf.copy_from_slice(data);
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_bytes_override_is_scoped() {
        assert_eq!(work_bytes(123), 123);
        with_work_bytes(4096, || assert_eq!(work_bytes(123), 4096));
        assert_eq!(work_bytes(123), 123);
    }
}

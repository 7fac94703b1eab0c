//! Moving data between host memory and the device at PCIe speed: page-locked buffers, the
//! [`Gpu`]'s staging pool and copy streams, and host threads that copy between pageable slices
//! and the staging buffers.
//!
//! Pageable memory goes through the staging buffers in pieces: host threads copy a piece into a
//! free staging buffer and a DMA on the upload stream moves it to the device while the threads
//! fill the next one; downloads go the other way, each piece copied out of its staging buffer
//! when the buffer is next needed. Page-locked memory (a [`PinnedBuffer`], or any memory the
//! driver has pinned) is copied directly. Kernels stay on the `Gpu`'s stream; events order the
//! three streams where data passes from one to the next, so both copy engines and the SMs work
//! at once.

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::timeline;
use bytemuck::Pod;
use cudarc::driver::{result, sys, CudaContext, CudaEvent, DriverError};
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

/// Staging buffers per `Gpu`, and the bytes of each: a piece of a pageable transfer. Pieces of
/// 8 MiB keep a DMA near its peak rate and give each host thread a megabyte per piece; six of
/// them let the host threads run ahead of the copy engines in both directions at once.
const STAGING_SLOTS: usize = 6;
const STAGING_SLOT_BYTES: usize = 8 << 20;

/// Host threads copying to and from the staging buffers at most, and at most half the host's
/// cores (the copies share the cores with the driver's threads and the caller's work: a helper
/// descheduled for a time slice stalls every piece). Measured on a 16-core host
/// (`benches/tune/staged_copy.cu`): a staged 256 MiB upload runs at 46 GB/s on 8 threads,
/// against the copy engine's 55.
const MAX_COPY_THREADS: usize = 8;

/// The smallest part of a copy handed to another thread.
const MIN_PART_BYTES: usize = 1 << 20;

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

/// Page-locked host memory holding `len` values of `T`, usable as a slice.
///
/// The host-slice calls of [`Gpu`] (and [`Gpu::upload`], [`Gpu::download_into`]) copy
/// page-locked memory with direct DMAs, at the copy engines' full rate and with no staging
/// copy; pageable memory, such as a `Vec`'s, goes through the `Gpu`'s staging buffers.
/// Allocating page-locked memory is slow (tens of ms per GB): keep buffers for reuse.
pub struct PinnedBuffer<T: Pod> {
    ptr: NonNull<T>,
    len: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the buffer owns its memory as a `Box<[T]>` does, and `T: Pod` is `Send + Sync`.
unsafe impl<T: Pod> Send for PinnedBuffer<T> {}
// SAFETY: as above; shared access gives only `&[T]`.
unsafe impl<T: Pod> Sync for PinnedBuffer<T> {}

impl<T: Pod> PinnedBuffer<T> {
    /// `len` zeroed values in page-locked memory of `ctx`, usable from every context
    /// (`CU_MEMHOSTALLOC_PORTABLE`).
    pub(crate) fn zeroed(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or(Error::TooLarge { what: "pinned buffer size" })?;
        if bytes == 0 {
            return Ok(PinnedBuffer { ptr: NonNull::dangling(), len, ctx: ctx.clone() });
        }
        ctx.bind_to_thread()?;
        // SAFETY: allocates `bytes` of page-locked memory, zeroed below before any use.
        let raw = unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_PORTABLE) }.map_err(|e| match e.0 {
            sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => Error::HostOutOfMemory { bytes },
            _ => Error::Driver(e),
        })?;
        let ptr = NonNull::new(raw.cast::<T>()).ok_or(Error::HostOutOfMemory { bytes })?;
        // SAFETY: the allocation holds `bytes` and is page-aligned, so aligned for `T`; zero
        // bits are a valid `T` (Pod).
        unsafe { std::ptr::write_bytes(ptr.as_ptr().cast::<u8>(), 0, bytes) };
        Ok(PinnedBuffer { ptr, len, ctx: ctx.clone() })
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Pod> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialized values (zeroed at allocation) or is dangling
        // with a zero-byte length; the buffer owns them.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if self.len * std::mem::size_of::<T>() == 0 {
            return;
        }
        // Every copy mergepath enqueues on this memory has finished before its call returned.
        self.ctx.record_err(self.ctx.bind_to_thread());
        // SAFETY: the pointer came from `malloc_host` and is freed once.
        self.ctx.record_err(unsafe { result::free_host(self.ptr.as_ptr().cast()) });
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Whether the driver has `bytes` at `ptr` page-locked (so a DMA can read or write them
/// directly): its first and last byte lie in pinned host memory. Needs the context bound.
pub(crate) fn is_page_locked(ptr: *const u8, bytes: usize) -> bool {
    let host = |p: *const u8| {
        let mut memory_type = 0u32;
        let mut attribute = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        let mut data = (&mut memory_type as *mut u32).cast::<std::ffi::c_void>();
        // SAFETY: asks one attribute, a CUmemorytype (an unsigned int), into `memory_type`.
        // Unlike cuPointerGetAttribute, this call succeeds for memory the driver does not know
        // (leaving 0), so pageable memory raises no API error (which compute-sanitizer reports).
        let r = unsafe { sys::cuPointerGetAttributes(1, &mut attribute, &mut data, p as sys::CUdeviceptr) };
        r == sys::cudaError_enum::CUDA_SUCCESS && memory_type == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
    };
    bytes > 0 && host(ptr) && host(ptr.wrapping_add(bytes - 1))
}

/// Host threads copying memory in parallel: the calling thread and helper threads, each taking
/// an equal part of every copy. A staging piece takes a thread about 0.2 ms, and waking a parked
/// thread (in a virtual machine especially) can take as long, so while a call runs
/// ([`Copier::set_active`]) helpers wait for the next piece spinning; between calls they park.
/// They are started on the first copy that needs them and kept (in the `Gpu`'s pool, with the
/// staging buffers), so a call pays no thread start.
pub(crate) struct Copier {
    team: Arc<Team>,
    helpers: Vec<std::thread::JoinHandle<()>>,
    /// Threads (the caller's included) a copy takes at most.
    max_threads: usize,
}

/// What the calling thread and its helpers share: the current copy, a generation number
/// bumped for each, and the count of helpers done with it.
#[derive(Default)]
struct Team {
    generation: AtomicUsize,
    done: AtomicUsize,
    quit: AtomicBool,
    active: AtomicBool,
    dst: AtomicUsize,
    src: AtomicUsize,
    bytes: AtomicUsize,
    parts: AtomicUsize,
}

impl Team {
    /// Copies part `i` of the current copy, of `parts` equal parts (64-byte multiples).
    ///
    /// # Safety
    /// The current copy's `src` readable and `dst` writable for `bytes`, not overlapping.
    unsafe fn run(&self, i: usize) {
        let (dst, src, bytes) = (self.dst.load(Relaxed), self.src.load(Relaxed), self.bytes.load(Relaxed));
        let step = bytes.div_ceil(self.parts.load(Relaxed)).next_multiple_of(64);
        let off = (i * step).min(bytes);
        // SAFETY: a part of the current copy's ranges, by this function's contract.
        unsafe { std::ptr::copy_nonoverlapping((src + off) as *const u8, (dst + off) as *mut u8, step.min(bytes - off)) };
    }

    /// A helper's life: waits for each new copy, does its part, says so.
    fn helper(&self, i: usize, mut seen: usize) {
        loop {
            let mut spins = 0u32;
            loop {
                if self.quit.load(Acquire) {
                    return;
                }
                if self.generation.load(Acquire) != seen {
                    break;
                }
                if spins < SPINS || self.active.load(Relaxed) {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    // `Copier::copy` unparks every helper after publishing a copy, so the
                    // wake-up is not lost if it comes before this.
                    std::thread::park();
                }
            }
            seen = self.generation.load(Acquire);
            if i < self.parts.load(Relaxed) {
                // SAFETY: `Copier::copy` published this copy (generation bumped after its
                // fields) and waits for every helper's `done` before returning.
                unsafe { self.run(i) };
            }
            self.done.fetch_add(1, Release);
        }
    }
}

/// Spins a helper makes waiting for work before it parks: about a millisecond, several pieces.
const SPINS: u32 = 1 << 14;

impl Copier {
    /// A copier of up to [`MAX_COPY_THREADS`] threads, and no more than half the host backend's
    /// thread count ([`crate::host::threads`]).
    fn new() -> Self {
        let max_threads = MAX_COPY_THREADS.min(crate::host::threads() / 2).max(1);
        Copier { team: Arc::new(Team::default()), helpers: Vec::new(), max_threads }
    }

    /// Whether a call is running: its helpers then spin between copies instead of parking.
    fn set_active(&self, active: bool) {
        self.team.active.store(active, Relaxed);
        if active {
            for h in &self.helpers {
                h.thread().unpark();
            }
        }
    }

    /// Copies `bytes` from `src` to `dst`, split among the threads; returns when all of it is
    /// done.
    ///
    /// # Safety
    /// `src` readable and `dst` writable for `bytes`, the two not overlapping.
    pub(crate) unsafe fn copy(&mut self, dst: *mut u8, src: *const u8, bytes: usize) {
        let parts = self.max_threads.min(bytes.div_ceil(MIN_PART_BYTES)).max(1);
        while self.helpers.len() + 1 < parts {
            // No copy is in flight: the helper starts at the current generation.
            let (team, i, now) = (self.team.clone(), self.helpers.len() + 1, self.team.generation.load(Acquire));
            match std::thread::Builder::new().name("mergepath-copy".into()).spawn(move || team.helper(i, now)) {
                Ok(handle) => self.helpers.push(handle),
                // No more threads: fewer parts.
                Err(_) => break,
            }
        }
        let parts = parts.min(self.helpers.len() + 1);
        let team = &*self.team;
        team.dst.store(dst as usize, Relaxed);
        team.src.store(src as usize, Relaxed);
        team.bytes.store(bytes, Relaxed);
        team.parts.store(parts, Relaxed);
        if parts == 1 {
            // SAFETY: the whole copy, by this function's contract.
            return unsafe { team.run(0) };
        }
        team.done.store(0, Relaxed);
        team.generation.fetch_add(1, Release);
        for h in &self.helpers {
            h.thread().unpark();
        }
        // SAFETY: the first part of the caller's ranges.
        unsafe { team.run(0) };
        // Every helper answers each generation (helpers only end when the copier drops).
        let mut spins = 0u32;
        while team.done.load(Acquire) != self.helpers.len() {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Drop for Copier {
    fn drop(&mut self) {
        self.team.quit.store(true, Release);
        for h in self.helpers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// A stream of the copy engines, made with raw driver calls so that the context does not enter
/// cudarc's multi-stream mode (which records events on every buffer access).
struct CopyStream(sys::CUstream);

impl CopyStream {
    fn new() -> Result<Self> {
        Ok(CopyStream(result::stream::create(result::stream::StreamKind::NonBlocking)?))
    }
}

impl Drop for CopyStream {
    fn drop(&mut self) {
        // SAFETY: the stream was created by `CopyStream::new` in the bound context and is
        // destroyed once, after its work.
        unsafe {
            let _ = result::stream::synchronize(self.0);
            let _ = result::stream::destroy(self.0);
        }
    }
}

/// What a `Gpu` keeps for moving host data: the staging buffers, an event per buffer (the last
/// copy through it), and the upload and download streams.
pub(crate) struct Staging {
    // Fields drop in this order: the streams (which hold no reference to the context) before
    // the buffers and events, whose references keep the context alive.
    upload: CopyStream,
    download: CopyStream,
    copier: Copier,
    slots: Vec<PinnedBuffer<u8>>,
    events: Vec<CudaEvent>,
    ctx: Arc<CudaContext>,
}

// SAFETY: the streams and events are driver handles usable from any thread once the context is
// bound; the buffers are `Send`.
unsafe impl Send for Staging {}

impl Staging {
    fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        ctx.bind_to_thread()?;
        Ok(Staging {
            upload: CopyStream::new()?,
            download: CopyStream::new()?,
            copier: Copier::new(),
            slots: (0..STAGING_SLOTS).map(|_| PinnedBuffer::zeroed(ctx, STAGING_SLOT_BYTES)).collect::<Result<_>>()?,
            events: (0..STAGING_SLOTS).map(|_| ctx.new_event(None)).collect::<Result<_, DriverError>>()?,
            ctx: ctx.clone(),
        })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The streams and buffers are released in this context after this.
        self.ctx.record_err(self.ctx.bind_to_thread());
    }
}

/// The `Gpu`'s staging, lent to one call at a time.
pub(crate) enum StagingPool {
    /// Not made yet (or given back by `Gpu::free_pools`): the next call makes it.
    Unmade,
    /// Made, and free for the next call.
    Free(Staging),
    /// Lent to a call in progress.
    Lent,
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
    /// Per staging buffer: a download's destination and length, copied out when the buffer is
    /// next taken.
    pending: Vec<Option<(usize, usize)>>,
    piece_bytes: usize,
}

impl<'a> Pipeline<'a> {
    pub(crate) fn new(gpu: &'a Gpu) -> Result<Self> {
        gpu.context().bind_to_thread()?;
        let pooled = std::mem::replace(&mut *gpu.staging.lock().unwrap_or_else(|p| p.into_inner()), StagingPool::Lent);
        let staging = match pooled {
            StagingPool::Free(staging) => Some(staging),
            StagingPool::Unmade => match Staging::new(gpu.context()) {
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
        Ok(Pipeline { gpu, staging, next: 0, pending: vec![None; STAGING_SLOTS], piece_bytes })
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
        timeline::device_span(self.gpu, on, self.stream(on), what, f)
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

    /// The next staging buffer, once its last copy has finished and a download's data in it
    /// has been copied out.
    fn take_slot(&mut self) -> Result<usize> {
        let s = self.next;
        self.next = (s + 1) % STAGING_SLOTS;
        self.staging().events[s].synchronize()?;
        if let Some((dst, bytes)) = self.pending[s].take() {
            let staging = self.staging.as_mut().expect("staging present until drop");
            let slot = staging.slots[s].as_ptr();
            // SAFETY: the download into the slot has finished (event above); `dst` is the
            // caller's destination, valid until `finish` by `download`'s contract.
            timeline::host_span("copy out", || unsafe { staging.copier.copy(dst as *mut u8, slot, bytes) });
        }
        Ok(s)
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
            // SAFETY: forwarded from this function's contract; page-locked memory is read until
            // the stream reaches the copy, pageable memory is staged by the driver before the
            // call returns.
            return self.span(Stream::Upload, "direct upload", || Ok(unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, upload) }.result()?));
        }
        let mut off = 0;
        while off < bytes {
            let len = self.piece_bytes.min(bytes - off);
            let s = self.take_slot()?;
            let staging = self.staging.as_mut().expect("staging present until drop");
            let slot = staging.slots[s].as_mut_ptr();
            // SAFETY: the slot is free (taken above) and holds `len`; `src + off` is inside
            // the caller's range.
            timeline::host_span("copy in", || unsafe { staging.copier.copy(slot, src.add(off), len) });
            // SAFETY: the slot is page-locked and stays untouched until its event completes;
            // `dst + off` is inside the caller's range.
            self.span(Stream::Upload, "staged upload", || Ok(unsafe { sys::cuMemcpyHtoDAsync_v2(dst + off as u64, slot.cast_const().cast(), len, upload) }.result()?))?;
            // SAFETY: both handles belong to the bound context.
            unsafe { result::event::record(self.staging().events[s].cu_event(), upload) }?;
            off += len;
        }
        Ok(())
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
            // SAFETY: forwarded from this function's contract (a copy into pageable memory
            // returns when it is done).
            return self.span(Stream::Download, "direct download", || Ok(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, download) }.result()?));
        }
        let mut off = 0;
        while off < bytes {
            let len = self.piece_bytes.min(bytes - off);
            let s = self.take_slot()?;
            let slot = self.staging.as_mut().expect("staging present until drop").slots[s].as_mut_ptr();
            // SAFETY: the slot is free and page-locked; `src + off` is inside the caller's range.
            self.span(Stream::Download, "staged download", || Ok(unsafe { sys::cuMemcpyDtoHAsync_v2(slot.cast(), src + off as u64, len, download) }.result()?))?;
            // SAFETY: both handles belong to the bound context.
            unsafe { result::event::record(self.staging().events[s].cu_event(), download) }?;
            // SAFETY (for the copy out in `take_slot`): `dst + off` is inside the caller's range.
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
        for stream in [Stream::Upload, Stream::Download] {
            // SAFETY: a stream of the bound context.
            ctx.record_err(unsafe { result::stream::synchronize(self.stream(stream)) });
        }
        let Some(staging) = self.staging.take() else { return };
        staging.copier.set_active(false);
        *self.gpu.staging.lock().unwrap_or_else(|p| p.into_inner()) = StagingPool::Free(staging);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copier_copies_every_byte_with_any_thread_count() {
        let src: Vec<u8> = (0..(9 * MIN_PART_BYTES + 777)).map(|i| (i * 7 + i / 251) as u8).collect();
        for threads in [1, 2, 3, 8] {
            let mut copier = crate::host::with_threads(2 * threads, Copier::new);
            for len in [0, 1, 63, 64, 65, MIN_PART_BYTES - 1, MIN_PART_BYTES + 1, 3 * MIN_PART_BYTES + 5, src.len()] {
                let mut dst = vec![0u8; len];
                // SAFETY: both vectors hold `len` bytes.
                unsafe { copier.copy(dst.as_mut_ptr(), src.as_ptr(), len) };
                assert_eq!(dst, src[..len], "threads {threads}, len {len}");
            }
            assert_eq!(copier.helpers.len(), threads - 1);
        }
    }

    #[test]
    fn work_bytes_override_is_scoped() {
        assert_eq!(work_bytes(123), 123);
        with_work_bytes(4096, || assert_eq!(work_bytes(123), 4096));
        assert_eq!(work_bytes(123), 123);
    }
}

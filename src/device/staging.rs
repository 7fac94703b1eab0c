//! Page-locked host memory: buffers users pass directly, the `Gpu`'s staging buffers and copy
//! streams, lent to one call at a time, and the host threads that copy between pageable
//! memory and the staging buffers.

use crate::error::{Error, Result};
use bytemuck::Pod;
use cudarc::driver::{result, sys, CudaContext, CudaEvent, DriverError};
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;
use crate::tuning::{PARTS_PER_THREAD, STAGING_SLOTS, STAGING_SLOT_BYTES};

/// The bytes of a copy that justify another thread: below this a copy takes fewer threads.
const MIN_THREAD_BYTES: usize = 1 << 20;

/// Page-locked host memory holding `len` values of `T`, usable as a slice.
///
/// The host-slice calls of [`Gpu`](crate::Gpu) (and [`Gpu::upload`](crate::Gpu::upload), [`Gpu::download_into`](crate::Gpu::download_into)) copy
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
        Self::zeroed_with(ctx, len, sys::CU_MEMHOSTALLOC_PORTABLE)
    }

    /// [`PinnedBuffer::zeroed`], mapped into the device's address space too
    /// (`CU_MEMHOSTALLOC_DEVICEMAP`): kernels write it at [`PinnedBuffer::device_address`].
    pub(crate) fn mapped(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        Self::zeroed_with(ctx, len, sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP)
    }

    /// The device address of a buffer made by [`PinnedBuffer::mapped`].
    pub(crate) fn device_address(&self) -> Result<sys::CUdeviceptr> {
        self.ctx.bind_to_thread()?;
        let mut address: sys::CUdeviceptr = 0;
        // SAFETY: the buffer is mapped pinned memory of this context (`mapped`); `address`
        // receives its device address.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut address, self.ptr.as_ptr().cast(), 0) }.result()?;
        Ok(address)
    }

    /// `len` zeroed values in page-locked memory allocated with `flags`.
    fn zeroed_with(ctx: &Arc<CudaContext>, len: usize, flags: std::ffi::c_uint) -> Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or(Error::TooLarge { what: "pinned buffer size" })?;
        if bytes == 0 {
            return Ok(PinnedBuffer { ptr: NonNull::dangling(), len, ctx: ctx.clone() });
        }
        ctx.bind_to_thread()?;
        // SAFETY: allocates `bytes` of page-locked memory, zeroed below before any use.
        let raw = unsafe { result::malloc_host(bytes, flags) }.map_err(|e| match e.0 {
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

/// Host threads copying memory in parallel: the calling thread and helper threads, claiming
/// the parts of each copy in turn until none is left. A staging piece takes a thread about
/// 0.2 ms, and waking a parked thread (in a virtual machine especially) can take as long, so
/// while a call runs ([`Copier::set_active`]) helpers wait for the next piece spinning; between
/// calls they park. They are started on the first copy that needs them and kept (in the `Gpu`'s
/// pool, with the staging buffers), so a call pays no thread start.
pub(crate) struct Copier {
    team: Arc<Team>,
    helpers: Vec<std::thread::JoinHandle<()>>,
    /// Threads (the caller's included) a copy takes at most.
    max_threads: usize,
    /// The copy started and not yet waited for: its generation and parts.
    in_flight: Option<(u32, usize)>,
}

/// What the calling thread and its helpers share: the current copy and its claims, one word
/// ([`Claim`]) so that a part is claimed for the copy it belongs to, and the parts done.
#[derive(Default)]
struct Team {
    claim: AtomicU64,
    done: AtomicUsize,
    quit: AtomicBool,
    active: AtomicBool,
    dst: AtomicUsize,
    src: AtomicUsize,
    bytes: AtomicUsize,
}

/// The claim word: the copy's generation (high 32 bits), its parts (16 bits) and the next part
/// not yet claimed (low 16 bits).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Claim(u64);

impl Claim {
    fn new(generation: u32, parts: usize) -> Self {
        Claim((generation as u64) << 32 | (parts as u64) << 16)
    }
    fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
    fn parts(self) -> usize {
        (self.0 >> 16) as usize & 0xffff
    }
    fn next(self) -> usize {
        self.0 as usize & 0xffff
    }
}

/// Most parts a copy is cut into (the claim word's 16 bits).
const MAX_PARTS: usize = 0xffff;

impl Team {
    /// Claims and copies parts of copy `generation` until none is left (or a later copy has
    /// begun, which means this one is done).
    fn work(&self, generation: u32) {
        let mut seen = Claim(self.claim.load(Acquire));
        while seen.generation() == generation && seen.next() < seen.parts() {
            match self.claim.compare_exchange_weak(seen.0, seen.0 + 1, Acquire, Acquire) {
                Ok(_) => {
                    // SAFETY: part `next` of the copy published with this claim word (its
                    // fields were written before the word, released); the copy cannot end,
                    // nor another begin, before this part is counted done.
                    unsafe { self.copy_part(seen.next(), seen.parts()) };
                    self.done.fetch_add(1, Release);
                    seen = Claim(self.claim.load(Acquire));
                }
                Err(now) => seen = Claim(now),
            }
        }
    }

    /// Copies part `i` of the current copy's `parts` equal parts (64-byte multiples).
    ///
    /// # Safety
    /// The current copy's `src` readable and `dst` writable for `bytes`, not overlapping, and
    /// part `i` claimed by the caller.
    unsafe fn copy_part(&self, i: usize, parts: usize) {
        let (dst, src, bytes) = (self.dst.load(Relaxed), self.src.load(Relaxed), self.bytes.load(Relaxed));
        let step = bytes.div_ceil(parts).next_multiple_of(64);
        let off = (i * step).min(bytes);
        // SAFETY: a part of the current copy's ranges, by this function's contract.
        unsafe { std::ptr::copy_nonoverlapping((src + off) as *const u8, (dst + off) as *mut u8, step.min(bytes - off)) };
    }

    /// A helper's life: waits for each new copy and claims parts of it.
    fn helper(&self, mut seen: u32) {
        loop {
            let mut spins = 0u32;
            loop {
                if self.quit.load(Acquire) {
                    return;
                }
                if Claim(self.claim.load(Acquire)).generation() != seen {
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
            seen = Claim(self.claim.load(Acquire)).generation();
            self.work(seen);
        }
    }
}

/// Spins a helper makes waiting for work before it parks: about a millisecond, several pieces.
const SPINS: u32 = 1 << 14;

impl Copier {
    /// A copier of up to `max_threads` threads, the caller's included.
    fn new(max_threads: usize) -> Self {
        let max_threads = max_threads.max(1);
        Copier { team: Arc::new(Team::default()), helpers: Vec::new(), max_threads, in_flight: None }
    }

    /// Whether a call is running: its helpers then spin between copies instead of parking.
    pub(super) fn set_active(&self, active: bool) {
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
        // SAFETY: forwarded; the copy is done when `wait` returns.
        unsafe { self.start(dst, src, bytes) };
        self.wait();
    }

    /// Starts copying `bytes` from `src` to `dst` on the helper threads and returns: the
    /// caller does other work meanwhile, then joins the copy in [`Copier::wait`]. A copy still
    /// in flight is waited for first. Copies too small for a second thread are done before this
    /// returns.
    ///
    /// # Safety
    /// `src` readable and `dst` writable for `bytes`, the two not overlapping, until the next
    /// `wait` (or `start`, or drop) returns.
    pub(crate) unsafe fn start(&mut self, dst: *mut u8, src: *const u8, bytes: usize) {
        self.wait();
        let threads = self.max_threads.min(bytes.div_ceil(MIN_THREAD_BYTES)).max(1);
        while self.helpers.len() + 1 < threads {
            // No copy is in flight: the helper starts at the current generation.
            let (team, now) = (self.team.clone(), Claim(self.team.claim.load(Acquire)).generation());
            match std::thread::Builder::new().name("mergepath-copy".into()).spawn(move || team.helper(now)) {
                Ok(handle) => self.helpers.push(handle),
                // No more threads: fewer parts.
                Err(_) => break,
            }
        }
        let threads = threads.min(self.helpers.len() + 1);
        if threads == 1 {
            // SAFETY: the whole copy, by this function's contract.
            return unsafe { std::ptr::copy_nonoverlapping(src, dst, bytes) };
        }
        let parts = (threads * PARTS_PER_THREAD).min(bytes.div_ceil(64)).min(MAX_PARTS);
        let team = &*self.team;
        team.dst.store(dst as usize, Relaxed);
        team.src.store(src as usize, Relaxed);
        team.bytes.store(bytes, Relaxed);
        team.done.store(0, Relaxed);
        let generation = Claim(team.claim.load(Relaxed)).generation().wrapping_add(1);
        team.claim.store(Claim::new(generation, parts).0, Release);
        for h in &self.helpers {
            h.thread().unpark();
        }
        self.in_flight = Some((generation, parts));
    }

    /// Joins the copy in flight, if any, claiming its parts left, and returns when all of it is
    /// done.
    pub(crate) fn wait(&mut self) {
        let Some((generation, parts)) = self.in_flight.take() else { return };
        let team = &*self.team;
        team.work(generation);
        // Every part is claimed by now; wait for those still being copied.
        let mut spins = 0u32;
        while team.done.load(Acquire) != parts {
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
        // No helper may still copy into memory the caller frees after this.
        self.wait();
        self.team.quit.store(true, Release);
        for h in self.helpers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// A stream of the copy engines, made with raw driver calls so that the context does not enter
/// cudarc's multi-stream mode (which records events on every buffer access).
pub(super) struct CopyStream(pub(super) sys::CUstream);

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
    pub(super) upload: CopyStream,
    pub(super) download: CopyStream,
    pub(super) copier: Copier,
    pub(super) slots: Vec<PinnedBuffer<u8>>,
    pub(super) events: Vec<CudaEvent>,
    ctx: Arc<CudaContext>,
}

// SAFETY: the streams and events are driver handles usable from any thread once the context is
// bound; the buffers are `Send`.
unsafe impl Send for Staging {}

impl Staging {
    /// Staging in `ctx`, copied through by up to `copy_threads` host threads.
    pub(super) fn new(ctx: &Arc<CudaContext>, copy_threads: usize) -> Result<Self> {
        ctx.bind_to_thread()?;
        Ok(Staging {
            upload: CopyStream::new()?,
            download: CopyStream::new()?,
            copier: Copier::new(copy_threads),
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


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copier_copies_every_byte_with_any_thread_count() {
        let src: Vec<u8> = (0..(9 * MIN_THREAD_BYTES + 777)).map(|i| (i * 7 + i / 251) as u8).collect();
        for threads in [1, 2, 3, 8] {
            let mut copier = Copier::new(threads);
            for len in [0, 1, 63, 64, 65, MIN_THREAD_BYTES - 1, MIN_THREAD_BYTES + 1, 3 * MIN_THREAD_BYTES + 5, src.len()] {
                let mut dst = vec![0u8; len];
                // SAFETY: both vectors hold `len` bytes.
                unsafe { copier.copy(dst.as_mut_ptr(), src.as_ptr(), len) };
                assert_eq!(dst, src[..len], "threads {threads}, len {len}");
            }
            assert_eq!(copier.helpers.len(), threads - 1);
        }
    }
}

//! Counts a call's kernels report to the host: the kernel that knows the count writes it to a
//! `u64` of mapped pinned memory, and the host polls that `u64` instead of copying the count
//! back and synchronizing the stream, so a call returns as soon as the count is known (8–13 µs
//! sooner than by the copy, BENCHMARKS.md).

use super::staging::PinnedBuffer;
use super::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{sys, DriverError};
use std::sync::atomic::{AtomicU64, Ordering};

/// The slot's value until a kernel writes the count (no count reaches it).
const UNREPORTED: u64 = u64::MAX;

/// Polls of the slot between two queries of the stream (whether it failed or finished).
const POLLS_PER_QUERY: u32 = 64;

/// Queries after which the waiting thread yields its core between polls.
const QUERIES_BEFORE_YIELDING: u32 = 1024;

/// The mapped pinned `u64` the kernels write a count to, and its device address.
pub(crate) type CountSlot = Option<(PinnedBuffer<u64>, u64)>;

impl Gpu {
    /// Runs `enqueue(slot)`, which enqueues kernels of which one writes a count to the device
    /// address `slot` (a `u64` of mapped pinned memory, as `reported_count` in
    /// `thread/reported_count.cuh` does), and returns that count once it lands, while the rest
    /// of the stream's work may still run. A stream that fails first gives its error; one that
    /// finishes without the count gives `CUDA_ERROR_ILLEGAL_STATE`. Calls on this handle from
    /// several threads take the slot in turn.
    pub(crate) fn reported_count(&self, enqueue: impl FnOnce(u64) -> Result<()>) -> Result<u64> {
        let mut slot = self.count_slot.lock().unwrap_or_else(|p| p.into_inner());
        let made = match slot.take() {
            Some(made) => made,
            None => {
                let buffer = PinnedBuffer::mapped(&self.ctx, 1)?;
                let address = buffer.device_address()?;
                (buffer, address)
            }
        };
        let (buffer, address) = slot.insert(made);
        // SAFETY: the buffer holds one aligned u64 that lives as long as `slot`'s lock, under
        // which only this thread and the kernels enqueued below touch it.
        let count = unsafe { AtomicU64::from_ptr(buffer.as_ptr().cast_mut()) };
        count.store(UNREPORTED, Ordering::Release);
        if let Err(e) = enqueue(*address) {
            // A kernel it did enqueue may still write the slot: not after the next call's store.
            self.stream.synchronize()?;
            return Err(e);
        }
        self.ctx.bind_to_thread()?;
        let mut polls = 0u32;
        loop {
            let reported = count.load(Ordering::Acquire);
            if reported != UNREPORTED {
                return Ok(reported);
            }
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(POLLS_PER_QUERY) {
                // SAFETY: queries this handle's stream, which outlives the call.
                match unsafe { sys::cuStreamQuery(self.stream.cu_stream()) } {
                    sys::cudaError_enum::CUDA_ERROR_NOT_READY => {}
                    sys::cudaError_enum::CUDA_SUCCESS => {
                        // The stream's writes are visible once it has finished.
                        let reported = count.load(Ordering::Acquire);
                        return if reported != UNREPORTED { Ok(reported) } else { Err(Error::Driver(DriverError(sys::cudaError_enum::CUDA_ERROR_ILLEGAL_STATE))) };
                    }
                    failed => return Err(Error::Driver(DriverError(failed))),
                }
                if polls / POLLS_PER_QUERY > QUERIES_BEFORE_YIELDING {
                    std::thread::yield_now();
                }
            }
            std::hint::spin_loop();
        }
    }
}

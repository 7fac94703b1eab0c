//! Timing with CUDA events: [`Gpu::time`], the GPU time of the work a closure enqueues, and a
//! timeline of the host-slice calls on one thread: when each host copy, DMA and kernel ran,
//! from CUDA events on the three streams and host clocks, to see what overlaps and what
//! bounds a call (`examples/host_timeline.rs`). Recording is off unless
//! [`record_timeline`] runs; off, a span costs a thread-local check.

use crate::error::{Error, Result};
use super::Gpu;
use cudarc::driver::{result, sys, CudaEvent};
use std::cell::RefCell;
use std::time::Instant;

/// One piece of work on a timeline: where it ran, what it was, and when, in milliseconds since
/// the recording began.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// `host copy`, `host helpers` (host work beside the copies, on other threads), `upload`,
    /// `kernels` or `download`.
    pub lane: &'static str,
    /// The work: `copy in`, `staged upload`, `sort chunk`, `merge range`, ...
    pub what: &'static str,
    /// When it began.
    pub start_ms: f64,
    /// When it ended.
    pub end_ms: f64,
}

struct Recorder {
    origin: Instant,
    origin_event: CudaEvent,
    host: Vec<Span>,
    device: Vec<(&'static str, &'static str, CudaEvent, CudaEvent)>,
}

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// Runs `f` (host-slice calls on `gpu`, on this thread) and returns its result with the spans
/// of their host copies, DMAs and kernels, in the order they were enqueued.
pub fn record_timeline<R>(gpu: &Gpu, f: impl FnOnce() -> R) -> Result<(R, Vec<Span>)> {
    let origin_event = timed_event(gpu)?;
    // SAFETY: an event and the stream of the bound context (timed_event bound it).
    unsafe { result::event::record(origin_event.cu_event(), gpu.stream().cu_stream()) }?;
    origin_event.synchronize()?;
    let recorder = Recorder { origin: Instant::now(), origin_event, host: Vec::new(), device: Vec::new() };
    /// Ends the recording also when `f` panics.
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            RECORDER.with(|r| r.borrow_mut().take());
        }
    }
    RECORDER.with(|r| *r.borrow_mut() = Some(recorder));
    let stop = Stop;
    let out = f();
    let recorder = RECORDER.with(|r| r.borrow_mut().take()).expect("recording until Stop");
    drop(stop);
    gpu.synchronize()?;
    let since_origin = |e: &CudaEvent| -> Result<f64> {
        // SAFETY: both events belong to the context and have completed (synchronized above).
        Ok(f64::from(unsafe { result::event::elapsed(recorder.origin_event.cu_event(), e.cu_event()) }?))
    };
    let mut spans = recorder.host;
    for (lane, what, start, end) in &recorder.device {
        spans.push(Span { lane, what, start_ms: since_origin(start)?, end_ms: since_origin(end)? });
    }
    Ok((out, spans))
}

impl Gpu {
    /// Runs `f`, which enqueues work on [`Gpu::stream`], between two CUDA events recorded on
    /// the stream, waits for the second, and returns `f`'s result with the milliseconds between
    /// them: the GPU time of that work (and of anything enqueued on the stream meanwhile).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), mergepath::Error> {
    /// # let gpu = mergepath::Gpu::new(0)?;
    /// let mut keys = gpu.upload(&[3u32, 1, 2])?;
    /// let ((), ms) = gpu.time(|| mergepath::sort_keys(&gpu, &mut keys, mergepath::Less))?;
    /// println!("sorted in {ms:.3} ms");
    /// # Ok(()) }
    /// ```
    pub fn time<R, E: From<Error>>(&self, f: impl FnOnce() -> Result<R, E>) -> Result<(R, f32), E> {
        let (start, end) = (timed_event(self)?, timed_event(self)?);
        start.record(&self.stream).map_err(Error::from)?;
        let out = f()?;
        end.record(&self.stream).map_err(Error::from)?;
        // Waits for both events.
        let ms = start.elapsed_ms(&end).map_err(Error::from)?;
        Ok((out, ms))
    }
}

/// An event that keeps its time (cudarc's default events do not).
fn timed_event(gpu: &Gpu) -> Result<CudaEvent> {
    Ok(gpu.context().new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
}

/// Whether a recording runs on this thread.
pub(crate) fn recording() -> bool {
    RECORDER.with(|r| r.borrow().is_some())
}

/// Runs `f`, a host copy, adding its span to the recording if one runs.
pub(crate) fn host_span<R>(what: &'static str, f: impl FnOnce() -> R) -> R {
    let start = host_span_start();
    let out = f();
    host_span_end(what, start);
    out
}

/// The start of a host copy that ends later ([`host_span_end`]), if a recording runs.
pub(crate) fn host_span_start() -> Option<Instant> {
    recording().then(Instant::now)
}

/// Adds the span of a host copy begun at `start` ([`host_span_start`]) and ending now.
pub(crate) fn host_span_end(what: &'static str, start: Option<Instant>) {
    host_span_between("host copy", what, start, Instant::now());
}

/// Adds the span of host work in `lane` begun at `start` ([`host_span_start`] on this thread)
/// and ended at `end` (on any thread: the recording is this thread's).
pub(crate) fn host_span_between(lane: &'static str, what: &'static str, start: Option<Instant>, end: Instant) {
    let Some(start) = start else { return };
    RECORDER.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            let ms = |t: Instant| t.duration_since(rec.origin).as_secs_f64() * 1e3;
            rec.host.push(Span { lane, what, start_ms: ms(start), end_ms: ms(end) });
        }
    });
}

/// Runs `f`, which enqueues work on stream `cu` (shown in `lane`), between two events recorded
/// there if a recording runs.
pub(crate) fn device_span<R>(gpu: &Gpu, lane: &'static str, cu: sys::CUstream, what: &'static str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    if !recording() {
        return f();
    }
    let (start, end) = (timed_event(gpu)?, timed_event(gpu)?);
    // SAFETY: events and stream of the bound context.
    unsafe { result::event::record(start.cu_event(), cu) }?;
    let out = f()?;
    // SAFETY: as above.
    unsafe { result::event::record(end.cu_event(), cu) }?;
    RECORDER.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.device.push((lane, what, start, end));
        }
    });
    Ok(out)
}

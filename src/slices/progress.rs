//! Progress of a long host-slice call: a caller's callback told the bytes moved so far.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A callback `(bytes done, bytes total)` and the count so far. The callback runs on the
/// calling thread between steps of the pipeline; a panic in it is caught and held (the callback
/// is not called again) until [`Progress::finish`], which the call reaches only after every
/// copy and kernel it enqueued has finished, so no device or host memory is freed under them.
pub(super) struct Progress<'a> {
    callback: Option<&'a mut dyn FnMut(u64, u64)>,
    done: u64,
    total: u64,
    panic: Option<Box<dyn Any + Send>>,
}

impl<'a> Progress<'a> {
    /// Progress of `total` bytes told to `callback`, if any.
    pub(super) fn new(callback: Option<&'a mut dyn FnMut(u64, u64)>, total: usize) -> Self {
        Progress { callback, done: 0, total: total as u64, panic: None }
    }

    /// Counts `bytes` more as done and tells the callback.
    pub(super) fn advance(&mut self, bytes: usize) {
        self.done = (self.done + bytes as u64).min(self.total);
        if self.panic.is_some() {
            return;
        }
        if let Some(callback) = self.callback.as_mut() {
            let (done, total) = (self.done, self.total);
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| callback(done, total))) {
                self.panic = Some(payload);
            }
        }
    }

    /// The call's result, once its work has finished: a panic of the callback resumes here.
    pub(super) fn finish<T>(self, result: T) -> T {
        if let Some(payload) = self.panic {
            resume_unwind(payload);
        }
        result
    }
}

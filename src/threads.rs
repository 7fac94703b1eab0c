//! How many worker threads the host-side work of a call gets (the host backend's, and the
//! host copies and passes of the GPU's host-slice calls), and scoped worker threads to run it.

use std::cell::Cell;
use std::sync::OnceLock;

/// Items per worker below which a call does not hand work to another thread: spawning a
/// thread costs tens of microseconds, about what merging this many items takes.
const DEFAULT_GRAIN: usize = 1 << 15;

thread_local! {
    static THREADS: Cell<usize> = const { Cell::new(0) };
    static GRAIN: Cell<usize> = const { Cell::new(0) };
}

/// The machine's parallelism, asked once.
fn available() -> usize {
    static AVAILABLE: OnceLock<usize> = OnceLock::new();
    *AVAILABLE.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The worker threads host calls made on this thread use: the innermost
/// [`crate::host::with_threads`] in force, else `std::thread::available_parallelism()`.
pub fn threads() -> usize {
    match THREADS.with(Cell::get) {
        0 => available(),
        n => n,
    }
}

/// Runs `f` with `cell` set to `value` on this thread, restoring it afterwards (also on panic).
fn with_setting<R>(cell: &'static std::thread::LocalKey<Cell<usize>>, value: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(&'static std::thread::LocalKey<Cell<usize>>, usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.with(|c| c.set(self.1));
        }
    }
    let _restore = Restore(cell, cell.with(|c| c.replace(value)));
    f()
}

/// [`with_setting`] of the thread count.
pub(crate) fn with_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    with_setting(&THREADS, threads, f)
}

/// [`with_setting`] of the grain.
pub(crate) fn with_grain<R>(grain: usize, f: impl FnOnce() -> R) -> R {
    with_setting(&GRAIN, grain, f)
}

/// How a call splits its work, read once on the calling thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// Worker threads at most (the calling thread is one of them).
    pub threads: usize,
    /// Items per worker at least.
    pub grain: usize,
}

impl Plan {
    /// The calling thread's settings.
    pub fn current() -> Self {
        let grain = match GRAIN.with(Cell::get) {
            0 => DEFAULT_GRAIN,
            g => g,
        };
        Plan { threads: threads(), grain }
    }

    /// Workers for `items` items of work: 1 (the calling thread alone) up to `threads`.
    pub fn workers(self, items: usize) -> usize {
        (items / self.grain).clamp(1, self.threads)
    }
}

/// Runs `f` on every task, the tasks split into up to `threads` contiguous groups, one per
/// thread (the calling thread takes the first group). Tasks should be about equal in size.
pub(crate) fn run<T: Send>(threads: usize, tasks: Vec<T>, f: impl Fn(T) + Sync) {
    let groups = threads.min(tasks.len());
    if groups <= 1 {
        tasks.into_iter().for_each(f);
        return;
    }
    let len = tasks.len();
    let mut split: Vec<Vec<T>> = (0..groups).map(|_| Vec::new()).collect();
    for (i, task) in tasks.into_iter().enumerate() {
        split[i * groups / len].push(task);
    }
    let f = &f;
    std::thread::scope(|scope| {
        let mut split = split.into_iter();
        let first = split.next().unwrap_or_default();
        for group in split {
            scope.spawn(move || group.into_iter().for_each(f));
        }
        first.into_iter().for_each(f);
    });
}

/// `n` equal spans of `0..len` as boundaries (`n + 1` of them, from 0 to `len`).
pub(crate) fn span_bounds(len: usize, n: usize) -> Vec<usize> {
    (0..=n).map(|s| (len as u128 * s as u128 / n as u128) as usize).collect()
}

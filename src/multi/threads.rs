//! Ranks as threads of one process, collectives through shared slots and a barrier: the CPU
//! mirror's group, and the host side of a group of ranks sharing one GPU.

use super::plan::Group;
use crate::error::Result;
use bytemuck::Pod;
use std::any::Any;
use std::sync::{Arc, Barrier, Mutex};

/// What the ranks of a [`ThreadGroup`] share: one slot per rank for the collective under way.
struct Shared {
    slots: Mutex<Vec<Option<Box<dyn Any + Send>>>>,
    barrier: Barrier,
}

/// One rank of a group of threads (made by [`ThreadGroup::new`], one handle per thread).
pub(crate) struct ThreadGroup {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
}

impl ThreadGroup {
    /// The handles of a group of `size` ranks (at least 1), in rank order: give one to each
    /// thread.
    pub(crate) fn new(size: usize) -> Vec<ThreadGroup> {
        let size = size.max(1);
        let shared = Arc::new(Shared { slots: Mutex::new((0..size).map(|_| None).collect()), barrier: Barrier::new(size) });
        (0..size).map(|rank| ThreadGroup { rank, size, shared: shared.clone() }).collect()
    }

    /// Puts `mine` in this rank's slot, waits for every rank's, and reads every slot with
    /// `read` (slots in rank order), then waits until all have read.
    fn exchange<T: Send + 'static, R>(&self, mine: T, read: impl FnOnce(&[Option<Box<dyn Any + Send>>]) -> R) -> R {
        self.slots()[self.rank] = Some(Box::new(mine));
        self.shared.barrier.wait();
        let out = read(&self.slots());
        self.shared.barrier.wait();
        out
    }

    /// The slots (a rank that panicked while holding them poisons the lock; the slots stay usable).
    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Option<Box<dyn Any + Send>>>> {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The value a rank put in its slot for the collective under way: every rank calls the same
/// collective with the same type, so a slot holds a `T`.
fn slot<T: 'static>(slot: &Option<Box<dyn Any + Send>>) -> &T {
    match slot.as_ref().and_then(|b| b.downcast_ref::<T>()) {
        Some(value) => value,
        None => unreachable!("every rank fills its slot with the collective's type before the barrier"),
    }
}

impl ThreadGroup {
    /// Sends `parts[j]` to rank j (`parts.len() == size`) and returns what each rank sent to
    /// this one, in rank order.
    pub(crate) fn all_to_all<T: Clone + Send + 'static>(&self, parts: Vec<Vec<T>>) -> Vec<Vec<T>> {
        self.exchange(parts, |slots| slots.iter().map(|s| slot::<Vec<Vec<T>>>(s)[self.rank].clone()).collect())
    }
}

impl Group for ThreadGroup {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_gather<T: Pod + Send>(&self, mine: &[T]) -> Result<Vec<T>> {
        Ok(self.exchange(mine.to_vec(), |slots| slots.iter().flat_map(|s| slot::<Vec<T>>(s).iter().copied()).collect()))
    }
}

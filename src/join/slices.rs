//! Joins as [`Gpu`] methods on host slices: the columns uploaded, the device call, the pairs
//! (or their count) downloaded.

use super::{check_join, launch_join, scan_join, JoinKind};
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key};

impl Gpu {
    /// A join on the GPU (host slices): the pairs of rows of `a` and `b` (each sorted by
    /// `comp`) with equal keys as two columns, as [`crate::join()`] writes them, with the errors
    /// of [`crate::host::join`]. The columns and the pairs must fit the device together.
    pub fn join<K: Key, C: Comparator<K>>(&self, a: &[K], b: &[K], kind: JoinKind, _comp: C) -> Result<(Vec<i64>, Vec<i64>)> {
        self.with_columns(a, b, |a, b| launch_join::<K, C>(self, a, b, kind)?.download(self))
    }

    /// The number of pairs [`Gpu::join`] outputs, without writing them, as
    /// [`crate::join_len`] counts them.
    pub fn join_len<K: Key, C: Comparator<K>>(&self, a: &[K], b: &[K], kind: JoinKind, _comp: C) -> Result<usize> {
        self.with_columns(a, b, |a, b| Ok(scan_join::<K, C>(self, a, b, kind)?.len()))
    }

    /// `run` on the columns `a` and `b` uploaded (after the join's size check).
    fn with_columns<K: Key, R>(&self, a: &[K], b: &[K], run: impl FnOnce(&CheckedBuffer<'_>, &CheckedBuffer<'_>) -> Result<R>) -> Result<R> {
        check_join(a.len(), b.len())?;
        let (a_d, b_d) = (self.upload_bytes(a)?, self.upload_bytes(b)?);
        // Fresh allocations: aligned for any key.
        let (a_in, b_in) = (self.input("a", &a_d, 1)?, self.input("b", &b_d, 1)?);
        let key = size_of::<K>();
        run(&CheckedBuffer::raw(a_in.ptr, a.len(), key), &CheckedBuffer::raw(b_in.ptr, b.len(), key))
    }
}

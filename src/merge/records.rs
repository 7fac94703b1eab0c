//! Merges of records wider than the key tiles ([`move_records`]): their comparable keys (the
//! records' addresses, or order keys) merged with the records' positions, then the records and
//! values gathered.

use super::launch::launch_merge_with;
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use crate::gather::ValueSources;
use crate::key::{Key, RecordOrder};
use crate::sort::move_records;

/// Merges the records `a` and `b` (each sorted by `order`) into `out`, values (a's, b's, the
/// output's, word bytes) following.
pub(super) fn merge_records<K: Key>(
    gpu: &Gpu,
    order: &RecordOrder,
    a: &CheckedBuffer<'_>,
    b: &CheckedBuffer<'_>,
    out: &CheckedBuffer<'_>,
    values: Option<(&CheckedBuffer<'_>, &CheckedBuffer<'_>, &CheckedBuffer<'_>, usize)>,
) -> Result<()> {
    let total = a.len + b.len;
    let values = values.map(|(av, bv, ov, word)| (ValueSources { a: (av.ptr, a.len), b: Some((bv.ptr, b.len)) }, ov.ptr, word));
    move_records::<K>(gpu, order, ValueSources { a: (a.ptr, a.len), b: Some((b.ptr, b.len)) }, out.ptr, values, |o| {
        let (ka, kb) = (CheckedBuffer::raw(o.keys, a.len, 8), CheckedBuffer::raw(o.keys + (a.len * 8) as u64, b.len, 8));
        let (pa, pb) = (CheckedBuffer::raw(o.positions, a.len, o.word), CheckedBuffer::raw(o.positions + (a.len * o.word) as u64, b.len, o.word));
        let (ko, po) = (CheckedBuffer::raw(o.keys_out, total, 8), CheckedBuffer::raw(o.positions_out, total, o.word));
        launch_merge_with(gpu, o.kernels, 8, &ka, &kb, &ko, Some((&pa, &pb, &po, o.word)))?;
        Ok((total, o.positions_out))
    })
}

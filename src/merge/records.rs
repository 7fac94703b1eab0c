//! Merges of records wider than the key tiles ([`move_records`]): their order keys merged with
//! the records' positions by the `u64` merge, then the records and values gathered.

use super::launch::launch_merge;
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use crate::gather::ValueSources;
use crate::key::{Greater, Key, Less, RecordOrder};
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
    move_records::<K>(gpu, order, ValueSources { a: (a.ptr, a.len), b: Some((b.ptr, b.len)) }, true, out.ptr, values, |o| {
        let (ka, kb) = (CheckedBuffer::raw(o.keys, a.len, 8), CheckedBuffer::raw(o.keys + (a.len * 8) as u64, b.len, 8));
        let (pa, pb) = (CheckedBuffer::raw(o.positions, a.len, o.word), CheckedBuffer::raw(o.positions + (a.len * o.word) as u64, b.len, o.word));
        let (ko, po) = (CheckedBuffer::raw(o.keys_out, total, 8), CheckedBuffer::raw(o.positions_out, total, o.word));
        let positions = Some((&pa, &pb, &po, o.word));
        match o.descending {
            true => launch_merge::<u64, Greater>(gpu, &ka, &kb, &ko, positions, Greater),
            false => launch_merge::<u64, Less>(gpu, &ka, &kb, &ko, positions, Less),
        }?;
        Ok((total, o.positions_out))
    })
}

//! Set operations on records wider than the key tiles: their comparable keys ([`move_records`])
//! run through the set kernels with the records' positions as values, then the records (and
//! values) of the result gathered. The gather needs the result's length, so these wait for the
//! GPU.

use super::launch::{launch_set_op, Output};
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::gather::ValueSources;
use crate::key::{Key, RecordOrder};
use crate::sort::{move_records, with_comparable_keys, OrderedPositions};
use crate::types::SetOperation;
use cudarc::driver::CudaSlice;

/// `op` on the records `a` and `b` by `order`, written to `output`; the result's length on the
/// device.
pub(super) fn set_op_records<K: Key>(gpu: &Gpu, order: &RecordOrder, op: SetOperation, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, output: Output<'_, '_>) -> Result<CudaSlice<u64>> {
    let (out, values) = match output {
        Output::LenOnly => {
            return with_comparable_keys::<K, _>(gpu, order, &[(a.ptr, a.len), (b.ptr, b.len)], |keys, kernels| {
                let (ka, kb) = (CheckedBuffer::raw(keys, a.len, 8), CheckedBuffer::raw(keys + (a.len * 8) as u64, b.len, 8));
                launch_set_op::<u64>(gpu, kernels, op, &ka, &kb, Output::LenOnly)
            });
        }
        Output::Keys(keys) => (keys, None),
        Output::Pairs { keys, a_values, b_values, values, word } => (keys, Some((ValueSources { a: (a_values.ptr, a.len), b: Some((b_values.ptr, b.len)) }, values.ptr, word))),
    };
    // The room the result has: the shorter output, at most the inputs' items.
    let room = output.capacity().min(a.len + b.len);
    let mut len = None;
    move_records::<K>(gpu, order, ValueSources { a: (a.ptr, a.len), b: Some((b.ptr, b.len)) }, out.ptr, values, |o: &OrderedPositions| {
        let (ka, kb) = (CheckedBuffer::raw(o.keys, a.len, 8), CheckedBuffer::raw(o.keys + (a.len * 8) as u64, b.len, 8));
        let (pa, pb) = (CheckedBuffer::raw(o.positions, a.len, o.word), CheckedBuffer::raw(o.positions + (a.len * o.word) as u64, b.len, o.word));
        let (ko, po) = (CheckedBuffer::raw(o.keys_out, room, 8), CheckedBuffer::raw(o.positions_out, room, o.word));
        let result = launch_set_op::<u64>(gpu, o.kernels, op, &ka, &kb, Output::Pairs { keys: &ko, a_values: &pa, b_values: &pb, values: &po, word: o.word })?;
        let written = usize::try_from(gpu.download(&result)?[0]).map_err(|_| Error::TooLarge { what: "set result length" })?.min(room);
        len = Some(result);
        Ok((written, o.positions_out))
    })?;
    Ok(len.expect("move_records runs the set operation"))
}

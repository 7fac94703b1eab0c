//! Sorts of records wider than the kernels' key tiles ([`Comparator::RECORD`](crate::Comparator::RECORD)): each record's
//! order fields packed into `u64` words beside its position (`mergepath_record_order`), the
//! (packed word, position) pairs sorted as `u64` keys, one stable sort per word from the last,
//! then the records (and their values) gathered by position, so each record's bytes move once
//! instead of once per pass.

use crate::device::contract::RecordOrderParams;
use crate::device::kernels::Kernels;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::Result;
use crate::gather::{copy_device, launch_gather, position_bytes};
use crate::key::{Greater, Key, Less, RecordOrder};
use cudarc::driver::LaunchConfig;
use std::sync::Arc;

/// The kernels a record's sort runs: the packed order's `u64` ones.
pub(crate) fn record_kernels(gpu: &Gpu, order: &RecordOrder) -> Result<Arc<Kernels>> {
    if order.descending {
        gpu.kernels::<u64, Greater>()
    } else {
        gpu.kernels::<u64, Less>()
    }
}

/// Enqueues the sort of `n >= 1` records of `K` by `order` from `keys_in` into `keys_out` (the
/// same address for a sort in place), values (input, output, word) following:
/// `sort_packed(kernels, packed orders, positions, position bytes)` sorts the n packed orders
/// in place as u64 keys by the kernels' order, the positions following.
pub(crate) fn sort_records<K: Key>(
    gpu: &Gpu,
    order: &RecordOrder,
    keys_in: u64,
    keys_out: u64,
    values: Option<(u64, u64, usize)>,
    n: usize,
    sort_packed: impl Fn(&Kernels, u64, u64, usize) -> Result<()>,
) -> Result<()> {
    let kernels = record_kernels(gpu, order)?;
    let record_bytes = std::mem::size_of::<K>();
    let word = position_bytes(n);
    // Temp: packed orders, positions, and the inputs a sort in place overwrites before it has
    // gathered from them.
    let mut layout = TempLayout::default();
    let order_at = layout.region(n * 8);
    let positions_at = layout.region(n * word);
    let records_at = layout.region(if keys_in == keys_out { n * record_bytes } else { 0 });
    let values_at = layout.region(match values {
        Some((vin, vout, w)) if vin == vout => n * w,
        _ => 0,
    });
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let (packed, positions) = (base + order_at as u64, base + positions_at as u64);
    // The sources of the gathers: set aside where the sort is in place.
    let set_aside = |from: u64, at: usize, bytes: usize| -> Result<u64> {
        let to = base + at as u64;
        copy_device(gpu, to, from, bytes)?;
        Ok(to)
    };
    let records_src = if keys_in == keys_out { set_aside(keys_in, records_at, n * record_bytes)? } else { keys_in };
    let values_src = match values {
        Some((vin, vout, w)) if vin == vout => Some((set_aside(vin, values_at, n * w)?, vout, w)),
        other => other,
    };

    let ctas = n.div_ceil(256).min(1 << 16) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let func = kernels.for_values("mergepath_record_order", word)?;
    // One stable sort per word of the order, the last word first: the positions then hold the
    // records in the order of all words (a least-significant-digit sort over words).
    let words = order.words();
    for w in (0..words).rev() {
        let params = RecordOrderParams {
            records: records_src,
            record_bytes: record_bytes as i64,
            count: n as i64,
            fields: order.encoded(),
            num_fields: order.fields.len() as i64,
            word: w as i64,
            gather: (w + 1 < words) as i64,
            order: packed,
            positions,
        };
        // SAFETY: `RecordOrderParams` is `mergepath_record_order_{4,8}`'s parameter struct; the
        // records hold n items of `record_bytes`, every element of the order (from the derive:
        // offsets and sizes inside the record, at most RECORD_MAX_FIELDS) is read in bounds and
        // aligned (offsets are multiples of the element size, the records of the record's
        // alignment), `packed` and `positions` hold n items (positions below n: written by the
        // first word's pass, permuted by the sorts since), and the grid-stride loop stays below n.
        unsafe { gpu.launch(&func, cfg, &params) }?;
        sort_packed(&kernels, packed, positions, word)?;
    }
    launch_gather(gpu, &kernels, (records_src, n), None, (positions, word), keys_out, n, record_bytes)?;
    if let Some((vsrc, vout, w)) = values_src {
        launch_gather(gpu, &kernels, (vsrc, n), None, (positions, word), vout, n, w)?;
    }
    Ok(())
}

//! Values of any size, carried by position: where a value is not a 4-, 8- or 16-byte word the
//! kernels move (12-byte payloads, 3-byte tags, 256-byte rows), the algorithm moves each value's
//! position instead (4 bytes, 8 past 2^32 items) and one gather moves the values once, at the
//! end. A sort then moves `key + 4` bytes per item in each of its passes, not `key + value`.
//!
//! [`carry_positions`] is the pattern every algorithm that takes values of any size follows:
//! positions `0..n` in a temporary buffer (the value inputs' positions one after another), the
//! algorithm run with them as 4- or 8-byte values, then [`launch_gather`] from the value inputs
//! by the positions it wrote.

use crate::device::contract::{GatherParams, IotaParams, ScatterParams};
use crate::device::kernels::Kernels;
use crate::device::launch::widest_word;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{sort_value_carry, ValueCarry, Value};
use cudarc::driver::{result, LaunchConfig};

/// Bytes of a position: 4 while `n` items have `u32` positions, else 8.
pub(crate) fn position_bytes(n: usize) -> usize {
    if n <= u32::MAX as usize {
        4
    } else {
        8
    }
}

/// The value inputs of an algorithm that carries positions, as device addresses and item
/// counts: one (sorts), or two (merges: A's positions first, then B's).
#[derive(Clone, Copy)]
pub(crate) struct ValueSources {
    pub a: (u64, usize),
    pub b: Option<(u64, usize)>,
}

/// Runs an algorithm with positions for values: writes positions `0..n` (`n` the sources'
/// items, A's first) into a temporary buffer and calls `run(positions in, positions out, bytes
/// of a position)`, where the algorithm reads its value inputs from `positions in` (A's at
/// index 0, B's at A's count) and writes its n output values to `positions out`: the same
/// buffer for one source (a sort, in place), another for two (a merge). Then gathers the values
/// of `value_bytes` bytes from `sources` into `out` by those positions. `out` may be the only
/// source (in-place sorts): the source is copied aside first.
pub(crate) fn carry_positions(
    gpu: &Gpu,
    kernels: &Kernels,
    sources: ValueSources,
    out: u64,
    value_bytes: usize,
    run: impl FnOnce(u64, u64, usize) -> Result<()>,
) -> Result<()> {
    let n = sources.a.1 + sources.b.map_or(0, |b| b.1);
    let word = position_bytes(n);
    if n == 0 {
        return run(0, 0, word);
    }
    let out_is_source = out == sources.a.0 && sources.b.is_none();
    let mut layout = TempLayout::default();
    let pos_in_at = layout.region(n * word);
    let pos_out_at = if sources.b.is_none() { pos_in_at } else { layout.region(n * word) };
    let copy_at = layout.region(if out_is_source { n * value_bytes } else { 0 });
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let (pos_in, pos_out) = (base + pos_in_at as u64, base + pos_out_at as u64);
    launch_iota(gpu, kernels, pos_in, n, 0, word)?;
    let (a, b) = match out_is_source {
        true => {
            let copy = base + copy_at as u64;
            copy_device(gpu, copy, sources.a.0, n * value_bytes)?;
            ((copy, sources.a.1), None)
        }
        false => (sources.a, sources.b),
    };
    run(pos_in, pos_out, word)?;
    launch_gather(gpu, kernels, a, b, (pos_out, word), out, n, value_bytes)
}

/// Enqueues a copy of `bytes` device bytes from `from` to `to` on the Gpu's stream: the inputs
/// an in-place gather overwrites, set aside first; a rank's slices pulled from another rank's
/// buffer on the same device (`multi`).
pub(crate) fn copy_device(gpu: &Gpu, to: u64, from: u64, bytes: usize) -> Result<()> {
    // SAFETY: the callers pass two ranges of `bytes` device bytes of this device that do not
    // overlap (the caller's items and a temp region sized for them; a sender's range, written
    // and kept alive until the copy is done, and the receiver's), in order with the kernels on
    // the stream.
    unsafe { result::memcpy_dtod_async(to, from, bytes, gpu.stream().cu_stream()) }?;
    Ok(())
}

/// Enqueues copies of `inputs` (device addresses and counts of items of `item_bytes`) one after
/// another to `to`: several inputs as one source of a gather.
pub(crate) fn copy_one_after_another(gpu: &Gpu, inputs: impl IntoIterator<Item = (u64, usize)>, to: u64, item_bytes: usize) -> Result<()> {
    let mut copied = 0;
    for (from, n) in inputs {
        copy_device(gpu, to + (copied * item_bytes) as u64, from, n * item_bytes)?;
        copied += n;
    }
    Ok(())
}

/// Runs a sort of `n` items whose values of `V` go from `values_in` to `values_out` (the same
/// address for a sort in place): `sort(values)` with the values as words where a sort moves
/// them so ([`sort_value_carry`]), else with positions sorted in place and the values gathered
/// after.
pub(crate) fn sort_values<V: Value>(gpu: &Gpu, kernels: &Kernels, values_in: u64, values_out: u64, n: usize, sort: impl FnOnce(Option<(u64, u64, usize)>) -> Result<()>) -> Result<()> {
    match const { sort_value_carry::<V>() } {
        ValueCarry::Words(word) => sort(Some((values_in, values_out, word))),
        ValueCarry::Positions(bytes) => {
            let sources = ValueSources { a: (values_in, n), b: None };
            carry_positions(gpu, kernels, sources, values_out, bytes, |positions, _, word| sort(Some((positions, positions, word))))
        }
    }
}

/// Enqueues the gather of `count` items of `item_bytes` into `out`: item i is item
/// `positions[i]` of `a` (`a.1` items), or item `positions[i] - a.1` of `b`. Positions (of
/// `positions.1` bytes, 4 or 8) must be below the items of `a` and `b` together.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_gather(gpu: &Gpu, kernels: &Kernels, a: (u64, usize), b: Option<(u64, usize)>, positions: (u64, usize), out: u64, count: usize, item_bytes: usize) -> Result<()> {
    if count == 0 || item_bytes == 0 {
        return Ok(());
    }
    let b_ptr = b.map_or(0, |b| b.0);
    let word = widest_word(item_bytes, a.0 | b_ptr | out);
    let words = item_bytes / word;
    let total = count.checked_mul(words).and_then(|t| i64::try_from(t).ok()).ok_or(Error::TooLarge { what: "gather length" })?;
    let ctas = (total as usize).div_ceil(256).min(1 << 20) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let params = GatherParams { a: a.0, b: b_ptr, positions: positions.0, out, split: a.1 as i64, count: count as i64, words: words as i64 };
    let func = kernels.gather(word, positions.1)?;
    // SAFETY: `GatherParams` is `mergepath_gather_{word}_{position bytes}`'s parameter struct;
    // `positions` holds `count` positions, each below the items of a and b (the caller's
    // contract), `out` holds `count` items of `item_bytes`, every address and the item size
    // are multiples of the word, and the grid-stride loop stays below count * words.
    unsafe { gpu.launch(&func, cfg, &params) }
}

/// Enqueues `out[positions[i]] = values[i]` for the `count` u64 `values`: `positions` (of
/// `positions.1` bytes, 4 or 8) must be a permutation of `0..count`.
pub(crate) fn launch_scatter(gpu: &Gpu, kernels: &Kernels, values: u64, positions: (u64, usize), out: u64, count: usize) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let ctas = count.div_ceil(256).min(1 << 16) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let params = ScatterParams { values, positions: positions.0, out, count: count as i64 };
    // SAFETY: `ScatterParams` is `mergepath_scatter_{4,8}`'s parameter struct; `values` and
    // `positions` hold `count` items, `out` `count` u64s, every position is below `count` (a
    // permutation: the caller's contract), and the grid-stride loop stays below count.
    unsafe { gpu.launch(&kernels.scatter(positions.1)?, cfg, &params) }
}

/// Writes first, first + 1, ..., first + len - 1 into `out` (`len` words of 4 or 8 bytes).
pub(crate) fn launch_iota(gpu: &Gpu, kernels: &Kernels, out: u64, len: usize, first: usize, word: usize) -> Result<()> {
    launch_iota_by(gpu, kernels, out, len, first as u64, 1, word)
}

/// Writes the device addresses of `len` records of `step` bytes from `first` (bit
/// RECORD_ADDRESS_REVERSED_BIT set in each where `reversed`) into `out` (`len` u64s).
pub(crate) fn launch_addresses(gpu: &Gpu, kernels: &Kernels, out: u64, len: usize, (first, step): (u64, usize), reversed: bool) -> Result<()> {
    let flag = if reversed { 1u64 << crate::device::contract::RECORD_ADDRESS_REVERSED_BIT } else { 0 };
    launch_iota_by(gpu, kernels, out, len, first | flag, step, 8)
}

/// Writes first + i * step for i below len into `out` (`len` words of 4 or 8 bytes, wrapping).
fn launch_iota_by(gpu: &Gpu, kernels: &Kernels, out: u64, len: usize, first: u64, step: usize, word: usize) -> Result<()> {
    let ctas = len.div_ceil(256).min(65_535) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let params = IotaParams { out, first: first as i64, step: step as i64, count: len as i64 };
    let func = kernels.iota(word)?;
    // SAFETY: `IotaParams` is `mergepath_iota_{4,8}`'s parameter struct; `out` holds len words of `word` bytes, and the
    // kernel's grid-stride loop stays below len.
    unsafe { gpu.launch(&func, cfg, &params) }
}

//! Sorted relational joins (Modern GPU's `RelationalJoin`): the pairs of rows of two sorted
//! key columns A and B whose keys are equal (neither goes before the other), as two columns of
//! row indices.
//!
//! Three passes, none of them a binary search per row: the vectorized sorted search gives each
//! row of A its range of equal rows of B (`lower..upper`, one merge-path pass over both
//! columns); a single-pass scan (decoupled look-back) turns the ranges' lengths into each row's
//! first output; and an expansion gives each output its row and its pair, on the
//! load-balancing search's tiles (the outputs merged with the scanned offsets, so a row of many
//! matches is spread over the GPU like any other). Right and full joins append the rows of
//! B without a match, found the same way with the columns' roles swapped. The one wait on the
//! GPU reads the result's length, to allocate it.
//!
//! This folder holds the whole algorithm: the device call and its checks here, the host
//! backend (`host.rs`), the host-slice [`Gpu`] method (`slices.rs`), the sequential oracle
//! ([`crate::cpu::join`], `cpu.rs`) and the property that holds them to it
//! ([`crate::testing::join`], `properties.rs`).

pub(crate) mod cpu;
pub(crate) mod host;
#[cfg(feature = "testing")]
pub(crate) mod properties;
mod slices;

use crate::device::buffers::CheckedBuffer;
use crate::device::contract::{JoinParams, JOIN_AT_LEAST_ONE, JOIN_ITEMS, JOIN_MATCHES, JOIN_THREADS, JOIN_UNMATCHED};
use crate::device::launch::grid_ctas;
use crate::device::temp::{Temp, TempLayout};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::load_balancing::{launch_load_balancing_partitions, load_balancing_params, load_balancing_tile_count};
use crate::search::{launch_search, SearchOutput};
use crate::tuning::load_balancing_shape;
use cudarc::driver::{CudaSlice, CudaView, DevicePtr, LaunchConfig};

/// The row index that stands for "no row" in a join's output: the other side of an unmatched
/// row of a left, right or full join.
pub const NO_ROW: i64 = -1;

/// Which pairs a join outputs. Every kind lists the rows of A in order, each with its equal
/// rows of B in order; right and full joins then append the rows of B that equal no row of A,
/// in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// The pairs of equal rows only.
    Inner,
    /// Also each row of A without an equal row of B, paired with [`NO_ROW`].
    Left,
    /// Also each row of B without an equal row of A, after the pairs: ([`NO_ROW`], row).
    Right,
    /// Both: a left join, then the unmatched rows of B as in a right join.
    Full,
}

impl JoinKind {
    /// Every kind, for tests and benches.
    pub const ALL: [JoinKind; 4] = [JoinKind::Inner, JoinKind::Left, JoinKind::Right, JoinKind::Full];

    /// Whether a row of A without a match is output (with [`NO_ROW`]).
    pub fn keeps_unmatched_a(self) -> bool {
        matches!(self, JoinKind::Left | JoinKind::Full)
    }

    /// Whether the rows of B without a match are appended.
    pub fn keeps_unmatched_b(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full)
    }
}

/// A join's result on the device: `len()` pairs, row `a()[k]` of A with row `b()[k]` of B
/// ([`NO_ROW`] for an unmatched side). The buffers hold at least one entry, so an empty
/// result is a real allocation; [`JoinPairs::a`] and [`JoinPairs::b`] are views of its pairs.
pub struct JoinPairs {
    a: CudaSlice<i64>,
    b: CudaSlice<i64>,
    len: usize,
}

impl JoinPairs {
    /// The number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pairs' rows of A.
    pub fn a(&self) -> CudaView<'_, i64> {
        self.a.slice(..self.len)
    }

    /// The pairs' rows of B.
    pub fn b(&self) -> CudaView<'_, i64> {
        self.b.slice(..self.len)
    }

    /// Both columns copied to the host (waits for the GPU).
    pub fn download(&self, gpu: &Gpu) -> Result<(Vec<i64>, Vec<i64>)> {
        Ok((gpu.download(&self.a())?, gpu.download(&self.b())?))
    }
}

/// Joins the rows of `a` and `b` (each sorted by `comp`) by equal keys: every pair `(i, j)`
/// with `a[i]` and `b[j]` equal (neither goes before the other), in `a`'s order and then
/// `b`'s, plus the unmatched rows `kind` keeps ([`JoinKind`]). Any key type, records and
/// derived keys included; any lengths, including 0. Waits for the GPU: the result's length,
/// found on the device, sizes its allocation.
///
/// Inputs whose lengths multiply to 2^62 or more are [`Error::TooLarge`] (the scan's sums
/// stay below that). Unsorted inputs give unspecified pairs, each a row of `a` or [`NO_ROW`]
/// with a row of `b` or [`NO_ROW`], never an out-of-bounds access.
///
/// ```no_run
/// # fn main() -> Result<(), mergepath::Error> {
/// use mergepath::{JoinKind, Less, NO_ROW};
/// let gpu = mergepath::Gpu::new(0)?;
/// let (a, b) = (gpu.upload(&[1u32, 2, 2, 5])?, gpu.upload(&[2u32, 3, 5, 5])?);
/// let pairs = mergepath::join(&gpu, &a, &b, JoinKind::Left, Less)?;
/// let (rows_a, rows_b) = pairs.download(&gpu)?;
/// assert_eq!(rows_a, [0, 1, 2, 3, 3]);
/// assert_eq!(rows_b, [NO_ROW, 0, 0, 2, 3]);
/// # Ok(())
/// # }
/// ```
pub fn join<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &impl DevicePtr<K>, b: &impl DevicePtr<K>, kind: JoinKind, _comp: C) -> Result<JoinPairs> {
    let a = gpu.input("a", a, K::DEVICE_ALIGN)?;
    let b = gpu.input("b", b, K::DEVICE_ALIGN)?;
    launch_join::<K, C>(gpu, &a, &b, kind)
}

/// A join of `n` rows with `m` rows: its pairs (at most `n * m + n + m`) stay below 2^62.
pub(crate) fn check_join(n: usize, m: usize) -> Result<()> {
    match n.checked_mul(m).and_then(|p| p.checked_add(n)).and_then(|p| p.checked_add(m)) {
        Some(bound) if bound < 1 << 62 => Ok(()),
        _ => Err(Error::TooLarge { what: "join whose inputs' lengths multiply to 2^62 or more" }),
    }
}

/// One side's rows in a join: each row's range of equal rows on the other side, its outputs
/// scanned under `mode` (a `JOIN_*` count mode), in temporary memory.
struct Side {
    rows: usize,
    other_rows: usize,
    mode: i64,
    tiles: usize,
    /// Byte offsets in the temporary buffer.
    states: usize,
    ranges: usize,
    offsets: usize,
}

/// The rows of a tile of the scan.
const JOIN_TILE: usize = JOIN_THREADS * JOIN_ITEMS;

impl Side {
    fn new(layout: &mut TempLayout, rows: usize, other_rows: usize, mode: i64) -> Self {
        let tiles = rows.div_ceil(JOIN_TILE);
        let (states, ranges, offsets) = (layout.region((tiles + 1) * 8), layout.region(rows * 16), layout.region(rows * 8));
        Side { rows, other_rows, mode, tiles, states, ranges, offsets }
    }

    /// The side's parameters in the temporary buffer at `base`, its total at `total`.
    fn params(&self, base: u64, total: u64) -> JoinParams {
        let lower = base + self.ranges as u64;
        JoinParams {
            lower,
            upper: lower + (self.rows * 8) as u64,
            rows: self.rows as i64,
            other_rows: self.other_rows as i64,
            mode: self.mode,
            tiles: self.tiles as i64,
            tile_states: base + self.states as u64,
            offsets: base + self.offsets as u64,
            total,
            outputs: 0,
            out_first: 0,
            out_a: 0,
            out_b: 0,
            partitions: 0,
        }
    }
}

/// The number of pairs [`join`] outputs for these columns and `kind`, without writing them
/// (Modern GPU's count-only join): the search and the scan of [`join`], then one wait to read
/// the count. Otherwise as [`join`].
pub fn join_len<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &impl DevicePtr<K>, b: &impl DevicePtr<K>, kind: JoinKind, _comp: C) -> Result<usize> {
    let a = gpu.input("a", a, K::DEVICE_ALIGN)?;
    let b = gpu.input("b", b, K::DEVICE_ALIGN)?;
    Ok(scan_join::<K, C>(gpu, &a, &b, kind)?.len())
}

/// A join's sides scanned on the device: each row's range and first output in the temporary
/// buffer at `base`, and the pairs each side outputs.
pub(crate) struct ScannedJoin<'a> {
    _temp: Temp<'a>,
    base: u64,
    sides: [Option<Side>; 2],
    counts: [usize; 2],
}

impl ScannedJoin<'_> {
    /// The pairs of both sides.
    pub(crate) fn len(&self) -> usize {
        self.counts[0] + self.counts[1]
    }
}

/// A checked join's first half: both sides' ranges and scans, the totals read back.
pub(crate) fn scan_join<'a, K: Key, C: Comparator<K>>(gpu: &'a Gpu, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, kind: JoinKind) -> Result<ScannedJoin<'a>> {
    check_join(a.len, b.len)?;
    let mut layout = TempLayout::default();
    let totals = layout.region(16);
    let a_mode = if kind.keeps_unmatched_a() { JOIN_AT_LEAST_ONE } else { JOIN_MATCHES };
    let sides = [Some(Side::new(&mut layout, a.len, b.len, a_mode as i64)), kind.keeps_unmatched_b().then(|| Side::new(&mut layout, b.len, a.len, JOIN_UNMATCHED as i64))];
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, guard) = temp.device_ptr_mut();
    drop(guard); // the launches below are ordered after the memsets on the same stream
    // The totals and the tiles' states start at zero.
    zero(gpu, base + totals as u64, 2)?;
    for side in sides.iter().flatten() {
        zero(gpu, base + side.states as u64, side.tiles + 1)?;
    }
    let kernels = gpu.index_kernels()?;
    let inputs = [(a, b), (b, a)];
    for (k, side) in sides.iter().enumerate() {
        let Some(side) = side else { continue };
        if side.rows == 0 {
            continue;
        }
        let (rows, other) = inputs[k];
        let params = side.params(base, base + (totals + 8 * k) as u64);
        launch_search::<K, C>(gpu, rows, other, SearchOutput::Range(8), &[params.lower, params.upper])?;
        let cfg = LaunchConfig { grid_dim: (grid_ctas(side.tiles, "join scan grid")?, 1, 1), block_dim: (JOIN_THREADS as u32, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: `JoinParams` is `mergepath_join_scan`'s parameter struct; one CTA of
        // JOIN_THREADS per tile of JOIN_TILE rows, the ranges (written by the search before it
        // on the stream) and offsets hold `rows` entries each, the states `tiles + 1` zeroed
        // slots and the total one zeroed i64, all in the temporary buffer.
        unsafe { gpu.launch(&kernels.join_scan()?, cfg, &params) }?;
    }
    let mut counts = [0i64; 2];
    // SAFETY: the two totals are i64s of the temporary buffer, written by the scans just
    // enqueued on this stream (zero where a side has no scan).
    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut counts, base + totals as u64, gpu.stream().cu_stream()) }?;
    gpu.synchronize()?;
    Ok(ScannedJoin { _temp: temp, base, sides, counts: counts.map(|c| c as usize) })
}

/// A checked join: [`scan_join`], then the expansions into fresh buffers.
pub(crate) fn launch_join<K: Key, C: Comparator<K>>(gpu: &Gpu, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, kind: JoinKind) -> Result<JoinPairs> {
    let scanned = scan_join::<K, C>(gpu, a, b, kind)?;
    let (len, counts, base) = (scanned.len(), scanned.counts, scanned.base);
    let kernels = gpu.index_kernels()?;
    // SAFETY: the expansions below write every one of the `len` pairs (each side's outputs
    // partition its part); the one padding entry is never read through the views.
    let (out_a, out_b) = unsafe { (gpu.alloc_unwritten::<i64>(len.max(1))?, gpu.alloc_unwritten::<i64>(len.max(1))?) };
    let (a_at, b_at) = (gpu.input("pairs", &out_a, 8)?.ptr, gpu.input("pairs", &out_b, 8)?.ptr);
    for (k, side) in scanned.sides.iter().enumerate() {
        let Some(side) = side else { continue };
        if counts[k] == 0 {
            continue;
        }
        // The outputs spread over the rows by a load-balancing search of the offsets.
        let tile = load_balancing_shape(kernels.arch, 8);
        let tiles = load_balancing_tile_count(side.rows, counts[k], tile.tile());
        let mut parts = gpu.temp((tiles + 1) * 8)?;
        let (partitions, _guard) = parts.device_ptr_mut();
        let params = JoinParams { outputs: counts[k] as i64, out_first: (k * counts[0]) as i64, out_a: a_at, out_b: b_at, partitions, ..side.params(base, 0) };
        let search = load_balancing_params(params.offsets, side.rows, counts[k], tile.tile(), partitions);
        launch_load_balancing_partitions(gpu, &kernels, 8, &search)?;
        let cfg = LaunchConfig { grid_dim: (grid_ctas(tiles, "join expansion grid")?, 1, 1), block_dim: (tile.threads, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: `JoinParams` is `mergepath_join_expand`'s parameter struct; its tile is the
        // search shape of 8-byte indices (the partitions' spacing above, enqueued before it),
        // one CTA per tile of the merge of the side's `rows >= 1` offsets (from its scan,
        // non-decreasing from 0, summing to `outputs`) with its outputs, each written at
        // out_first + k < len in the two fresh buffers of `len` entries; pairs of B rows stay
        // below `other_rows` (cut in the kernel).
        unsafe { gpu.launch_dependent(&kernels.join_expand()?, cfg, &params, kernels.arch) }?;
    }
    Ok(JoinPairs { a: out_a, b: out_b, len })
}

/// Zeroes `count` u64s at the device address `at` on the stream.
fn zero(gpu: &Gpu, at: u64, count: usize) -> Result<()> {
    // SAFETY: `at` holds `count` u64s of the caller's temporary buffer, alive until the
    // stream has run the memset (the buffer is freed in stream order).
    unsafe { cudarc::driver::result::memset_d8_async(at, 0, count * 8, gpu.stream().cu_stream()) }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_whose_pairs_could_reach_2_to_the_62_are_too_large() {
        assert!(check_join(0, 1 << 40).is_ok());
        assert!(check_join(1 << 30, 1 << 31).is_ok());
        assert!(matches!(check_join(1 << 31, 1 << 31), Err(Error::TooLarge { .. })));
        assert!(matches!(check_join(usize::MAX, 2), Err(Error::TooLarge { .. })));
    }
}

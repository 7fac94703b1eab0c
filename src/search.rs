//! Vectorized sorted search: for each of many sorted needles, its lower or upper bound in a
//! sorted haystack, in O(needles + haystack) work.
//!
//! The needles and the haystack are merged virtually with the two-phase layer of
//! [`crate::partition`] (coarse partitions, then tiles in shared memory with a serial merge per
//! thread, as Modern GPU's SortedSearch), and each needle's bound is the number of haystack items
//! merged before it. Nothing is merged into memory and no needle does a binary search of its
//! own. Lower bounds merge the needles first (a needle goes before the haystack items equal to
//! it), upper bounds the haystack first.

use crate::error::{Error, Result};
use crate::device::buffers::BufArg;
use crate::device::kernels::Kernels;
use crate::device::launch::{grid_ctas, KernelArg};
use crate::device::Gpu;
use crate::key::{Comparator, Key};
use crate::partition::{launch_partitions, partition_count};
pub use crate::types::Bound;
use crate::types::SortIndex;
use crate::tuning::{search_shape, LaunchShape};
use cudarc::driver::{CudaFunction, DevicePtr, DevicePtrMut, LaunchConfig};

/// Writes to `out[j]` the `bound` of `needles[j]` in `haystack`, for every needle; both must be
/// sorted by `comp`. `out` may be longer (the rest is left as it is) and must not overlap the
/// inputs; indices are `u32` (haystacks of up to 2^32 - 1 items, [`Error::TooLarge`] past that)
/// or `u64`. Any lengths, including 0 and more than 2^31. Returns without waiting for the GPU.
///
/// Unsorted needles or haystack give unspecified indices in `0..=haystack.len()`, never an
/// out-of-bounds access.
pub fn sorted_search<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    bound: Bound,
    out: &mut impl DevicePtrMut<I>,
    _comp: C,
) -> Result<()> {
    let (needles, haystack) = search_inputs::<K, I>(gpu, needles, haystack)?;
    let out = gpu.output("out", out, std::mem::size_of::<I>(), needles.len, &[&needles, &haystack])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Bound(bound, std::mem::size_of::<I>()), out.ptr)
}

/// Both bounds of every needle: `lower[j]..upper[j]` is the range of haystack items equal to
/// `needles[j]` (empty where there is none). Two searches; otherwise as [`sorted_search`].
pub fn sorted_search_range<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    lower: &mut impl DevicePtrMut<I>,
    upper: &mut impl DevicePtrMut<I>,
    comp: C,
) -> Result<()> {
    {
        // Both outputs validated (lengths, overlaps) before the first launch.
        let (n, h) = search_inputs::<K, I>(gpu, needles, haystack)?;
        let word = std::mem::size_of::<I>();
        let lo = gpu.output("lower", lower, word, n.len, &[&n, &h])?;
        gpu.output("upper", upper, word, n.len, &[&n, &h, &lo])?;
    }
    sorted_search(gpu, needles, haystack, Bound::Lower, lower, comp)?;
    sorted_search(gpu, needles, haystack, Bound::Upper, upper, comp)
}

/// Writes to `counts[j]` how many haystack items are equal to `needles[j]` (neither goes
/// before the other), as Modern GPU's SortedEqualityCount: a lower-bound search into temporary
/// storage, then an upper-bound search that writes the differences. Otherwise as
/// [`sorted_search`].
pub fn sorted_search_count<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    counts: &mut impl DevicePtrMut<I>,
    _comp: C,
) -> Result<()> {
    let (needles, haystack) = search_inputs::<K, I>(gpu, needles, haystack)?;
    let out = gpu.output("counts", counts, std::mem::size_of::<I>(), needles.len, &[&needles, &haystack])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Count(std::mem::size_of::<I>()), out.ptr)
}

/// Writes to `found[j]` 1 if `haystack` holds an item equal to `needles[j]`, else 0: a
/// lower-bound search into temporary storage (8 bytes per needle), then an upper-bound search
/// that compares. Otherwise as [`sorted_search`] (any haystack length).
pub fn sorted_search_contains<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    found: &mut impl DevicePtrMut<u8>,
    _comp: C,
) -> Result<()> {
    let (needles, haystack) = search_inputs::<K, u64>(gpu, needles, haystack)?;
    let out = gpu.output("found", found, 1, needles.len, &[&needles, &haystack])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Contains, out.ptr)
}

/// What a search writes per needle.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SearchOutput {
    /// The bound, as indices of 4 or 8 bytes.
    Bound(Bound, usize),
    /// Equal counts, as indices of 4 or 8 bytes.
    Count(usize),
    /// Match flags (one byte each).
    Contains,
}

/// Enqueues the search writing `what` for every needle to `out` on validated buffers.
pub(crate) fn launch_search<K: Key, C: Comparator<K>>(gpu: &Gpu, needles: &BufArg<'_>, haystack: &BufArg<'_>, what: SearchOutput, out: u64) -> Result<()> {
    if needles.len == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    match what {
        SearchOutput::Bound(bound, word) => {
            let grid = SearchGrid::new::<K>(&kernels, needles, haystack)?;
            let mut temp = gpu.temp(grid.partition_bytes())?;
            let (parts, _guard) = temp.device_ptr_mut();
            let side = if bound == Bound::Upper { "upper" } else { "lower" };
            let func = kernels.function(&format!("mergepath_sorted_search_{side}_{word}"))?;
            grid.launch(gpu, &kernels, needles, haystack, bound, &func, parts, 0, out)
        }
        SearchOutput::Count(word) => {
            let lower = kernels.for_values("mergepath_sorted_search_lower", word)?;
            let count = kernels.for_values("mergepath_sorted_search_count", word)?;
            launch_search_pair::<K>(gpu, &kernels, needles, haystack, word, &lower, &count, out)
        }
        SearchOutput::Contains => {
            let lower = kernels.function("mergepath_sorted_search_lower_8")?;
            let contains = kernels.function("mergepath_sorted_search_contains")?;
            launch_search_pair::<K>(gpu, &kernels, needles, haystack, 8, &lower, &contains, out)
        }
    }
}

/// The checks of a search of `needles` in `haystack` items with outputs of the given lengths,
/// in the device functions' order: a haystack too long for `I`, then each output's length.
pub(crate) fn check_search<I: SortIndex>(needles: usize, haystack: usize, outputs: &[(&'static str, usize)]) -> Result<()> {
    if haystack >= I::MAX_COUNT {
        return Err(Error::TooLarge { what: "u32 indices (a haystack of 2^32 items or more)" });
    }
    for &(what, len) in outputs {
        if len < needles {
            return Err(Error::OutputTooSmall { what, needed: needles, got: len });
        }
    }
    Ok(())
}

/// Validated needle and haystack buffers; a haystack too long for `I` is an error.
fn search_inputs<'a, K: Key, I: SortIndex>(
    gpu: &'a Gpu,
    needles: &'a impl DevicePtr<K>,
    haystack: &'a impl DevicePtr<K>,
) -> Result<(BufArg<'a>, BufArg<'a>)> {
    let align = std::mem::align_of::<K>();
    let needles = gpu.input("needles", needles, align)?;
    let haystack = gpu.input("haystack", haystack, align)?;
    check_search::<I>(needles.len, haystack.len, &[])?;
    Ok((needles, haystack))
}

/// A lower-bound pass into temporary storage (`word`-byte indices), then `second`, an
/// upper-bound pass that reads them and writes `out`. One temporary buffer: the lower bounds,
/// then the partitions both passes use in turn.
#[allow(clippy::too_many_arguments)]
fn launch_search_pair<K: Key>(
    gpu: &Gpu,
    kernels: &Kernels,
    needles: &BufArg<'_>,
    haystack: &BufArg<'_>,
    word: usize,
    lower: &CudaFunction,
    second: &CudaFunction,
    out: u64,
) -> Result<()> {
    if needles.len == 0 {
        return Ok(());
    }
    let grid = SearchGrid::new::<K>(kernels, needles, haystack)?;
    let lower_bytes = (needles.len * word).div_ceil(256) * 256;
    let mut temp = gpu.temp(lower_bytes + grid.partition_bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let parts = base + lower_bytes as u64;
    grid.launch(gpu, kernels, needles, haystack, Bound::Lower, lower, parts, 0, base)?;
    grid.launch(gpu, kernels, needles, haystack, Bound::Upper, second, parts, base, out)
}

/// The launch of a search over `needles.len + haystack.len` merged items (at least one needle).
struct SearchGrid {
    shape: LaunchShape,
    tiles: u32,
    parts: usize,
}

impl SearchGrid {
    fn new<K: Key>(kernels: &Kernels, needles: &BufArg<'_>, haystack: &BufArg<'_>) -> Result<Self> {
        let shape = search_shape(kernels.arch, std::mem::size_of::<K>());
        let total = needles.len + haystack.len;
        let tiles = grid_ctas(total.div_ceil(shape.tile()), "search grid")?;
        Ok(SearchGrid { shape, tiles, parts: partition_count(total, shape.tile()) })
    }

    fn partition_bytes(&self) -> usize {
        self.parts * 8
    }

    /// Enqueues the partitions (into `parts`, `partition_bytes` of device memory) and `func`,
    /// a `mergepath_sorted_search_*` entry whose merge order is `bound`'s, reading `lower`
    /// (null, or needles.len indices of the entry's width) and writing needles.len outputs to
    /// `out`.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        needles: &BufArg<'_>,
        haystack: &BufArg<'_>,
        bound: Bound,
        func: &CudaFunction,
        parts: u64,
        lower: u64,
        out: u64,
    ) -> Result<()> {
        let (a, b) = match bound {
            Bound::Lower => (needles, haystack),
            Bound::Upper => (haystack, needles),
        };
        launch_partitions(gpu, kernels, a, b, self.shape.tile(), parts, self.parts)?;
        let cfg = LaunchConfig { grid_dim: (self.tiles, 1, 1), block_dim: (self.shape.threads, 1, 1), shared_mem_bytes: 0 };
        let args = [
            KernelArg::Ptr(needles.ptr),
            KernelArg::I64(needles.len as i64),
            KernelArg::Ptr(haystack.ptr),
            KernelArg::I64(haystack.len as i64),
            KernelArg::Ptr(parts),
            KernelArg::Ptr(lower),
            KernelArg::Ptr(out),
        ];
        // SAFETY: `func` is a `mergepath_sorted_search_*` entry with these arguments whose
        // merge order is `bound`'s; its tile is the search shape (same table row), the grid
        // covers ceil(total / tile) tiles, the partitions (tiles + 1) were just computed over
        // (A, B) in that order, `lower` is null or holds needles.len indices of the entry's
        // width, and `out` holds needles.len outputs (validated by the caller).
        unsafe { gpu.launch(func, cfg, &args) }
    }
}

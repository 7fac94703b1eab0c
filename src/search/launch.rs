//! The launches of a search: the partitions and one search kernel.

use super::plan::{SearchGrid, SearchOutput};
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::contract::{KeyBoundsParams, SortedSearchParams};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::sort::with_comparable_keys;
use crate::partition::launch::launch_partitions;
use crate::types::Bound;
use crate::device::kernels::Entry;
use cudarc::driver::LaunchConfig;

/// Enqueues the search writing `what` for every needle to `outs` (one output, or the range's
/// lower and upper) on validated buffers. One pass over the partitions of the merge in the
/// bound's order: bounds as such; ranges, counts and flags from the lower-bound merge and the
/// runs of equal haystack items after the bounds.
pub(crate) fn launch_search<K: Key, C: Comparator<K>>(gpu: &Gpu, needles: &CheckedBuffer<'_>, haystack: &CheckedBuffer<'_>, what: SearchOutput, outs: &[u64]) -> Result<()> {
    debug_assert_eq!(outs.len(), what.outputs(), "one device pointer per output");
    if needles.len == 0 {
        return Ok(());
    }
    if let Some(order) = &C::RECORD {
        // Records wider than the key tiles: their comparable keys searched.
        return with_comparable_keys::<K, _>(gpu, order, &[(needles.ptr, needles.len), (haystack.ptr, haystack.len)], |keys, kernels| {
            let (n, h) = (CheckedBuffer::raw(keys, needles.len, 8), CheckedBuffer::raw(keys + (needles.len * 8) as u64, haystack.len, 8));
            launch_search_with(gpu, kernels, 8, &n, &h, what, outs)
        });
    }
    launch_search_with(gpu, &*gpu.kernels::<K, C>()?, std::mem::size_of::<K>(), needles, haystack, what, outs)
}

/// [`launch_search`] by the kernels of `kernels`, whose keys are `key_bytes` wide.
fn launch_search_with(gpu: &Gpu, kernels: &Kernels, key_bytes: usize, needles: &CheckedBuffer<'_>, haystack: &CheckedBuffer<'_>, what: SearchOutput, outs: &[u64]) -> Result<()> {
    let (bound, func) = match what {
        SearchOutput::Bound(Bound::Upper, word) => (Bound::Upper, kernels.sorted_search_upper(word)?),
        SearchOutput::Bound(Bound::Lower, word) => (Bound::Lower, kernels.sorted_search_lower(word)?),
        SearchOutput::Range(word) => (Bound::Lower, kernels.sorted_search_range(word)?),
        SearchOutput::Count(word) => (Bound::Lower, kernels.sorted_search_count(word)?),
        SearchOutput::Contains => (Bound::Lower, kernels.sorted_search_contains()?),
    };
    let grid = SearchGrid::new(kernels.arch, key_bytes, needles.len, haystack.len)?;
    let mut temp = gpu.temp(grid.partition_bytes())?;
    let (parts, _guard) = temp.device_ptr_mut();
    grid.launch(gpu, kernels, needles, haystack, bound, &func, parts, outs[0], outs.get(1).copied().unwrap_or(0))
}

/// Enqueues both bounds of every needle (any order; `needles.len` of them) in the sorted
/// `haystack` into `lower` and `upper` (`needles.len` `i64`s each), one binary search per bound
/// and needle: for a few needles in a long haystack, where [`launch_search`] would read all of
/// it (the sharded sort's splitter selection). Records wider than the key tiles have no key
/// kernels: their needles must be sorted too, and [`launch_search`] finds their ranges.
pub(crate) fn launch_key_bounds<K: Key, C: Comparator<K>>(gpu: &Gpu, needles: &CheckedBuffer<'_>, haystack: &CheckedBuffer<'_>, lower: u64, upper: u64) -> Result<()> {
    if needles.len == 0 {
        return Ok(());
    }
    if C::RECORD.is_some() {
        return launch_search::<K, C>(gpu, needles, haystack, SearchOutput::Range(8), &[lower, upper]);
    }
    let (needle_count, count) = match (i64::try_from(needles.len), i64::try_from(haystack.len)) {
        (Ok(n), Ok(c)) => (n, c),
        _ => return Err(Error::TooLarge { what: "key bounds past 2^63 items" }),
    };
    let kernels = gpu.kernels::<K, C>()?;
    let func = kernels.key_bounds()?;
    let ctas = needles.len.div_ceil(256).min(1 << 16) as u32;
    let cfg = LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let params = KeyBoundsParams { keys: haystack.ptr, count, needles: needles.ptr, needle_count, lower, upper };
    // SAFETY: `KeyBoundsParams` is `mergepath_key_bounds`'s parameter struct; the checked
    // buffers hold their counts of keys, `lower` and `upper` (the caller's) one i64 per needle,
    // the grid-stride loop stays below the needles' count and each search within the haystack.
    unsafe { gpu.launch(&func, cfg, &params) }
}

impl SearchGrid {
    /// Enqueues the partitions (into `parts`, `partition_bytes` of device memory) and `func`,
    /// a `mergepath_sorted_search_*` entry whose merge order is `bound`'s, writing needles.len
    /// outputs to `out` and, for the range entries, to `upper` (null for the others).
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        needles: &CheckedBuffer<'_>,
        haystack: &CheckedBuffer<'_>,
        bound: Bound,
        func: &Entry<SortedSearchParams>,
        parts: u64,
        out: u64,
        upper: u64,
    ) -> Result<()> {
        let (a, b) = match bound {
            Bound::Lower => (needles, haystack),
            Bound::Upper => (haystack, needles),
        };
        launch_partitions(gpu, kernels, a, b, self.shape.tile(), parts, self.parts)?;
        let cfg = LaunchConfig { grid_dim: (self.tiles, 1, 1), block_dim: (self.shape.threads, 1, 1), shared_mem_bytes: 0 };
        let params = SortedSearchParams {
            needles: needles.ptr,
            needle_count: needles.len as i64,
            haystack: haystack.ptr,
            haystack_count: haystack.len as i64,
            partitions: parts,
            out,
            upper,
        };
        // SAFETY: `func` is a `mergepath_sorted_search_*` entry (`SortedSearchParams`) whose
        // merge order is `bound`'s; its tile is the search shape (same table row), the grid
        // covers ceil(total / tile) tiles, the partitions (tiles + 1) were just computed over
        // (A, B) in that order, `out` holds needles.len outputs of the entry's width and so
        // does `upper` for the range entries, which alone write it (validated by the caller);
        // the partition kernel is the launch before it, and sorted_search_tile waits for it.
        unsafe { gpu.launch_dependent(func, cfg, &params, kernels.arch) }
    }
}

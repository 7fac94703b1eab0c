//! The launches of a search: the partitions and the search kernels, one pass or two.

use super::plan::{SearchGrid, SearchOutput};
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::contract::SortedSearchParams;
use crate::device::temp::TempLayout;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key};
use crate::partition::launch_partitions;
use crate::types::Bound;
use cudarc::driver::{CudaFunction, LaunchConfig};

/// Enqueues the search writing `what` for every needle to `out` on validated buffers.
pub(crate) fn launch_search<K: Key, C: Comparator<K>>(gpu: &Gpu, needles: &CheckedBuffer<'_>, haystack: &CheckedBuffer<'_>, what: SearchOutput, out: u64) -> Result<()> {
    if needles.len == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    match what {
        SearchOutput::Bound(bound, word) => {
            let grid = SearchGrid::new(kernels.arch, std::mem::size_of::<K>(), needles.len, haystack.len)?;
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

/// A lower-bound pass into temporary storage (`word`-byte indices), then `second`, an
/// upper-bound pass that reads them and writes `out`. One temporary buffer: the lower bounds,
/// then the partitions both passes use in turn.
#[allow(clippy::too_many_arguments)]
fn launch_search_pair<K: Key>(
    gpu: &Gpu,
    kernels: &Kernels,
    needles: &CheckedBuffer<'_>,
    haystack: &CheckedBuffer<'_>,
    word: usize,
    lower: &CudaFunction,
    second: &CudaFunction,
    out: u64,
) -> Result<()> {
    if needles.len == 0 {
        return Ok(());
    }
    let grid = SearchGrid::new(kernels.arch, std::mem::size_of::<K>(), needles.len, haystack.len)?;
    let mut layout = TempLayout::default();
    let (lower_at, parts_at) = (layout.region(needles.len * word), layout.region(grid.partition_bytes()));
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let (lower_bounds, parts) = (base + lower_at as u64, base + parts_at as u64);
    grid.launch(gpu, kernels, needles, haystack, Bound::Lower, lower, parts, 0, lower_bounds)?;
    grid.launch(gpu, kernels, needles, haystack, Bound::Upper, second, parts, lower_bounds, out)
}

impl SearchGrid {
    /// Enqueues the partitions (into `parts`, `partition_bytes` of device memory) and `func`,
    /// a `mergepath_sorted_search_*` entry whose merge order is `bound`'s, reading `lower`
    /// (null, or needles.len indices of the entry's width) and writing needles.len outputs to
    /// `out`.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        gpu: &Gpu,
        kernels: &Kernels,
        needles: &CheckedBuffer<'_>,
        haystack: &CheckedBuffer<'_>,
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
        let params = SortedSearchParams {
            needles: needles.ptr,
            needle_count: needles.len as i64,
            haystack: haystack.ptr,
            haystack_count: haystack.len as i64,
            partitions: parts,
            lower,
            out,
        };
        // SAFETY: `func` is a `mergepath_sorted_search_*` entry (`SortedSearchParams`) whose
        // merge order is `bound`'s; its tile is the search shape (same table row), the grid
        // covers ceil(total / tile) tiles, the partitions (tiles + 1) were just computed over
        // (A, B) in that order, `lower` is null or holds needles.len indices of the entry's
        // width, and `out` holds needles.len outputs (validated by the caller).
        unsafe { gpu.launch(func, cfg, &params) }
    }
}

//! The launch of the partition kernel, for the merge, the search and the sorts, and the
//! library's tuned tile shapes on a `Gpu`, for users' kernels.

use super::tiles::TileShape;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key, Less};
use crate::tuning::{merge_shape, search_shape, sort_shape};
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::contract::{MultiwayBoundariesParams, MultiwayPartitionsParams, PartitionsParams, MULTIWAY_MAX_WAYS, MULTIWAY_PARTITION_THREADS, PARTITION_THREADS};
use crate::device::launch::grid_ctas;
use crate::device::temp::{temp_aligned, TempLayout};
use crate::device::Gpu;
use crate::types::Tie;
use cudarc::driver::{CudaSlice, LaunchConfig};

/// The launch of a partition kernel (merge or mergesort) computing `count` partitions, one
/// thread each.
pub(crate) fn partition_launch_config(count: usize) -> Result<LaunchConfig> {
    let ctas = grid_ctas(count.div_ceil(PARTITION_THREADS), "partition grid")?;
    Ok(LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (PARTITION_THREADS as u32, 1, 1), shared_mem_bytes: 0 })
}

/// Enqueues the partition kernel writing `count` partitions to `out`, ties to A (the library's
/// merges).
pub(crate) fn launch_partitions(
    gpu: &Gpu,
    kernels: &Kernels,
    a: &CheckedBuffer<'_>,
    b: &CheckedBuffer<'_>,
    spacing: usize,
    out: u64,
    count: usize,
) -> Result<()> {
    launch_partitions_tie(gpu, kernels, a, b, spacing, Tie::AFirst, out, count)
}

/// [`launch_partitions`] with equal items ordered as `tie` says.
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_partitions_tie(
    gpu: &Gpu,
    kernels: &Kernels,
    a: &CheckedBuffer<'_>,
    b: &CheckedBuffer<'_>,
    spacing: usize,
    tie: Tie,
    out: u64,
    count: usize,
) -> Result<()> {
    let spacing = i64::try_from(spacing).map_err(|_| Error::invalid("spacing", format!("{spacing} exceeds i64")))?;
    let cfg = partition_launch_config(count)?;
    let params = PartitionsParams { a: a.ptr, a_count: a.len as i64, b: b.ptr, b_count: b.len as i64, spacing, num_partitions: count as i64, partitions: out };
    let func = match tie {
        Tie::AFirst => kernels.partitions()?,
        Tie::BFirst => kernels.partitions_b_first()?,
    };
    // SAFETY: `PartitionsParams` is the parameter struct of `mergepath_partitions` and
    // `mergepath_partitions_b_first`; a and b are valid for their lengths, `out` holds `count` i64, and the grid covers `count`
    // threads (extra threads return at once).
    unsafe { gpu.launch(&func, cfg, &params) }
}

impl Gpu {
    /// The tile shape of the library's merge kernels for keys `K` on this GPU (the row of
    /// `mergepath-build/kernels/tuning.tsv` for the architecture the loaded kernels were compiled for and `K`'s
    /// size), for a two-phase kernel of your own compiled with the same NT and VT. Loads `K`'s
    /// kernels if no call has yet.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), mergepath::Error> {
    /// let gpu = mergepath::Gpu::new(0)?;
    /// let shape = gpu.merge_tile_shape::<u32>()?;
    /// println!("{} threads x {} items per tile", shape.threads, shape.items_per_thread);
    /// # Ok(()) }
    /// ```
    pub fn merge_tile_shape<K: Key>(&self) -> Result<TileShape>
    where
        Less: Comparator<K>,
    {
        Ok(merge_shape(self.kernels::<K, Less>()?.arch, std::mem::size_of::<K>()).into())
    }

    /// The tile shape of the library's sorted-search kernels for keys `K` on this GPU, as
    /// [`Gpu::merge_tile_shape`].
    pub fn search_tile_shape<K: Key>(&self) -> Result<TileShape>
    where
        Less: Comparator<K>,
    {
        Ok(search_shape(self.kernels::<K, Less>()?.arch, std::mem::size_of::<K>()).into())
    }
}

/// The inputs of a multiway kernel in device memory: each input's address and length.
pub(crate) struct MultiwayTable {
    addresses: CudaSlice<u64>,
    counts: CudaSlice<i64>,
    lengths: Vec<usize>,
    /// The size of the inputs' keys.
    pub(crate) key_bytes: usize,
    /// Inputs.
    pub(crate) ways: usize,
    /// Items of all inputs.
    pub(crate) total: usize,
}

impl MultiwayTable {
    /// Uploads the addresses and lengths of validated inputs (at most
    /// [`MULTIWAY_MAX_WAYS`]).
    pub(crate) fn upload<K: Key>(gpu: &Gpu, inputs: &[CheckedBuffer<'_>]) -> Result<Self> {
        if inputs.len() > MULTIWAY_MAX_WAYS {
            return Err(Error::TooLarge { what: "inputs of one multiway kernel (at most MULTIWAY_MAX_WAYS)" });
        }
        let addresses: Vec<u64> = inputs.iter().map(|b| b.ptr).collect();
        let lengths: Vec<usize> = inputs.iter().map(|b| b.len).collect();
        let counts: Vec<i64> = lengths.iter().map(|&n| n as i64).collect();
        Ok(MultiwayTable { addresses: gpu.upload_table(&addresses)?, counts: gpu.upload_table(&counts)?, ways: inputs.len(), total: lengths.iter().sum(), lengths, key_bytes: std::mem::size_of::<K>() })
    }

    /// The device addresses of the address and length arrays, for a kernel's parameters.
    pub(crate) fn pointers(&self, gpu: &Gpu) -> Result<(u64, u64)> {
        Ok((gpu.input("multiway inputs", &self.addresses, 8)?.ptr, gpu.input("multiway counts", &self.counts, 8)?.ptr))
    }
}

/// The spacing of the sample boundaries that bracket the multiway splits. The partition kernel
/// merges a bracket of at most one sort tile (`tile` items) in shared memory and searches a
/// larger one in global memory; brackets of random inputs are about exponentially distributed
/// around the spacing, so half a tile keeps most of them in one tile. At least 4 items per
/// input, so the boundaries' rows (a split of every input each) take at most 2 bytes per item.
fn boundary_spacing(tile: usize, ways: usize) -> usize {
    (tile / 2).max(4 * ways).max(256)
}

/// The temporary device bytes [`launch_multiway_partitions`] takes at most for `ways` inputs
/// of `total` items in all, at the sort tile `tile`: the sample boundaries' rows and ranks.
pub(crate) fn multiway_partitions_temp_bytes(total: usize, ways: usize, tile: usize) -> usize {
    let boundaries = total / boundary_spacing(tile, ways);
    temp_aligned(boundaries * ways * 8) + temp_aligned(boundaries * 8)
}

/// Enqueues the multiway partition kernels: the sample boundaries, then `count` rows of
/// `table.ways` splits, every `spacing` outputs, to `out`, each searched inside its bracket of
/// boundaries.
pub(crate) fn launch_multiway_partitions(gpu: &Gpu, kernels: &Kernels, table: &MultiwayTable, spacing: usize, out: u64, count: usize) -> Result<()> {
    let ways = table.ways;
    let shape = sort_shape(kernels.arch, table.key_bytes);
    let boundary_spacing = boundary_spacing(shape.tile(), ways);
    let mut boundary_starts = Vec::with_capacity(ways);
    let mut num_boundaries = 0usize;
    for &n in &table.lengths {
        boundary_starts.push(num_boundaries as i64);
        num_boundaries += n.saturating_sub(1) / boundary_spacing;
    }
    let mut layout = TempLayout::default();
    let rows_at = layout.region(num_boundaries * ways * 8);
    let ranks_at = layout.region(num_boundaries * 8);
    let mut temp = gpu.temp(layout.bytes())?;
    let (base, _guard) = temp.device_ptr_mut();
    let (rows, ranks) = (base + rows_at as u64, base + ranks_at as u64);
    let (inputs, counts) = table.pointers(gpu)?;
    let to_i64 = |n: usize, what: &'static str| i64::try_from(n).map_err(|_| Error::invalid(what, format!("{n} exceeds i64")));
    if num_boundaries > 0 {
        let starts = gpu.upload_table(&boundary_starts)?;
        let cfg = LaunchConfig { grid_dim: (grid_ctas(num_boundaries, "multiway boundary grid")?, 1, 1), block_dim: (MULTIWAY_PARTITION_THREADS as u32, 1, 1), shared_mem_bytes: 0 };
        let params = MultiwayBoundariesParams {
            inputs,
            counts,
            ways: ways as i64,
            spacing: to_i64(boundary_spacing, "spacing")?,
            boundary_starts: gpu.input("multiway boundary starts", &starts, 8)?.ptr,
            num_boundaries: num_boundaries as i64,
            rows,
            ranks,
        };
        let func = kernels.multiway_boundaries()?;
        // SAFETY: `MultiwayBoundariesParams` is `mergepath_multiway_boundaries`' parameter
        // struct; the table holds `ways` (<= MULTIWAY_MAX_WAYS) validated inputs and their
        // lengths, `boundary_starts` their `ways` boundary offsets (input t's boundaries are
        // items below its length), `rows` and `ranks` hold num_boundaries * ways and
        // num_boundaries i64, and the grid is one CTA per boundary.
        unsafe { gpu.launch(&func, cfg, &params) }?;
    }
    let cfg = LaunchConfig { grid_dim: (grid_ctas(count, "multiway partition grid")?, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let params = MultiwayPartitionsParams {
        inputs,
        counts,
        ways: ways as i64,
        total: table.total as i64,
        spacing: to_i64(spacing, "spacing")?,
        num_partitions: count as i64,
        boundary_rows: rows,
        boundary_ranks: ranks,
        num_boundaries: num_boundaries as i64,
        splits: out,
    };
    let func = kernels.multiway_partitions()?;
    // SAFETY: `MultiwayPartitionsParams` is `mergepath_multiway_partitions`'s parameter struct;
    // the table holds `ways` (<= MULTIWAY_MAX_WAYS) addresses of validated inputs and their
    // lengths, the boundaries' rows and ranks are those just enqueued on the same stream (read
    // clamped), `out` holds count * ways i64, and the grid is one CTA per partition, of the
    // sort shape's threads (the kernel's tile) for the table's key size.
    unsafe { gpu.launch(&func, cfg, &params) }
}

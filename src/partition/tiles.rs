//! Tiles of a two-phase kernel: their shape and grid, and the whole tile loop (coarse
//! partitions, per-thread splits, serial merge) run on the CPU, so a kernel's tile logic can be
//! tested without a GPU.

use super::plan::{merge_path, merge_path_partitions_cpu};
use crate::device::launch::grid_ctas;
use crate::error::{Error, Result};
use crate::tuning::LaunchShape;
use cudarc::driver::LaunchConfig;

/// The shape of a two-phase kernel's tiles: `threads` per CTA (NT), each merging
/// `items_per_thread` (VT) items, so a CTA's tile holds NT * VT outputs. It must match the
/// kernel's compile-time NT and VT.
///
/// ```
/// use mergepath::partition::TileShape;
/// let shape = TileShape { threads: 128, items_per_thread: 11 };
/// assert_eq!(shape.tile(), 1408);
/// assert_eq!(shape.tiles(10_000), 8);
/// let cfg = shape.launch_config(10_000).unwrap();
/// assert_eq!((cfg.grid_dim.0, cfg.block_dim.0), (8, 128));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileShape {
    /// Threads per CTA (NT).
    pub threads: u32,
    /// Items each thread handles (VT).
    pub items_per_thread: u32,
}

impl TileShape {
    /// Items per tile (NV = NT * VT), the `spacing` of the tiles' partitions.
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.items_per_thread as usize
    }

    /// Tiles covering `total` items: `ceil(total / tile)`.
    pub fn tiles(&self, total: usize) -> usize {
        total.div_ceil(self.tile())
    }

    /// The launch of one CTA of `threads` per tile over `total` items, no dynamic shared
    /// memory: [`Error::InvalidArgument`] for no items or an empty tile (a grid of no CTAs
    /// cannot be launched), [`Error::TooLarge`] past CUDA's grid limit (2^31 - 1 CTAs).
    pub fn launch_config(&self, total: usize) -> Result<LaunchConfig> {
        if self.tile() == 0 {
            return Err(Error::invalid("shape", format!("a tile shape needs threads and items per thread, got {self:?}")));
        }
        if total == 0 {
            return Err(Error::invalid("total", "a launch needs at least one item, got 0"));
        }
        let ctas = grid_ctas(self.tiles(total), "tile grid")?;
        Ok(LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (self.threads, 1, 1), shared_mem_bytes: 0 })
    }
}

impl From<LaunchShape> for TileShape {
    fn from(shape: LaunchShape) -> Self {
        TileShape { threads: shape.threads, items_per_thread: shape.values_per_thread }
    }
}

/// Which input a merged item comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The first input; of equal keys, A's go first.
    A,
    /// The second input.
    B,
}

/// Runs a two-phase merge kernel's tile loop on the CPU, exactly as the device cuts the work,
/// and calls `visit(out_index, source, source_index, thread, tile)` for each merged item:
/// coarse partitions every [`TileShape::tile`] outputs ([`merge_path_partitions_cpu`]), each
/// tile's ranges of `a` and `b`, in each tile one split per thread at diagonal
/// `items_per_thread * thread` ([`merge_path`] inside the tile), then the thread's serial merge
/// of up to `items_per_thread` items.
///
/// Items come in tile order, then thread order, then each thread's serial order, which is the
/// merged order: `out_index` counts 0, 1, ... `a.len() + b.len() - 1`; `source_index` is the
/// item's index in all of `a` or `b` (not in the tile). A tile's last threads visit fewer or no
/// items where the tile is short, as the device stores nothing past the end. `is_less(x, y)`:
/// x goes strictly before y; `a` and `b` must be sorted by it.
///
/// ```
/// use mergepath::partition::{visit_merge_tiles_cpu, Source, TileShape};
/// let (a, b) = ([1, 3, 5], [2, 3]);
/// let mut merged = Vec::new();
/// visit_merge_tiles_cpu(&a, &b, TileShape { threads: 2, items_per_thread: 2 }, |x, y| x < y, |out, source, i, thread, tile| {
///     merged.push((out, source, i, thread, tile));
/// });
/// assert_eq!(merged, [
///     (0, Source::A, 0, 0, 0), (1, Source::B, 0, 0, 0), (2, Source::A, 1, 1, 0), (3, Source::B, 1, 1, 0),
///     (4, Source::A, 2, 0, 1),
/// ]);
/// ```
pub fn visit_merge_tiles_cpu<T>(
    a: &[T],
    b: &[T],
    shape: TileShape,
    is_less: impl Fn(&T, &T) -> bool,
    mut visit: impl FnMut(usize, Source, usize, usize, usize),
) {
    assert!(shape.tile() > 0, "a tile shape needs threads and items per thread");
    let (threads, vt, tile) = (shape.threads as usize, shape.items_per_thread as usize, shape.tile());
    let total = a.len() + b.len();
    let parts = merge_path_partitions_cpu(a, b, tile, &is_less);
    for (t, split) in parts.windows(2).enumerate() {
        let (d0, d1) = (t * tile, ((t + 1) * tile).min(total));
        let (a0, b0) = (split[0], d0 - split[0]);
        let (ta, tb) = (&a[a0..split[1]], &b[b0..d1 - split[1]]);
        let count = d1 - d0;
        for thread in 0..threads {
            let diag = (vt * thread).min(count);
            let mut i = merge_path(ta, tb, diag, &is_less);
            let mut j = diag - i;
            // The serial loop (`serial_merge` in mergepath-build/kernels/mergepath/thread/serial.cuh), its items
            // ending where the next thread's start.
            for k in 0..vt.min(count - diag) {
                let out = d0 + diag + k;
                if j >= tb.len() || (i < ta.len() && !is_less(&tb[j], &ta[i])) {
                    visit(out, Source::A, a0 + i, thread, t);
                    i += 1;
                } else {
                    visit(out, Source::B, b0 + j, thread, t);
                    j += 1;
                }
            }
        }
    }
}

//! A CPU model of the two-phase merge (coarse partitions, per-thread partitions, the serial
//! loop, as the kernels cut the work), for the tests.

use crate::partition::tiles::{visit_merge_tiles_cpu, Source, TileShape};

/// The whole two-phase merge on the CPU: coarse partitions every `nt * vt`, then in each tile
/// one search per thread at diagonal `vt * t` and the serial loop ([`visit_merge_tiles_cpu`]).
pub fn two_phase_merge<T: Copy>(a: &[T], b: &[T], nt: usize, vt: usize, less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let shape = TileShape { threads: nt.try_into().expect("threads fit u32"), items_per_thread: vt.try_into().expect("items per thread fit u32") };
    let mut out = Vec::with_capacity(a.len() + b.len());
    visit_merge_tiles_cpu(a, b, shape, less, |_, source, index, _, _| {
        out.push(match source {
            Source::A => a[index],
            Source::B => b[index],
        })
    });
    out
}

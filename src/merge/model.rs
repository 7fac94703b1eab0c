//! A CPU model of the two-phase merge (coarse partitions, per-thread partitions, the serial
//! loop, as the kernels cut the work), for the tests.

use crate::partition::{merge_path, merge_path_partitions_cpu};

/// The kernel's per-thread loop (`serial_merge` in kernels/mergepath/serial.cuh), VT items
/// from (a, b); positions past both ends yield nothing, as the kernel stores nothing there.
fn serial_merge<T: Copy>(a: &[T], b: &[T], mut i: usize, mut j: usize, vt: usize, less: &impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut out = Vec::new();
    for _ in 0..vt {
        let take_a = j >= b.len() || (i < a.len() && !less(&b[j], &a[i]));
        if take_a && i < a.len() {
            out.push(a[i]);
            i += 1;
        } else if !take_a {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

/// The whole two-phase merge on the CPU: coarse partitions every `nt * vt`, then in each tile
/// one search per thread at diagonal `vt * t` and the serial loop.
pub fn two_phase_merge<T: Copy>(a: &[T], b: &[T], nt: usize, vt: usize, less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let tile = nt * vt;
    let total = a.len() + b.len();
    let parts = merge_path_partitions_cpu(a, b, tile, &less);
    let mut out = Vec::with_capacity(total);
    for t in 0..parts.len() - 1 {
        let (d0, d1) = (t * tile, ((t + 1) * tile).min(total));
        let (ta, tb) = (&a[parts[t]..parts[t + 1]], &b[d0 - parts[t]..d1 - parts[t + 1]]);
        for thread in 0..nt {
            let diag = (vt * thread).min(ta.len() + tb.len());
            let i = merge_path(ta, tb, diag, &less);
            let items = serial_merge(ta, tb, i, diag - i, vt, &less);
            // A thread's items end where the next thread's start.
            let take = vt.min(ta.len() + tb.len() - diag);
            out.extend_from_slice(&items[..take]);
        }
    }
    out
}

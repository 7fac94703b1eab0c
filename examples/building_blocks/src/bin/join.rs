//! A sorted relational join of two key columns (inner, left outer, full outer) from mergepath's
//! public building blocks: per-row match counts and first matches by vectorized sorted search
//! (`mergepath::sorted_search_count`, `mergepath::sorted_search`), a single-pass scan of the
//! counts (`cta_exclusive_scan` + `cta_tile_offset`), and a load-balanced expansion of the
//! matching pairs (kernels/examples.cu). Output: (row of A, row of B) pairs, -1 for "no row",
//! in A's order with B's matches ascending; a full join appends B's unmatched rows. Checked
//! against a CPU version.
//!
//! Run: `cargo run --release -p mergepath-example-building-blocks --bin join`.

use mergepath::cudarc::driver::{CudaSlice, PushKernelArg};
use mergepath::{Bound, Gpu, Less, Module};
use mergepath_example_building_blocks::{gpu, kernels, Rng, THREAD_PER_ITEM_256, TILE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Join {
    Inner,
    Left,
    Full,
}

type Pairs = (Vec<i64>, Vec<i64>);

/// Offsets of f(counts) (the scan's `mode`: 0 identity, 1 at least one, 2 none) and their total.
fn scan(gpu: &Gpu, kernels: &Module, counts: &CudaSlice<u32>, mode: i32) -> Result<(CudaSlice<i64>, CudaSlice<i64>), Box<dyn std::error::Error>> {
    let rows = counts.len() as i64;
    // One tile even for no rows: it writes the total.
    let scanned = counts.len().max(1);
    let tiles = TILE.tiles(scanned);
    let mut states = gpu.alloc_zeros::<u64>(tiles + 1)?;
    let (mut offsets, mut total) = (gpu.alloc_zeros::<i64>(counts.len().max(1))?, gpu.alloc_zeros::<i64>(1)?);
    let func = kernels.function("join_scan")?;
    let tiles_arg = tiles as i64;
    let mut launch = gpu.stream().launch_builder(&func);
    launch.arg(counts).arg(&rows).arg(&mode).arg(&tiles_arg).arg(&mut states).arg(&mut offsets).arg(&mut total);
    // SAFETY: the arguments match join_scan; one CTA per tile of NV rows, `states` holds
    // tiles + 1 zeroed slots, `offsets` one entry per row.
    unsafe { launch.launch(TILE.launch_config(scanned)?) }?;
    Ok((offsets, total))
}

fn join(gpu: &Gpu, kernels: &Module, a: &CudaSlice<u32>, b: &CudaSlice<u32>, kind: Join) -> Result<Pairs, Box<dyn std::error::Error>> {
    let (n, m) = (a.len(), b.len());
    let mut lower = gpu.alloc_zeros::<u32>(n)?;
    let mut counts = gpu.alloc_zeros::<u32>(n)?;
    mergepath::sorted_search(gpu, a, b, Bound::Lower, &mut lower, Less)?;
    mergepath::sorted_search_count(gpu, a, b, &mut counts, Less)?;
    let (offsets, total) = scan(gpu, kernels, &counts, if kind == Join::Inner { 0 } else { 1 })?;
    // Unmatched rows of B: counts of B's keys in A, scanned where zero.
    let unmatched = if kind == Join::Full {
        let mut b_counts = gpu.alloc_zeros::<u32>(m)?;
        mergepath::sorted_search_count(gpu, b, a, &mut b_counts, Less)?;
        let (b_offsets, b_total) = scan(gpu, kernels, &b_counts, 2)?;
        Some((b_counts, b_offsets, b_total))
    } else {
        None
    };
    // The output's size: the one wait on the GPU.
    let first = gpu.download(&total)?[0] as usize;
    let second = match &unmatched {
        Some((_, _, t)) => gpu.download(t)?[0] as usize,
        None => 0,
    };
    let (mut out_a, mut out_b) = (gpu.alloc_zeros::<i64>(first + second)?, gpu.alloc_zeros::<i64>(first + second)?);
    if first > 0 {
        let func = kernels.function("join_expand")?;
        let rows = n as i64;
        let mut launch = gpu.stream().launch_builder(&func);
        launch.arg(&offsets).arg(&lower).arg(&counts).arg(&rows).arg(&total).arg(&mut out_a).arg(&mut out_b);
        // SAFETY: the arguments match join_expand; each thread writes VT of the `first`
        // outputs (the grid covers them all) into buffers of first + second entries.
        unsafe { launch.launch(TILE.launch_config(first)?) }?;
    }
    if let Some((b_counts, b_offsets, _)) = &unmatched {
        if m > 0 {
            let func = kernels.function("join_unmatched")?;
            let rows = m as i64;
            let mut launch = gpu.stream().launch_builder(&func);
            launch.arg(b_counts).arg(b_offsets).arg(&rows).arg(&total).arg(&mut out_a).arg(&mut out_b);
            // SAFETY: the arguments match join_unmatched; one thread per row of B, writing at
            // first + its offset among the unmatched rows (< first + second).
            unsafe { launch.launch(THREAD_PER_ITEM_256.launch_config(m)?) }?;
        }
    }
    Ok((gpu.download(&out_a)?, gpu.download(&out_b)?))
}

fn cpu_join(a: &[u32], b: &[u32], kind: Join) -> Pairs {
    let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
    for (i, x) in a.iter().enumerate() {
        let lo = b.partition_point(|y| y < x);
        let hi = b.partition_point(|y| y <= x);
        for j in lo..hi {
            out_a.push(i as i64);
            out_b.push(j as i64);
        }
        if lo == hi && kind != Join::Inner {
            out_a.push(i as i64);
            out_b.push(-1);
        }
    }
    if kind == Join::Full {
        for (j, y) in b.iter().enumerate() {
            if a.binary_search(y).is_err() {
                out_a.push(-1);
                out_b.push(j as i64);
            }
        }
    }
    (out_a, out_b)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = gpu()? else { return Ok(()) };
    let kernels = kernels(&gpu)?;
    let mut rng = Rng(11);
    for (n, m, distinct) in [(0, 0, 1), (0, 7, 3), (7, 0, 3), (1, 1, 1), (1000, 800, 50), (TILE.tile() + 1, TILE.tile() - 1, 400), (300_000, 200_000, 100_000), (2_000_000, 1_000_000, 3_000_000)] {
        let mut column = |len: usize| {
            let mut v: Vec<u32> = (0..len).map(|_| rng.below(distinct) as u32).collect();
            v.sort_unstable();
            v
        };
        let (a, b) = (column(n), column(m));
        let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
        for kind in [Join::Inner, Join::Left, Join::Full] {
            let got = join(&gpu, &kernels, &da, &db, kind)?;
            let want = cpu_join(&a, &b, kind);
            if got != want {
                let at = got.0.iter().zip(&got.1).zip(want.0.iter().zip(&want.1)).position(|(g, w)| g != w);
                return Err(format!("{kind:?} join of {n} and {m} rows: differs from the CPU at {at:?} (lengths {} / {})", got.0.len(), want.0.len()).into());
            }
            println!("{kind:?} join of {n} x {m} rows ({distinct} distinct keys): {} pairs, equal to the CPU version", got.0.len());
        }
    }
    Ok(())
}

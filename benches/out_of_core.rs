//! Sorts larger than the GPU from host memory: `Gpu::sort_keys` of u32 keys in a plain `Vec`
//! (pageable), 4, 16 and 48 GiB by default, against rayon's `par_sort_unstable` on all cores
//! (at 4 GiB and below unless `MERGEPATH_BENCH_RAYON_GIB` says more). On an 80 GB device only
//! the 48 GiB sort is too large for one in-core sort (with its temporaries): it sorts two runs
//! into host memory and merges them; `MERGEPATH_BENCH_CAP_GIB` caps the device memory
//! (`Gpu::with_memory_limit`) so the smaller sizes run externally too.
//!
//! Each size: fresh random keys (filled on host threads, untimed), one untimed sort to warm the
//! staging and the modules at the smallest size, then `MERGEPATH_BENCH_REPS` (default 3; 1 at
//! 32 GiB and more) timed sorts, each of fresh keys, the median printed as one TSV line:
//! op impl type n ms gkeys_s runs (wall time, keys in host memory before and after). Sizes of
//! tens of GiB make criterion's ten samples too long, so this bench times by hand.
//!
//! Run: `.gpu/run bench out_of_core` on the GPU machine. `MERGEPATH_BENCH_GIB=4,16` (comma-
//! separated) sets the sizes.

use mergepath::{Gpu, Less};
use rayon::prelude::*;
use std::time::Instant;

mod support;
use support::bench_gpu;

fn env_list(name: &str, default: &[f64]) -> Vec<f64> {
    std::env::var(name).map_or(default.to_vec(), |v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
}

/// Fills `keys` with random u32 from `seed`, on all cores.
fn fill(keys: &mut [u32], seed: u64) {
    keys.par_chunks_mut(1 << 20).enumerate().for_each(|(c, chunk)| {
        let mut rng = support::Rng(seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        chunk.iter_mut().for_each(|k| *k = rng.next() as u32);
    });
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let Some(gpu) = bench_gpu() else { return };
    let gpu: Gpu = match env_list("MERGEPATH_BENCH_CAP_GIB", &[]).first() {
        Some(&cap) => gpu.with_memory_limit((cap * (1u64 << 30) as f64) as usize),
        None => gpu,
    };
    let sizes = env_list("MERGEPATH_BENCH_GIB", &[4.0, 16.0, 48.0]);
    let rayon_gib = env_list("MERGEPATH_BENCH_RAYON_GIB", &[4.0])[0];
    println!("op\timpl\ttype\tn\tms\tgkeys_s\truns");
    let mut warm = vec![0u32; 1 << 24];
    fill(&mut warm, 1);
    gpu.sort_keys(&mut warm, Less).unwrap();
    drop(warm);
    for gib in sizes {
        let n = (gib * (1u64 << 28) as f64) as usize;
        let runs = mergepath::slices::sort_runs(&gpu, n, 4, 0).map_or_else(|e| format!("{e}"), |r| r.to_string());
        let reps = std::env::var("MERGEPATH_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(if gib >= 32.0 { 1 } else { 3 });
        let mut keys = vec![0u32; n];
        let mut times = Vec::new();
        for rep in 0..reps {
            fill(&mut keys, 100 + rep as u64);
            let t = Instant::now();
            gpu.sort_keys(&mut keys, Less).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        assert!(keys.par_windows(2).all(|w| w[0] <= w[1]), "sorted");
        let ms = median(times);
        println!("out_of_core_sort\tmergepath\tu32\t{n}\t{ms:.1}\t{:.3}\t{runs}", n as f64 / ms / 1e6);
        if gib <= rayon_gib {
            let mut times = Vec::new();
            for rep in 0..reps {
                fill(&mut keys, 200 + rep as u64);
                let t = Instant::now();
                keys.par_sort_unstable();
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let ms = median(times);
            println!("out_of_core_sort\trayon_par_sort_unstable\tu32\t{n}\t{ms:.1}\t{:.3}\t-", n as f64 / ms / 1e6);
        }
    }
}

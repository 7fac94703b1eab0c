//! Load-balancing search, interval expand, gather, scatter and move and segmented reduction throughput:
//! the segment and rank (and the segment alone) of each of n work items (u32 indices), each
//! item's segment's u32 value,
//! each interval's u32 values read from (gather), written to (scatter) or moved to and from
//! (move) the mirror of its place, and the sum of each segment's u32 values, over segments of random lengths — uniform in 0..32 (average 15.5, empty ones
//! included), and skewed (one segment of half the items, the rest uniform in 0..32) — n = 2^20,
//! 2^24, 2^26, timed with CUDA events. Bytes: the starts (and values) read and the segments and
//! ranks (or the values, or the sums) written, once each. The CUB and Thrust anchors of the same
//! cases are `benches/cub/load_balancing.cu`. Prints criterion's report and one TSV line per case in the anchors'
//! format: op impl type n ms gkeys_s gbytes_s (its fraction of the copy: over the anchors'
//! device copy, `.gpu/run anchors`).
//!
//! Run: `cargo bench --bench load_balancing` (on the GPU machine: `.gpu/run bench
//! load_balancing`). `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, Rng};

/// Segment starts (an exclusive scan of lengths in 0..32) covering exactly `n` items; with
/// `skewed`, the first segment holds half of them.
fn starts_for(n: usize, skewed: bool) -> Vec<u32> {
    let mut rng = Rng(5);
    let mut starts = Vec::new();
    let mut at = 0usize;
    if skewed {
        starts.push(0);
        at = n / 2;
    }
    while at < n {
        starts.push(at as u32);
        at += (rng.next() % 32) as usize;
    }
    starts
}

fn load_balancing(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    let mut group = c.benchmark_group("load_balancing_search");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        for (name, skewed) in [("uniform32", false), ("skewed", true)] {
            let starts = gpu.upload(&starts_for(n, skewed)).unwrap();
            let (mut segments, mut ranks) = (gpu.alloc_zeros::<u32>(n).unwrap(), gpu.alloc_zeros::<u32>(n).unwrap());
            let bytes = starts.len() * 4 + 2 * n * 4;
            let mut run = || mergepath::load_balancing_search_ranks(&gpu, n, &starts, &mut segments, &mut ranks).unwrap();
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function(BenchmarkId::new(name, n), |b| b.iter_custom(|iters| gpu_time(&gpu, iters, &mut run)));
            let ms = event_median_ms(&gpu, 20, &mut run);
            println!("load_balancing_search_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            // The search alone (each item's segment, no ranks): the starts read, the segments written.
            let bytes = starts.len() * 4 + n * 4;
            let mut search = || mergepath::load_balancing_search(&gpu, n, &starts, &mut segments).unwrap();
            group.bench_function(BenchmarkId::new(format!("segments_{name}"), n), |b| b.iter_custom(|iters| gpu_time(&gpu, iters, &mut search)));
            let ms = event_median_ms(&gpu, 20, &mut search);
            println!("load_balancing_search_segments_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            // Interval expand of one u32 value per segment: the starts and values read, the items written.
            let values = gpu.upload(&(0..starts.len() as u32).collect::<Vec<u32>>()).unwrap();
            let bytes = 2 * starts.len() * 4 + n * 4;
            let mut expand = || mergepath::interval_expand(&gpu, n, &starts, &values, &mut segments).unwrap();
            group.bench_function(BenchmarkId::new(format!("expand_{name}"), n), |b| b.iter_custom(|iters| gpu_time(&gpu, iters, &mut expand)));
            let ms = event_median_ms(&gpu, 20, &mut expand);
            println!("interval_expand_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            // Interval gather, scatter and move of u32 values, each interval read from (written
            // to, moved between) the mirror of its place: the starts, sources or destinations
            // (or both) read, the items read and written.
            let host_starts = starts_for(n, skewed);
            let ends = host_starts.iter().skip(1).copied().chain([n as u32]);
            let mirrored = gpu.upload(&ends.map(|end| n as u32 - end).collect::<Vec<u32>>()).unwrap();
            let input = gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap();
            let bytes = 2 * starts.len() * 4 + 2 * n * 4;
            let mut gather = || mergepath::interval_gather(&gpu, n, &starts, &mirrored, &input, &mut segments).unwrap();
            let ms = event_median_ms(&gpu, 20, &mut gather);
            println!("interval_gather_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            let mut scatter = || mergepath::interval_scatter(&gpu, n, &starts, &mirrored, &input, &mut segments).unwrap();
            let ms = event_median_ms(&gpu, 20, &mut scatter);
            println!("interval_scatter_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            let bytes = 3 * starts.len() * 4 + 2 * n * 4;
            let mut move_all = || mergepath::interval_move(&gpu, n, &starts, &mirrored, &mirrored, &input, &mut segments).unwrap();
            let ms = event_median_ms(&gpu, 20, &mut move_all);
            println!("interval_move_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            // Segmented sum of n u32 values: the values and starts read, a sum per segment written.
            let items = gpu.upload(&(0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect::<Vec<u32>>()).unwrap();
            let mut sums = gpu.alloc_zeros::<u32>(starts.len()).unwrap();
            let bytes = n * 4 + 2 * starts.len() * 4;
            let mut reduce = || mergepath::segmented_reduce(&gpu, &starts, &items, &mut sums, mergepath::Reduction::Sum, 0, mergepath::Less).unwrap();
            group.bench_function(BenchmarkId::new(format!("reduce_sum_{name}"), n), |b| b.iter_custom(|iters| gpu_time(&gpu, iters, &mut reduce)));
            let ms = event_median_ms(&gpu, 20, &mut reduce);
            println!("segmented_reduce_sum_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        }
    }
    group.finish();
}

criterion_group!(benches, load_balancing);
criterion_main!(benches);

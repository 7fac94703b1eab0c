//! Sorted relational joins of two u32 key columns of n rows each, keys drawn at random below
//! n and sorted (SplitMix64 seeds 31 and 32: about one match per row), n = 2^24 and 2^26,
//! timed with CUDA events; each join waits for its length and allocates its pairs. Bytes: both
//! columns read and the pairs (two i64 rows each) written, once each. The Thrust anchor of the
//! inner join is `benches/cub/join.cu`. Then the skew: inner joins of a key column (0..n, each
//! key once) with a column of uniform keys below n (`join_keyed_uniform`) and with one where one
//! key fills half the rows (`join_keyed_skewed`), both sorted, n pairs each: that key's row of A
//! expands into n / 2 pairs. `join_len_inner` times the count alone and `join_inner_pooled` the
//! inner join with freed memory kept in the pool (`Gpu::keep_freed_memory`). Prints criterion's report and one TSV line per case in
//! the anchors' format: op impl type n ms gkeys_s gbytes_s.
//!
//! Run: `cargo bench --bench join` (on the GPU machine: `.gpu/run bench join`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::{JoinKind, Less};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, sorted_below};

fn join(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    let mut group = c.benchmark_group("join");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let (a, b) = (gpu.upload(&sorted_below(n, n as u64, 31)).unwrap(), gpu.upload(&sorted_below(n, n as u64, 32)).unwrap());
        for kind in [JoinKind::Inner, JoinKind::Full] {
            let pairs = mergepath::join(&gpu, &a, &b, kind, Less).unwrap().len();
            let bytes = 8 * n + 16 * pairs;
            let op = format!("join_{kind:?}").to_lowercase();
            let mut run = || drop(mergepath::join(&gpu, &a, &b, kind, Less).unwrap());
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function(BenchmarkId::new(&op, n), |bench| bench.iter_custom(|iters| gpu_time(&gpu, iters, &mut run)));
            let ms = event_median_ms(&gpu, 20, &mut run);
            println!("{op}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}\t{pairs}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        }
        // Where the time goes: the count alone (search, scan, the total read back), and the join
        // with freed memory kept in the pool (no pairs unmapped and mapped again each call).
        let ms = event_median_ms(&gpu, 20, &mut || {
            mergepath::join_len(&gpu, &a, &b, JoinKind::Inner, Less).unwrap();
        });
        println!("join_len_inner\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, 8.0 * n as f64 / ms / 1e6);
        gpu.keep_freed_memory(u64::MAX).unwrap();
        let pairs = mergepath::join_len(&gpu, &a, &b, JoinKind::Inner, Less).unwrap();
        let ms = event_median_ms(&gpu, 20, &mut || drop(mergepath::join(&gpu, &a, &b, JoinKind::Inner, Less).unwrap()));
        let bytes = (8 * n + 16 * pairs) as f64;
        println!("join_inner_pooled\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}\t{pairs}", n as f64 / ms / 1e6, bytes / ms / 1e6);
        gpu.keep_freed_memory(0).unwrap();
        let keys = gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap();
        let mut skewed = sorted_below(n, n as u64, 33);
        skewed[..n / 2].fill(n as u32 / 2);
        skewed.sort_unstable();
        for (op, column) in [("join_keyed_uniform", sorted_below(n, n as u64, 33)), ("join_keyed_skewed", skewed)] {
            let b = gpu.upload(&column).unwrap();
            let mut run = || drop(mergepath::join(&gpu, &keys, &b, JoinKind::Inner, Less).unwrap());
            let ms = event_median_ms(&gpu, 20, &mut run);
            let bytes = 8 * n + 16 * n;
            println!("{op}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}\t{n}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        }
    }
    group.finish();
}

criterion_group!(benches, join);
criterion_main!(benches);

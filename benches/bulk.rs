//! Bulk insert and bulk remove of u32 values with u32 positions: a quarter of the array's
//! length inserted at sorted random positions (repeats among them), or removed, n = 2^24 and
//! 2^26, timed with CUDA events (each remove waits for its kept count). Bytes: the array, the
//! positions and the inserted values read and the result written, once each. The Thrust
//! anchors of the same cases are `benches/cub/bulk.cu`. Prints criterion's report and one TSV
//! line per case in the anchors' format: op impl type n ms gkeys_s gbytes_s.
//!
//! Run: `cargo bench --bench bulk` (on the GPU machine: `.gpu/run bench bulk`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, sorted_below};

/// The positions' seed (the anchor draws the same: SplitMix64 seed 21).
const POSITIONS_SEED: u64 = 21;

fn bulk(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    let mut group = c.benchmark_group("bulk");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let (n, m) = (1usize << log2, 1usize << (log2 - 2));
        let array = gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap();
        let values = gpu.upload(&vec![u32::MAX; m]).unwrap();
        let inserts = gpu.upload(&sorted_below(m, n as u64 + 1, POSITIONS_SEED)).unwrap();
        let removes = sorted_below(m, n as u64, POSITIONS_SEED);
        let mut distinct = removes.clone();
        distinct.dedup();
        let kept = n - distinct.len();
        let removes = gpu.upload(&removes).unwrap();
        let mut out = gpu.alloc_zeros::<u32>(n + m).unwrap();
        let mut report = |op: &str, bytes: usize, f: &mut dyn FnMut()| {
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function(BenchmarkId::new(op, n), |b| b.iter_custom(|iters| gpu_time(&gpu, iters, &mut *f)));
            let ms = event_median_ms(&gpu, 20, &mut *f);
            println!("{op}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        };
        report("bulk_insert", 4 * (2 * (n + m) + m), &mut || mergepath::bulk_insert(&gpu, &array, &inserts, &values, &mut out).unwrap());
        report("bulk_remove", 4 * (n + m + kept), &mut || assert_eq!(mergepath::bulk_remove(&gpu, &array, &removes, &mut out).unwrap(), kept));
    }
    group.finish();
}

criterion_group!(benches, bulk);
criterion_main!(benches);

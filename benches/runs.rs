//! Runs of equal keys: `unique`, `run_length_encode` (u32 lengths) and `reduce_by_key` (sums of
//! u32 values) of n sorted u32 keys in runs of 1 to 32 keys (average 16.5) and of 1 or 2 (1.5),
//! n = 2^24 and 2^26, timed with CUDA events (each call waits for its run count). Bytes: the keys
//! (and values) read and the runs' keys (and lengths or sums) written, once each. The CUB and
//! Thrust anchors of the same cases are `benches/cub/runs.cu`. Prints criterion's report and one
//! TSV line per case in the anchors' format: op impl type n ms gkeys_s gbytes_s.
//!
//! Run: `cargo bench --bench runs` (on the GPU machine: `.gpu/run bench runs`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, Rng};

/// `n` sorted keys in runs of 1 to `longest` keys (the runs' keys 0, 1, 2, ...), and the run
/// count (the CUB program makes the same keys: SplitMix64 seed 9).
fn keys_in_runs(n: usize, longest: u64) -> (Vec<u32>, usize) {
    let mut rng = Rng(9);
    let mut keys = Vec::with_capacity(n);
    let mut key = 0u32;
    while keys.len() < n {
        let len = 1 + (rng.next() % longest) as usize;
        keys.extend(std::iter::repeat_n(key, len.min(n - keys.len())));
        key += 1;
    }
    (keys, key as usize)
}

fn runs(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    let mut group = c.benchmark_group("runs");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        for (name, longest) in [("runs32", 32), ("runs2", 2)] {
            let (keys, runs) = keys_in_runs(n, longest);
            let keys = gpu.upload(&keys).unwrap();
            let values = gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap();
            let (mut out_keys, mut out_words) = (gpu.alloc_zeros::<u32>(n).unwrap(), gpu.alloc_zeros::<u32>(n).unwrap());
            let mut report = |op: &str, bytes: usize, f: &mut dyn FnMut()| {
                group.throughput(Throughput::Bytes(bytes as u64));
                group.bench_function(BenchmarkId::new(format!("{op}_{name}"), n), |b| b.iter_custom(|iters| gpu_time(&gpu, iters, &mut *f)));
                let ms = event_median_ms(&gpu, 20, &mut *f);
                println!("{op}_{name}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
            };
            report("unique", 4 * (n + runs), &mut || assert_eq!(mergepath::unique(&gpu, &keys, &mut out_keys, mergepath::Less).unwrap(), runs));
            report("run_length_encode", 4 * (n + 2 * runs), &mut || {
                assert_eq!(mergepath::run_length_encode(&gpu, &keys, &mut out_keys, &mut out_words, mergepath::Less).unwrap(), runs);
            });
            report("reduce_by_key_sum", 4 * (2 * n + 2 * runs), &mut || {
                let runs_found = mergepath::reduce_by_key(&gpu, &keys, &values, &mut out_keys, &mut out_words, mergepath::Reduction::Sum, mergepath::Less, mergepath::Less).unwrap();
                assert_eq!(runs_found, runs);
            });
        }
    }
    group.finish();
}

criterion_group!(benches, runs);
criterion_main!(benches);

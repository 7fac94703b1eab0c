//! Multiway merge throughput: k sorted runs of 2^20 keys each (k = 8, 64, 256; random u32
//! and u64 keys) merged by `merge_multiway_keys` and `merge_multiway_pairs` (u32 values), and
//! the multiway partitions alone, timed with CUDA events over back-to-back calls. One TSV line
//! per case in the anchors' format (op impl type n ms gkeys_s gbytes_s; bytes read + written
//! once), with k in the op name.
//!
//! Run: `cargo bench --bench multiway` (on the GPU machine: `.gpu/run bench multiway`).
//! `MERGEPATH_BENCH_WAYS=64` (comma-separated) limits the input counts.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use mergepath::{Comparator, Gpu, Key, Less};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time};

const RUN: usize = 1 << 20;

fn ways() -> Vec<usize> {
    std::env::var("MERGEPATH_BENCH_WAYS").ok().map_or(vec![8, 64, 256], |v| v.split(',').filter_map(|w| w.trim().parse().ok()).collect())
}

fn bench_type<K: Key + DeviceRepr + ValidAsZeroBits + Ord>(c: &mut Criterion, gpu: &Gpu, name: &str, from: fn(u64) -> K)
where
    Less: Comparator<K>,
{
    let mut group = c.benchmark_group(format!("multiway_{name}"));
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for k in ways() {
        let n = k * RUN;
        let mut state = 0x1234_5678_9abc_def0u64 ^ k as u64;
        let runs: Vec<_> = (0..k)
            .map(|_| {
                let mut run: Vec<K> = (0..RUN)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        from(state >> 16)
                    })
                    .collect();
                run.sort_unstable();
                gpu.upload(&run).unwrap()
            })
            .collect();
        let inputs: Vec<_> = runs.iter().collect();
        let mut out = gpu.alloc_zeros::<K>(n).unwrap();
        let key_bytes = 2 * n * std::mem::size_of::<K>();
        let mut run_keys = || mergepath::merge_multiway_keys(gpu, &inputs, &mut out, Less).unwrap();
        group.throughput(Throughput::Bytes(key_bytes as u64));
        group.bench_function(BenchmarkId::new(format!("keys_k{k}"), n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut run_keys)));
        let ms = event_median_ms(gpu, 10, &mut run_keys);
        println!("multiway_keys_k{k}\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, key_bytes as f64 / ms / 1e6);

        let mut run_parts = || drop(mergepath::partition::multiway_partitions(gpu, &inputs, 2944, Less).unwrap());
        let ms = event_median_ms(gpu, 10, &mut run_parts);
        println!("multiway_partitions_k{k}\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t-", n as f64 / ms / 1e6);

        let values: Vec<_> = (0..k).map(|_| gpu.upload(&vec![1u32; RUN]).unwrap()).collect();
        let value_inputs: Vec<_> = values.iter().collect();
        let mut out_values = gpu.alloc_zeros::<u32>(n).unwrap();
        let pair_bytes = 2 * n * (std::mem::size_of::<K>() + 4);
        let mut run_pairs = || mergepath::merge_multiway_pairs(gpu, &inputs, &value_inputs, &mut out, &mut out_values, Less).unwrap();
        let ms = event_median_ms(gpu, 10, &mut run_pairs);
        println!("multiway_pairs_k{k}\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, pair_bytes as f64 / ms / 1e6);
    }
    group.finish();
}

fn multiway(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    bench_type::<u32>(c, &gpu, "u32", |x| x as u32);
    bench_type::<u64>(c, &gpu, "u64", |x| x);
}

criterion_group!(benches, multiway);
criterion_main!(benches);

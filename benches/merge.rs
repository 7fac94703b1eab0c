//! Merge throughput: keys and pairs (u32 values), u32 and u64 keys, n = 2^20, 2^24, 2^26 total
//! items (two sorted halves of random keys, as `anchors.cu` does), timed with CUDA events over
//! back-to-back calls. Prints criterion's report (GB/s counts bytes read + written once) and one
//! TSV line per case in the anchors' format: op impl type n ms gkeys_s gbytes_s.
//!
//! Run: `cargo bench --bench merge` (on the GPU machine: `.gpu/run bench merge`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes, e.g. for a profiler.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use mergepath::{Comparator, Gpu, Key, Less};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, sorted_halves};

fn bench_type<K: Key + DeviceRepr + ValidAsZeroBits + Ord>(c: &mut Criterion, gpu: &Gpu, name: &str, from: fn(u64) -> K)
where
    Less: Comparator<K>,
{
    let mut group = c.benchmark_group(format!("merge_{name}"));
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let (a, b) = sorted_halves(gpu, n, from);
        let mut out = gpu.alloc_zeros::<K>(n).unwrap();
        let keys_bytes = 2 * n * std::mem::size_of::<K>();
        let mut run_keys = || mergepath::merge_keys(gpu, &a, &b, &mut out, Less).unwrap();
        group.throughput(Throughput::Bytes(keys_bytes as u64));
        group.bench_function(BenchmarkId::new("keys", n), |bch| bch.iter_custom(|iters| gpu_time(gpu, iters, &mut run_keys)));
        let ms = event_median_ms(gpu, 20, &mut run_keys);
        println!("merge_keys\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, keys_bytes as f64 / ms / 1e6);

        let va = gpu.upload(&(0..a.len() as u32).collect::<Vec<_>>()).unwrap();
        let vb = gpu.upload(&(0..b.len() as u32).collect::<Vec<_>>()).unwrap();
        let mut vout = gpu.alloc_zeros::<u32>(n).unwrap();
        let pair_bytes = 2 * n * (std::mem::size_of::<K>() + 4);
        let mut run_pairs = || mergepath::merge_pairs(gpu, &a, &va, &b, &vb, &mut out, &mut vout, Less).unwrap();
        group.throughput(Throughput::Bytes(pair_bytes as u64));
        group.bench_function(BenchmarkId::new("pairs", n), |bch| bch.iter_custom(|iters| gpu_time(gpu, iters, &mut run_pairs)));
        let ms = event_median_ms(gpu, 20, &mut run_pairs);
        println!("merge_pairs\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, pair_bytes as f64 / ms / 1e6);
    }
    group.finish();
}

fn merge(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    bench_type::<u32>(c, &gpu, "u32", |x| x as u32);
    bench_type::<u64>(c, &gpu, "u64", |x| x);
}

criterion_group!(benches, merge);
criterion_main!(benches);

//! Multiset operation throughput on the anchors' inputs (two sorted halves of n random keys: A
//! the first, B the second), u32 and u64 keys, n = 2^20, 2^24, 2^26, timed with CUDA events.
//! Bytes as `anchors.cu` counts them: intersection n keys, difference 1.5 n, union and
//! symmetric difference 2 n. Prints criterion's report and one TSV line per case in the
//! anchors' format: op impl type n ms gkeys_s gbytes_s (`set_*_len`: the length-only variant).
//!
//! Run: `cargo bench --bench sets` (on the GPU machine: `.gpu/run bench sets`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes, e.g. for a profiler.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::DeviceRepr;
use mergepath::{Comparator, Gpu, Key, Less, SetOperation};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, sorted_halves};

fn op_name(op: SetOperation) -> &'static str {
    match op {
        SetOperation::Intersection => "set_intersection",
        SetOperation::Union => "set_union",
        SetOperation::Difference => "set_difference",
        SetOperation::SymmetricDifference => "set_symmetric_difference",
    }
}

/// The anchors' byte count per key of n.
fn bytes_per_key(op: SetOperation) -> f64 {
    match op {
        SetOperation::Intersection => 1.0,
        SetOperation::Difference => 1.5,
        SetOperation::Union | SetOperation::SymmetricDifference => 2.0,
    }
}

fn bench_type<K: Key + DeviceRepr + Ord + mergepath::cudarc::driver::ValidAsZeroBits>(c: &mut Criterion, gpu: &Gpu, name: &str, from: fn(u64) -> K)
where
    Less: Comparator<K>,
{
    let mut group = c.benchmark_group(format!("sets_{name}"));
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let (a, b) = sorted_halves(gpu, n, from);
        let mut out = gpu.alloc_zeros::<K>(n).unwrap();
        for op in SetOperation::ALL {
            let bytes = bytes_per_key(op) * (n * std::mem::size_of::<K>()) as f64;
            let mut run = || drop(mergepath::set_operation_keys(gpu, op, &a, &b, &mut out, Less).unwrap());
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function(BenchmarkId::new(op_name(op), n), |it| it.iter_custom(|iters| gpu_time(gpu, iters, &mut run)));
            let ms = event_median_ms(gpu, 20, &mut run);
            println!("{}\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", op_name(op), n as f64 / ms / 1e6, bytes / ms / 1e6);
            let mut len_only = || drop(mergepath::set_operation_len(gpu, op, &a, &b, Less).unwrap());
            let ms = event_median_ms(gpu, 20, &mut len_only);
            println!("{}_len\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", op_name(op), n as f64 / ms / 1e6, (n * std::mem::size_of::<K>()) as f64 / ms / 1e6);
        }
    }
    group.finish();
}

fn sets(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    bench_type::<u32>(c, &gpu, "u32", |x| x as u32);
    bench_type::<u64>(c, &gpu, "u64", |x| x);
}

criterion_group!(benches, sets);
criterion_main!(benches);

//! Sorted search throughput: lower bounds, equal counts and equal ranges of n/2 sorted needles in an n/2 sorted haystack (the
//! anchors' layout: haystack = first half, needles = second half of two sorted halves of random
//! keys), u32 indices, u32 and u64 keys, n = 2^20, 2^24, 2^26, timed with CUDA events. Bytes:
//! n keys read, n/2 indices written (as `anchors.cu` counts them). Prints criterion's report and
//! one TSV line per case in the anchors' format: op impl type n ms gkeys_s gbytes_s.
//!
//! Run: `cargo bench --bench search` (on the GPU machine: `.gpu/run bench search`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes, e.g. for a profiler.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::DeviceRepr;
use mergepath::{Bound, Comparator, Gpu, Key, Less};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, sorted_halves};

fn bench_type<K: Key + DeviceRepr + Ord>(c: &mut Criterion, gpu: &Gpu, name: &str, from: fn(u64) -> K)
where
    Less: Comparator<K>,
{
    let mut group = c.benchmark_group(format!("sorted_search_{name}"));
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let (haystack, needles) = sorted_halves(gpu, n, from);
        let mut out = gpu.alloc_zeros::<u32>(needles.len()).unwrap();
        let bytes = n * std::mem::size_of::<K>() + needles.len() * 4;
        let mut run = || mergepath::sorted_search(gpu, &needles, &haystack, Bound::Lower, &mut out, Less).unwrap();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(BenchmarkId::new("lower", n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut run)));
        let ms = event_median_ms(gpu, 20, &mut run);
        println!("sorted_search\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        // Equal counts and both bounds: one pass each, the same reads; range writes twice the indices.
        let mut count = || mergepath::sorted_search_count(gpu, &needles, &haystack, &mut out, Less).unwrap();
        group.bench_function(BenchmarkId::new("count", n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut count)));
        let ms = event_median_ms(gpu, 20, &mut count);
        println!("sorted_search_count\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        let mut upper = gpu.alloc_zeros::<u32>(needles.len()).unwrap();
        let range_bytes = bytes + needles.len() * 4;
        let mut range = || mergepath::sorted_search_range(gpu, &needles, &haystack, &mut out, &mut upper, Less).unwrap();
        group.bench_function(BenchmarkId::new("range", n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut range)));
        let ms = event_median_ms(gpu, 20, &mut range);
        println!("sorted_search_range\tmergepath\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, range_bytes as f64 / ms / 1e6);
    }
    group.finish();
}

fn search(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    bench_type::<u32>(c, &gpu, "u32", |x| x as u32);
    bench_type::<u64>(c, &gpu, "u64", |x| x);
}

criterion_group!(benches, search);
criterion_main!(benches);

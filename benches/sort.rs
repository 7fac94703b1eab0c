//! Sort throughput: keys u32/u64/f32 and a derived {f32, i32} struct (`#[derive(Key)]`), pairs
//! u32->u32, u64->u32, n = 2^20, 2^24, 2^26 random
//! keys, with the copy variants (input left as it is, as CUB's SortKeysCopy/SortPairsCopy in
//! `anchors.cu`), timed with CUDA events. Prints criterion's report and one TSV line per case in
//! the anchors' format: op impl type n ms gkeys_s gbytes_s (bytes: keys (+ values) read and
//! written once).
//!
//! Each case runs mergepath's mergesort (impl `mergepath`) and its sample sort
//! (`mergepath_sample`; `MERGEPATH_BENCH_SORT=merge` or `sample` for one of them).
//!
//! Run: `cargo bench --bench sort` (on the GPU machine: `.gpu/run bench sort`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes, `MERGEPATH_BENCH_TYPES=u64`
//! the key types and `MERGEPATH_BENCH_OPS=pairs` the operations (`keys`, `pairs`), e.g. for a
//! profiler.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use mergepath::{Comparator, Gpu, Key, Less};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, Rng};


/// Which sort a bench runs: mergepath's mergesort (`mergepath`) or its sample sort
/// (`mergepath_sample`), both with the copy variants.
#[derive(Clone, Copy)]
enum Algorithm {
    Merge,
    Sample,
}

fn bench_type<K: Key + DeviceRepr + ValidAsZeroBits>(c: &mut Criterion, gpu: &Gpu, name: &str, from: fn(u64) -> K, pairs: bool, algorithm: Algorithm)
where
    Less: Comparator<K>,
{
    let (group_name, impl_name) = match algorithm {
        Algorithm::Merge => (format!("sort_{name}"), "mergepath"),
        Algorithm::Sample => (format!("samplesort_{name}"), "mergepath_sample"),
    };
    let mut group = c.benchmark_group(group_name);
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let mut rng = Rng(42);
        let input = gpu.upload(&(0..n).map(|_| from(rng.next())).collect::<Vec<K>>()).unwrap();
        let mut out = gpu.alloc_zeros::<K>(n).unwrap();
        let key_bytes = 2 * n * std::mem::size_of::<K>();
        let ops = std::env::var("MERGEPATH_BENCH_OPS").ok();
        let wanted_op = |op: &str| ops.as_deref().is_none_or(|list| list.split(',').any(|o| o.trim() == op));
        let mut run_keys = || match algorithm {
            Algorithm::Merge => mergepath::sort_keys_copy(gpu, &input, &mut out, Less).unwrap(),
            Algorithm::Sample => mergepath::samplesort::sort_keys_copy(gpu, &input, &mut out, Less).unwrap(),
        };
        if wanted_op("keys") {
            group.throughput(Throughput::Bytes(key_bytes as u64));
            group.bench_function(BenchmarkId::new("keys", n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut run_keys)));
            let ms = event_median_ms(gpu, 10, &mut run_keys);
            println!("sort_keys\t{impl_name}\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, key_bytes as f64 / ms / 1e6);
        }
        if !pairs || !wanted_op("pairs") {
            continue;
        }
        let values = gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap();
        let mut vout = gpu.alloc_zeros::<u32>(n).unwrap();
        let pair_bytes = 2 * n * (std::mem::size_of::<K>() + 4);
        let mut run_pairs = || match algorithm {
            Algorithm::Merge => mergepath::sort_pairs_copy(gpu, &input, &values, &mut out, &mut vout, Less).unwrap(),
            Algorithm::Sample => mergepath::samplesort::sort_pairs_copy(gpu, &input, &values, &mut out, &mut vout, Less).unwrap(),
        };
        group.throughput(Throughput::Bytes(pair_bytes as u64));
        group.bench_function(BenchmarkId::new("pairs", n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut run_pairs)));
        let ms = event_median_ms(gpu, 10, &mut run_pairs);
        println!("sort_pairs\t{impl_name}\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, pair_bytes as f64 / ms / 1e6);
    }
    group.finish();
}

/// The anchors' `struct_f32_i32` key: sorted by (x asc, id asc), as CUB's functor there.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "x, id")]
struct F32I32 {
    x: f32,
    id: i32,
}

fn sort(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    // MERGEPATH_BENCH_TYPES (comma-separated, e.g. `u64`) limits the key types, so a profiler
    // sees only their kernels (criterion's filter still runs the event-timed calls).
    let only = std::env::var("MERGEPATH_BENCH_TYPES").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|list| list.split(',').any(|t| t.trim() == name));
    // MERGEPATH_BENCH_SORT=merge or =sample runs one of the two sorts (both by default).
    let algorithms: Vec<Algorithm> = match std::env::var("MERGEPATH_BENCH_SORT").as_deref() {
        Ok("merge") => vec![Algorithm::Merge],
        Ok("sample") => vec![Algorithm::Sample],
        _ => vec![Algorithm::Merge, Algorithm::Sample],
    };
    for algorithm in algorithms {
        if wanted("u32") {
            bench_type::<u32>(c, &gpu, "u32", |x| x as u32, true, algorithm);
        }
        if wanted("u64") {
            bench_type::<u64>(c, &gpu, "u64", |x| x, true, algorithm);
        }
        if wanted("f32") {
            bench_type::<f32>(c, &gpu, "f32", |x| (x >> 40) as f32 / 3.0 - 1e6, false, algorithm);
        }
        if wanted("struct_f32_i32") {
            bench_type::<F32I32>(c, &gpu, "struct_f32_i32", |x| F32I32 { x: (x % 1_000_000) as f32 / 7.0, id: (x >> 32) as i32 }, false, algorithm);
        }
    }
}

criterion_group!(benches, sort);
criterion_main!(benches);

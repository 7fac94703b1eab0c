//! The co-rank merge ladder (Kirk & Hwu, PMPP ch. 12) measured: merge_keys with each
//! `MergeStrategy` (basic, tiled, circular, and the default two-phase merge), u32 and u64 keys,
//! n = 2^20, 2^24, 2^26 (two sorted halves of random keys, as `anchors.cu`), timed with CUDA
//! events. GB/s counts n keys read and n written; compare with the anchors' copy ceiling from the
//! same run. Prints criterion's report and one TSV line per case in the anchors' format:
//! op impl type n ms gkeys_s gbytes_s, with impl = the strategy.
//!
//! Run: `cargo bench --bench merge_ladder` (on the GPU machine: `.gpu/run bench merge_ladder`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use mergepath::{Comparator, Gpu, Key, Less, MergeStrategy};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, log2_sizes, sorted_halves};

fn bench_type<K: Key + DeviceRepr + ValidAsZeroBits + Ord>(c: &mut Criterion, gpu: &Gpu, name: &str, from: fn(u64) -> K)
where
    Less: Comparator<K>,
{
    let mut group = c.benchmark_group(format!("merge_ladder_{name}"));
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let (a, b) = sorted_halves(gpu, n, from);
        let mut out = gpu.alloc_zeros::<K>(n).unwrap();
        let bytes = 2 * n * std::mem::size_of::<K>();
        for strategy in MergeStrategy::ALL {
            let label = format!("{strategy:?}").to_lowercase();
            let mut run = || mergepath::merge_keys_with(gpu, &a, &b, &mut out, Less, strategy).unwrap();
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function(BenchmarkId::new(&label, n), |bch| bch.iter_custom(|iters| gpu_time(gpu, iters, &mut run)));
            let ms = event_median_ms(gpu, 20, &mut run);
            println!("merge_keys\t{label}\t{name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
        }
    }
    group.finish();
}

fn merge_ladder(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    bench_type::<u32>(c, &gpu, "u32", |x| x as u32);
    bench_type::<u64>(c, &gpu, "u64", |x| x);
}

criterion_group!(benches, merge_ladder);
criterion_main!(benches);

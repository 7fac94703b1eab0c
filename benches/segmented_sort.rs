//! Segmented sort: 2^26 u32 keys (and 2^20, 2^24) in segments of random size uniform in
//! [0, 2 * avg], avg = 16, 256, 65,536 — the segment sizes of `anchors.cu` (std::mt19937_64
//! seeded with avg), which prints CUB's DeviceSegmentedSort::StableSortKeys as
//! `segmented_sort_avgN`. Each timed call sorts a fresh copy of the random keys (the copy is not
//! timed); medians of 20 event-timed calls. `mergepath` takes the offsets in device memory, as
//! CUB does (uploaded once, not timed); `mergepath_host_offsets` takes the host slice (validated
//! and uploaded in every call, timed). GB/s: n items (keys, with their values for pairs) read
//! and written. Prints one TSV line
//! per case in the anchors' format: op impl type n ms gkeys_s gbytes_s.
//!
//! Run: `cargo bench --bench segmented_sort` (on the GPU machine: `.gpu/run bench segmented_sort`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes, `MERGEPATH_BENCH_AVG=16` the
//! segment sizes; `MERGEPATH_BENCH_TYPES=u32,u64` picks the key types (u32 by default) and
//! `MERGEPATH_BENCH_OPS=keys,pairs` the operations (keys by default; pairs carry u32 values,
//! printed as `segmented_sort_pairs_avgN`).

use criterion::{criterion_group, criterion_main, Criterion};
use mergepath::cudarc::driver::sys::CUevent_flags;
use mergepath::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use mergepath::{Comparator, Gpu, Key, Less};

mod support;
use support::{bench_gpu, log2_sizes, Mt19937_64, Rng};

/// The anchors' offsets: 0, then steps of g() % (2 avg + 1) capped at n, until n.
fn anchor_offsets(n: usize, avg: u64) -> Vec<usize> {
    let mut g = Mt19937_64::new(avg);
    let mut offsets = vec![0usize];
    while *offsets.last().unwrap() < n {
        let next = (*offsets.last().unwrap() as u64 + g.next() % (2 * avg + 1)).min(n as u64);
        offsets.push(next as usize);
    }
    offsets
}

/// One key type's segmented sorts of `n` keys (`from` makes a key of random bits) in segments
/// of `avg` on average, keys alone or with u32 values.
fn bench<K: Key + DeviceRepr + ValidAsZeroBits + PartialOrd>(gpu: &Gpu, n: usize, avg: u64, type_name: &str, from: fn(u64) -> K, pairs: bool) where Less: Comparator<K> {
    let offsets = anchor_offsets(n, avg);
    let device_offsets = gpu.upload(&offsets.iter().map(|&o| o as u64).collect::<Vec<u64>>()).unwrap();
    let mut rng = Rng(42);
    let host: Vec<K> = (0..n).map(|_| from(rng.next())).collect();
    let input = gpu.upload(&host).unwrap();
    let mut keys = gpu.alloc_zeros::<K>(n).unwrap();
    let mut values = gpu.alloc_zeros::<u32>(if pairs { n } else { 0 }).unwrap();
    let stream = gpu.stream();
    let op = if pairs { "segmented_sort_pairs" } else { "segmented_sort" };
    for name in ["mergepath", "mergepath_host_offsets"] {
        let mut times = Vec::new();
        for rep in 0..21 {
            stream.memcpy_dtod(&input, &mut keys).unwrap();
            let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            match (name == "mergepath", pairs) {
                (true, false) => mergepath::sort_segments_keys(gpu, &mut keys, &device_offsets, Less),
                (false, false) => mergepath::sort_segments_keys(gpu, &mut keys, &offsets, Less),
                (true, true) => mergepath::sort_segments_pairs(gpu, &mut keys, &mut values, &device_offsets, Less),
                (false, true) => mergepath::sort_segments_pairs(gpu, &mut keys, &mut values, &offsets, Less),
            }
            .unwrap();
            let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            end.synchronize().unwrap();
            if rep > 0 {
                times.push(start.elapsed_ms(&end).unwrap() as f64);
            }
        }
        times.sort_by(f64::total_cmp);
        let ms = times[times.len() / 2];
        let got = gpu.download(&keys).unwrap();
        let ok = offsets.windows(2).all(|w| got[w[0]..w[1]].windows(2).all(|p| p[0] <= p[1]));
        let item_bytes = std::mem::size_of::<K>() + if pairs { 4 } else { 0 };
        println!(
            "{op}_avg{avg}\t{name}\t{type_name}\t{n}\t{ms:.4}\t{:.3}\t{:.1}\t{}",
            n as f64 / ms / 1e6,
            2.0 * (n * item_bytes) as f64 / ms / 1e6,
            if ok { "ok" } else { "WRONG" }
        );
    }
}

/// A comma-separated list from the environment variable `var`, or `default`.
fn env_list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var).unwrap_or_else(|_| default.into()).split(',').map(|s| s.trim().to_string()).collect()
}

/// The average segment sizes: 16, 256 and 65,536, or `MERGEPATH_BENCH_AVG` (comma-separated).
fn avgs() -> Vec<u64> {
    match std::env::var("MERGEPATH_BENCH_AVG") {
        Ok(list) => list.split(',').map(|a| a.trim().parse().expect("MERGEPATH_BENCH_AVG: numbers")).collect(),
        Err(_) => vec![16, 256, 65_536],
    }
}

fn segmented_sort(_c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s\tok");
    let (types, ops) = (env_list("MERGEPATH_BENCH_TYPES", "u32"), env_list("MERGEPATH_BENCH_OPS", "keys"));
    for log2 in log2_sizes() {
        for avg in avgs() {
            for pairs in [false, true].into_iter().filter(|&p| ops.iter().any(|o| o == if p { "pairs" } else { "keys" })) {
                if types.iter().any(|t| t == "u32") {
                    bench::<u32>(&gpu, 1 << log2, avg, "u32", |x| x as u32, pairs);
                }
                if types.iter().any(|t| t == "u64") {
                    bench::<u64>(&gpu, 1 << log2, avg, "u64", |x| x, pairs);
                }
            }
        }
    }
}

criterion_group!(benches, segmented_sort);
criterion_main!(benches);

//! Data in host memory, end to end: `Gpu::sort_keys` / `sort_pairs` of u32 keys, u32 -> u32
//! pairs, u64 keys and a 16-byte derived key, each from a plain `Vec` (pageable) and from a
//! `PinnedBuffer`, the merge of two host slices (u32, halves of n), and rayon's
//! `par_sort_unstable` / `par_sort` on all cores, at 2^20, 2^24, 2^26 and 2^28 keys. Every
//! iteration sorts fresh random data (refilled outside the timed region) and returns with the
//! result in host memory. Prints criterion's report and one TSV line per case in the anchors'
//! format: op impl type n ms gkeys_s gbytes_s (bytes: the keys and values crossing PCIe, up and
//! down).
//!
//! Run: `cargo bench --bench host_roundtrip` (on the GPU machine: `.gpu/run bench
//! host_roundtrip`, beside `.gpu/run anchors 20 24 26 28` and `.gpu/run torch-anchors`).
//! `MERGEPATH_BENCH_LOG2=26` (comma-separated) limits the sizes; `MERGEPATH_BENCH_QUICK=1`
//! runs only the staged uploads and downloads (`Gpu::upload`, `Gpu::download_into`) and the u32
//! key sorts.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::{Comparator, Gpu, Key, Less};
use rayon::slice::ParallelSliceMut;
use std::time::{Duration, Instant};

mod support;
use support::{bench_gpu, Rng};

/// 2^20, 2^24, 2^26, 2^28 unless `MERGEPATH_BENCH_LOG2` says otherwise.
fn sizes() -> Vec<usize> {
    let log2 = match std::env::var("MERGEPATH_BENCH_LOG2") {
        Ok(_) => support::log2_sizes(),
        Err(_) => vec![20, 24, 26, 28],
    };
    log2.into_iter().map(|l| 1usize << l).collect()
}

/// The bench's 16-byte derived key, ordered by both fields.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "hi, lo")]
struct Wide {
    hi: u64,
    lo: u64,
}

/// One step of a case: refill the input (untimed), or run the timed call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Refill,
    Run,
}

/// Wall times of `iters` timed calls of `work`, each after an untimed refill.
fn timed(iters: u64, work: &mut impl FnMut(Step)) -> Duration {
    (0..iters)
        .map(|_| {
            work(Step::Refill);
            let t = Instant::now();
            work(Step::Run);
            t.elapsed()
        })
        .sum()
}

/// Benches `work` under criterion and prints the median of `reps` more calls (after a warm-up)
/// as a TSV line.
#[allow(clippy::too_many_arguments)]
fn case(c: &mut Criterion, group: &str, op: &str, imp: &str, ty: &str, n: usize, bytes: usize, mut work: impl FnMut(Step)) {
    let reps = if n >= 1 << 28 { 5 } else { 11 };
    let mut g = c.benchmark_group(group);
    g.sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs(1));
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(BenchmarkId::new(format!("{op}_{imp}"), n), |b| b.iter_custom(|iters| timed(iters, &mut work)));
    g.finish();
    timed(1, &mut work);
    let mut times: Vec<f64> = (0..reps).map(|_| timed(1, &mut work).as_secs_f64() * 1e3).collect();
    times.sort_by(f64::total_cmp);
    let ms = times[reps / 2];
    println!("{op}\t{imp}\t{ty}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
}

/// Key sorts of `K` from a `Vec` and from pinned memory.
fn sorts<K: Key, C: Comparator<K>>(c: &mut Criterion, gpu: &Gpu, ty: &str, n: usize, from: fn(u64) -> K, comp: C) {
    let mut rng = Rng(42);
    let input: Vec<K> = (0..n).map(|_| from(rng.next())).collect();
    let bytes = 2 * n * std::mem::size_of::<K>();
    let mut keys = input.clone();
    case(c, &format!("host_sort_{ty}"), "host_sort_keys", "mergepath_pageable", ty, n, bytes, |step| match step {
        Step::Refill => keys.copy_from_slice(&input),
        Step::Run => gpu.sort_keys(&mut keys, comp).unwrap(),
    });
    drop(keys);
    let mut pinned = gpu.pinned_from(&input).unwrap();
    case(c, &format!("host_sort_{ty}"), "host_sort_keys", "mergepath_pinned", ty, n, bytes, |step| match step {
        Step::Refill => pinned.copy_from_slice(&input),
        Step::Run => gpu.sort_keys(&mut pinned[..], comp).unwrap(),
    });
}

/// The staging path alone: `n` u32 keys from a `Vec` to a device buffer (`Gpu::upload`) and
/// back (`Gpu::download_into`), beside the same from pinned memory.
fn transfers(c: &mut Criterion, gpu: &Gpu, n: usize) {
    let input: Vec<u32> = (0..n as u32).collect();
    let mut back = vec![0u32; n];
    let on_device = gpu.upload(&input).unwrap();
    let pinned = gpu.pinned_from(&input).unwrap();
    let mut pinned_back = gpu.alloc_pinned::<u32>(n).unwrap();
    let bytes = n * 4;
    case(c, "host_transfer_u32", "host_upload", "mergepath_pageable", "u32", n, bytes, |step| {
        if step == Step::Run {
            drop(gpu.upload(&input).unwrap())
        }
    });
    case(c, "host_transfer_u32", "host_upload", "mergepath_pinned", "u32", n, bytes, |step| {
        if step == Step::Run {
            drop(gpu.upload(&pinned[..]).unwrap())
        }
    });
    case(c, "host_transfer_u32", "host_download", "mergepath_pageable", "u32", n, bytes, |step| {
        if step == Step::Run {
            gpu.download_into(&on_device, &mut back).unwrap()
        }
    });
    case(c, "host_transfer_u32", "host_download", "mergepath_pinned", "u32", n, bytes, |step| {
        if step == Step::Run {
            gpu.download_into(&on_device, &mut pinned_back[..]).unwrap()
        }
    });
    assert_eq!(back, input);
}

fn bench(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    for n in sizes() {
        transfers(c, &gpu, n);
        sorts::<u32, _>(c, &gpu, "u32", n, |r| r as u32, Less);
        if std::env::var("MERGEPATH_BENCH_QUICK").is_ok() {
            continue;
        }
        sorts::<u64, _>(c, &gpu, "u64", n, |r| r, Less);
        sorts::<Wide, _>(c, &gpu, "wide16", n, |r| Wide { hi: r % 1_000_003, lo: r.rotate_left(17) }, Less);

        // Pairs u32 -> u32 from Vecs.
        let mut rng = Rng(7);
        let input: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
        let positions: Vec<u32> = (0..n as u32).collect();
        let (mut k, mut v) = (input.clone(), positions.clone());
        case(c, "host_sort_pairs_u32", "host_sort_pairs", "mergepath_pageable", "u32", n, 4 * n * 4, |step| match step {
            Step::Refill => {
                k.copy_from_slice(&input);
                v.copy_from_slice(&positions);
            }
            Step::Run => gpu.sort_pairs(&mut k, &mut v, Less).unwrap(),
        });
        drop((k, v));
        let (mut pk, mut pv) = (gpu.pinned_from(&input).unwrap(), gpu.pinned_from(&positions).unwrap());
        case(c, "host_sort_pairs_u32", "host_sort_pairs", "mergepath_pinned", "u32", n, 4 * n * 4, |step| match step {
            Step::Refill => {
                pk.copy_from_slice(&input);
                pv.copy_from_slice(&positions);
            }
            Step::Run => gpu.sort_pairs(&mut pk[..], &mut pv[..], Less).unwrap(),
        });
        drop((pk, pv));

        // rayon on all cores, same keys.
        let mut keys = input.clone();
        case(c, "host_sort_u32", "host_sort_keys", "rayon_par_sort_unstable", "u32", n, 2 * n * 4, |step| match step {
            Step::Refill => keys.copy_from_slice(&input),
            Step::Run => keys.par_sort_unstable(),
        });
        case(c, "host_sort_u32", "host_sort_keys", "rayon_par_sort", "u32", n, 2 * n * 4, |step| match step {
            Step::Refill => keys.copy_from_slice(&input),
            Step::Run => keys.par_sort(),
        });
        drop(keys);

        // Merge of two sorted host halves into a host output (pageable, then pinned).
        let (mut a, mut b) = (input[..n / 2].to_vec(), input[n / 2..].to_vec());
        a.sort_unstable();
        b.sort_unstable();
        let mut out = vec![0u32; n];
        case(c, "host_merge_u32", "host_merge_keys", "mergepath_pageable", "u32", n, 2 * n * 4, |step| {
            if step == Step::Run {
                gpu.merge_keys(&a, &b, &mut out, Less).unwrap()
            }
        });
        let (pa, pb) = (gpu.pinned_from(&a).unwrap(), gpu.pinned_from(&b).unwrap());
        let mut pout = gpu.alloc_pinned::<u32>(n).unwrap();
        case(c, "host_merge_u32", "host_merge_keys", "mergepath_pinned", "u32", n, 2 * n * 4, |step| {
            if step == Step::Run {
                gpu.merge_keys(&pa, &pb, &mut pout, Less).unwrap()
            }
        });
        gpu.free_pools().unwrap();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The host backend on this machine's CPU threads: merge of 2^24 u32 keys (two sorted halves of
//! random keys) against the sequential merges, and the stable sort of 2^24 u32 key / u32 value
//! pairs against rayon's `par_sort_by_key` on (key, value) tuples (stable) and std's
//! sequential `sort_by_key`. Needs no GPU.
//!
//! Run: `cargo bench --bench host`. `MERGEPATH_BENCH_LOG2=20,24` (comma-separated) for other
//! sizes. The worker count is `std::thread::available_parallelism()`. After criterion's report
//! it prints the medians of interleaved calls (each round runs every contender once, so load
//! from other processes that comes and goes hits them alike) and the ratios of the goals.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use mergepath::{cpu, host, Less};
use rayon::slice::ParallelSliceMut;
use std::time::Duration;

mod support;
use support::{log2_sizes, Rng};

/// 2^24 unless `MERGEPATH_BENCH_LOG2` says otherwise.
fn sizes() -> Vec<usize> {
    let log2 = if std::env::var("MERGEPATH_BENCH_LOG2").is_ok() { log2_sizes() } else { vec![24] };
    log2.into_iter().map(|l| 1usize << l).collect()
}

fn random(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.next() as u32).collect()
}

fn merge(c: &mut Criterion) {
    let mut group = c.benchmark_group("host_merge_u32");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for n in sizes() {
        let (mut a, mut b) = (random(n / 2, 1), random(n - n / 2, 2));
        a.sort_unstable();
        b.sort_unstable();
        let mut out = vec![0u32; n];
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("host", n), |bch| bch.iter(|| host::merge_keys(&a, &b, &mut out, Less).unwrap()));
        group.bench_function(BenchmarkId::new("host_1_thread", n), |bch| {
            bch.iter(|| host::with_threads(1, || host::merge_keys(&a, &b, &mut out, Less).unwrap()))
        });
        group.bench_function(BenchmarkId::new("cpu_oracle", n), |bch| bch.iter(|| cpu::merge_keys(&a, &b, Less)));
    }
    group.finish();
}

fn sort_pairs(c: &mut Criterion) {
    let mut group = c.benchmark_group("host_sort_pairs_u32");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(15));
    for n in sizes() {
        let keys = random(n, 3);
        let values: Vec<u32> = (0..n as u32).collect();
        let tuples: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("host", n), |bch| {
            bch.iter_batched_ref(
                || (keys.clone(), values.clone()),
                |(k, v)| host::sort_pairs(k, v, Less).unwrap(),
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("rayon_par_sort_by_key", n), |bch| {
            bch.iter_batched_ref(|| tuples.clone(), |t| t.par_sort_by_key(|p| p.0), BatchSize::PerIteration)
        });
        group.bench_function(BenchmarkId::new("std_sort_by_key", n), |bch| {
            bch.iter_batched_ref(|| tuples.clone(), |t| t.sort_by_key(|p| p.0), BatchSize::PerIteration)
        });
    }
    group.finish();
}

/// Median ms of each closure over `reps` rounds, each round calling every closure once on a
/// fresh input from its setup (not timed).
type Contender<'a, T> = (&'a dyn Fn() -> T, &'a dyn Fn(&mut T));

fn interleaved<T>(reps: usize, contenders: &[Contender<'_, T>]) -> Vec<f64> {
    let mut times = vec![Vec::new(); contenders.len()];
    for _ in 0..reps {
        for (i, (setup, run)) in contenders.iter().enumerate() {
            let mut input = setup();
            let t = std::time::Instant::now();
            run(&mut input);
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

fn summary(_: &mut Criterion) {
    println!("op\timpl\tn\tmedian_ms (interleaved)");
    for n in sizes() {
        let (mut a, mut b) = (random(n / 2, 1), random(n - n / 2, 2));
        a.sort_unstable();
        b.sort_unstable();
        let out = std::cell::RefCell::new(vec![0u32; n]);
        let ms = interleaved(
            15,
            &[
                (&|| (), &|_| host::merge_keys(&a, &b, &mut out.borrow_mut(), Less).unwrap()),
                (&|| (), &|_| host::with_threads(1, || host::merge_keys(&a, &b, &mut out.borrow_mut(), Less).unwrap())),
                (&|| (), &|_| drop(cpu::merge_keys(&a, &b, Less))),
            ],
        );
        for (name, t) in ["host", "host_1_thread", "cpu_oracle"].iter().zip(&ms) {
            println!("merge_u32\t{name}\t{n}\t{t:.2}");
        }
        println!("merge_u32: host is {:.2}x the 1-thread kernel, {:.2}x cpu::merge_keys (goal >= 1.6x)", ms[1] / ms[0], ms[2] / ms[0]);

        let keys = random(n, 3);
        let values: Vec<u32> = (0..n as u32).collect();
        let tuples: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        let pairs = || (keys.clone(), values.clone());
        let ms = interleaved(
            7,
            &[
                (&|| (pairs(), tuples.clone()), &|((k, v), _)| host::sort_pairs(k, v, Less).unwrap()),
                (&|| (pairs(), tuples.clone()), &|(_, t)| t.par_sort_by_key(|p| p.0)),
                (&|| (pairs(), tuples.clone()), &|(_, t)| t.sort_by_key(|p| p.0)),
            ],
        );
        for (name, t) in ["host", "rayon_par_sort_by_key", "std_sort_by_key"].iter().zip(&ms) {
            println!("sort_pairs_u32\t{name}\t{n}\t{t:.2}");
        }
        println!("sort_pairs_u32: host takes {:.2}x rayon's time (goal <= 1.2x), {:.2}x std's sequential sort_by_key", ms[0] / ms[1], ms[0] / ms[2]);
    }
}

criterion_group!(benches, merge, sort_pairs, summary);
criterion_main!(benches);

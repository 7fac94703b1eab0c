//! Sorts sharded across GPUs (`mergepath::multi`): 2^k random u32 keys split evenly over
//! groups of 1, 2, 4, ... of the visible GPUs (NCCL), device-resident (`GpuGroup::sort_keys`,
//! shards uploaded before the clock) and from host memory (`GpuGroup::sort_host_keys`, the
//! uploads and downloads timed); beside them, for the same keys, mergepath's one-GPU sort on
//! GPU 0, the ranks' local sorts alone (each GPU sorting its shard, all at once: the part of
//! the sharded sort that needs no other rank), and, up to 2^28 keys, the sharded sort's steps
//! with 2 and 4 ranks sharing GPU 0 (every step but NCCL's transfers).
//! Wall-clock medians of 5 calls after one warm-up, every rank waited for. One TSV line per
//! case in the anchors' format (op impl type n ms gkeys_s gbytes_s; bytes: the keys read and
//! written once), the rank count in the op name. A group is left out at a size whose shares
//! would not fit its GPUs (a line says so).
//!
//! Run: `cargo bench --bench multi` (on the GPU machine: `.gpu/run bench multi`, NCCL's
//! `libnccl.so` on the loader's path). `MERGEPATH_BENCH_LOG2=28,32` sets the device-resident
//! sizes, `MERGEPATH_BENCH_HOST_LOG2=33` the host-resident ones (default: the same).

use criterion::{criterion_group, criterion_main, Criterion};
use mergepath::cudarc::driver::{CudaContext, CudaSlice};
use mergepath::multi::{part_bounds, GpuGroup};
use mergepath::{Gpu, Less};
use std::time::Instant;

mod support;
use support::{bench_gpu, log2_sizes, Rng};

/// The largest size run with ranks sharing one GPU (each rank's buffers on the one device).
const SHARED_MAX_LOG2: u32 = 28;

/// Device memory a rank of a group of several takes per byte of its share at its peak: the
/// shard, its sorted copy, the sort's scratch (kept in the rank's pool), the received part
/// and the merged part. One rank alone takes three: the shard, the sorted copy and the scratch.
fn footprint(ranks: usize) -> usize {
    if ranks == 1 {
        3
    } else {
        5
    }
}

fn median_ms(mut f: impl FnMut()) -> f64 {
    median_ms_with(&mut (), |_| (), |_| f())
}

/// As `median_ms`, on `state`, with `setup` run untimed before each call.
fn median_ms_with<T>(state: &mut T, mut setup: impl FnMut(&mut T), mut f: impl FnMut(&mut T)) -> f64 {
    setup(state);
    f(state);
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            setup(state);
            let start = Instant::now();
            f(state);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn report(op: &str, n: usize, ms: f64) {
    println!("{op}\tmergepath\tu32\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, (2 * 4 * n) as f64 / ms / 1e6);
}

/// Host threads for making and copying keys (2^33 of them take seconds on one).
fn host_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `n` random keys, made in chunks on all host threads (each chunk its own seed).
fn random_keys(n: usize, seed: u64) -> Vec<u32> {
    let mut keys = vec![0u32; n];
    let chunk = n.div_ceil(host_threads()).max(1);
    std::thread::scope(|scope| {
        for (i, part) in keys.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                let mut rng = Rng(seed ^ (i as u64) << 40);
                part.iter_mut().for_each(|k| *k = rng.next() as u32);
            });
        }
    });
    keys
}

/// `to.copy_from_slice(from)` on all host threads.
fn copy_on_threads(to: &mut [u32], from: &[u32]) {
    let chunk = to.len().div_ceil(host_threads()).max(1);
    std::thread::scope(|scope| {
        for (t, f) in to.chunks_mut(chunk).zip(from.chunks(chunk)) {
            scope.spawn(move || t.copy_from_slice(f));
        }
    });
}

/// Every rank's share of `keys` uploaded to its GPU.
fn upload_shares(group: &GpuGroup, keys: &[u32]) -> Vec<CudaSlice<u32>> {
    let bounds = part_bounds(keys.len(), group.ranks().len());
    group.ranks().iter().zip(bounds.windows(2)).map(|(rank, w)| rank.gpu().upload(&keys[w[0]..w[1]]).unwrap()).collect()
}

/// Waits for every rank and gives their pooled buffers back, so the next case has the memory.
fn settle(group: &GpuGroup) {
    for rank in group.ranks() {
        rank.gpu().free_pools().unwrap();
    }
}

/// Device-resident shards of `keys` over `group`, sorted together (each rank returns once its
/// part is written).
fn bench_group(group: &GpuGroup, keys: &[u32], op: &str) {
    let shards = upload_shares(group, keys);
    let refs: Vec<_> = shards.iter().collect();
    let ms = median_ms(|| drop(group.sort_keys(&refs, Less).unwrap()));
    report(op, keys.len(), ms);
    drop(shards);
    settle(group);
}

/// Every rank sorting its share of `keys` on its own GPU at once, with no other rank: the
/// sharded sort's first step alone.
fn bench_local_sorts(group: &GpuGroup, keys: &[u32], op: &str) {
    let shards = upload_shares(group, keys);
    let mut outs: Vec<CudaSlice<u32>> = group.ranks().iter().zip(&shards).map(|(rank, s)| rank.gpu().alloc_zeros::<u32>(s.len()).unwrap()).collect();
    let ms = median_ms(|| {
        std::thread::scope(|scope| {
            for ((rank, shard), out) in group.ranks().iter().zip(&shards).zip(outs.iter_mut()) {
                scope.spawn(move || {
                    mergepath::sort_keys_copy(rank.gpu(), shard, out, Less).unwrap();
                    rank.gpu().synchronize().unwrap();
                });
            }
        });
    });
    report(op, keys.len(), ms);
    drop((shards, outs));
    settle(group);
}

fn multi(_c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    let device_bytes = gpu.context().total_mem().unwrap();
    let devices = CudaContext::device_count().unwrap() as usize;
    let groups: Vec<GpuGroup> = std::iter::successors(Some(1usize), |r| Some(r * 2))
        .take_while(|&r| r <= devices)
        .map_while(|ranks| match GpuGroup::new(&(0..ranks).collect::<Vec<_>>()) {
            Ok(group) => Some(group),
            Err(e) => {
                eprintln!("skipped: NCCL group of {ranks} GPUs: {e}");
                None
            }
        })
        .collect();
    let fits = |n: usize, ranks: usize| n.div_ceil(ranks) * 4 * footprint(ranks) <= device_bytes;
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let keys = random_keys(n, 0x3a11 ^ log2 as u64);

        one_gpu_sort(&gpu, &keys);
        if log2 <= SHARED_MAX_LOG2 {
            for ranks in [2, 4] {
                let group = GpuGroup::sharing_one_gpu(0, ranks).unwrap();
                bench_group(&group, &keys, &format!("multi_sort_keys_{ranks}ranks_on_1gpu"));
            }
        }
        for group in &groups {
            let ranks = group.ranks().len();
            if !fits(n, ranks) {
                println!("# multi_sort_keys_{ranks}gpu at 2^{log2}: left out, the shares do not fit the GPUs");
                continue;
            }
            bench_group(group, &keys, &format!("multi_sort_keys_{ranks}gpu"));
            if ranks > 1 {
                bench_local_sorts(group, &keys, &format!("local_sorts_alone_{ranks}gpu"));
            }
        }
    }
    let host_sizes = match std::env::var("MERGEPATH_BENCH_HOST_LOG2") {
        Ok(s) => s.split(',').map(|x| x.trim().parse().expect("MERGEPATH_BENCH_HOST_LOG2: comma-separated integers")).collect(),
        Err(_) => log2_sizes(),
    };
    for log2 in host_sizes {
        let n = 1usize << log2;
        let keys = random_keys(n, 0x3a11 ^ log2 as u64);
        let mut host = vec![0u32; n];
        for group in &groups {
            let ranks = group.ranks().len();
            if !fits(n, ranks) {
                println!("# multi_sort_host_keys_{ranks}gpu at 2^{log2}: left out, the shares do not fit the GPUs");
                continue;
            }
            let ms = median_ms_with(&mut host, |h| copy_on_threads(h, &keys), |h| group.sort_host_keys(h, Less).unwrap());
            report(&format!("multi_sort_host_keys_{ranks}gpu"), n, ms);
            settle(group);
        }
        // The last call's output is the sort of the keys.
        assert!(host.windows(2).all(|w| w[0] <= w[1]), "the host-resident sort's output is not sorted");
    }
}

/// mergepath's one-GPU sort of `keys` on `gpu` (device-resident, into a second buffer).
fn one_gpu_sort(gpu: &Gpu, keys: &[u32]) {
    let n = keys.len();
    let input = gpu.upload(keys).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(n).unwrap();
    report("sort_keys_1gpu", n, median_ms(|| {
        mergepath::sort_keys_copy(gpu, &input, &mut out, Less).unwrap();
        gpu.synchronize().unwrap();
    }));
    drop((input, out));
    gpu.free_pools().unwrap();
}

criterion_group!(benches, multi);
criterion_main!(benches);

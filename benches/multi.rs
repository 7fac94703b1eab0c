//! Sorts sharded across GPUs (`mergepath::multi`): 2^k random u32 keys split evenly over
//! groups of 1, 2, 4, ... of the visible GPUs (NCCL), device-resident (`GpuGroup::sort_keys`,
//! shards uploaded before the clock) and from host memory (`GpuGroup::sort_host_keys`, the
//! uploads and downloads timed); beside them, for the same keys on GPU 0, mergepath's
//! one-GPU sort and the sharded sort's steps with 2 and 4 ranks sharing that GPU (every step
//! but NCCL's transfers: the cost of the selection, exchange and merge on one device).
//! Wall-clock medians of 5 calls after one warm-up, every rank waited for. One TSV line per
//! case in the anchors' format (op impl type n ms gkeys_s gbytes_s; bytes: the keys read and
//! written once), the rank count in the op name.
//!
//! Run: `cargo bench --bench multi` (on the GPU machine: `.gpu/run bench multi`, NCCL's
//! `libnccl.so` on the loader's path). `MERGEPATH_BENCH_LOG2=28,30` sets the sizes.

use criterion::{criterion_group, criterion_main, Criterion};
use mergepath::cudarc::driver::CudaContext;
use mergepath::multi::{part_bounds, GpuGroup};
use mergepath::Less;
use std::time::Instant;

mod support;
use support::{bench_gpu, log2_sizes, Rng};

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

/// Device-resident shards of `keys` over `group`, sorted together, each rank waited for.
fn bench_group(group: &GpuGroup, keys: &[u32], op: &str) {
    let bounds = part_bounds(keys.len(), group.ranks().len());
    let shards: Vec<_> = group.ranks().iter().zip(bounds.windows(2)).map(|(rank, w)| rank.gpu().upload(&keys[w[0]..w[1]]).unwrap()).collect();
    let refs: Vec<_> = shards.iter().collect();
    let ms = median_ms(|| {
        let parts = group.sort_keys(&refs, Less).unwrap();
        for rank in group.ranks() {
            rank.gpu().synchronize().unwrap();
        }
        drop(parts);
    });
    report(op, keys.len(), ms);
}

fn multi(_c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    let devices = CudaContext::device_count().unwrap() as usize;
    println!("op\timpl\ttype\tn\tms\tgkeys_s\tgbytes_s");
    for log2 in log2_sizes() {
        let n = 1usize << log2;
        let mut rng = Rng(0x3a11 ^ log2 as u64);
        let keys: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();

        let input = gpu.upload(&keys).unwrap();
        let mut out = gpu.alloc_zeros::<u32>(n).unwrap();
        report("sort_keys_1gpu", n, median_ms(|| {
            mergepath::sort_keys_copy(&gpu, &input, &mut out, Less).unwrap();
            gpu.synchronize().unwrap();
        }));
        drop((input, out));
        for ranks in [2, 4] {
            let group = GpuGroup::sharing_one_gpu(0, ranks).unwrap();
            bench_group(&group, &keys, &format!("multi_sort_keys_{ranks}ranks_on_1gpu"));
        }

        let mut ranks = 1;
        while ranks <= devices {
            let group = match GpuGroup::new(&(0..ranks).collect::<Vec<_>>()) {
                Ok(group) => group,
                Err(e) => {
                    eprintln!("skipped: NCCL group of {ranks} GPUs: {e}");
                    break;
                }
            };
            bench_group(&group, &keys, &format!("multi_sort_keys_{ranks}gpu"));
            let mut host = keys.clone();
            let ms = median_ms_with(&mut host, |h| h.copy_from_slice(&keys), |h| group.sort_host_keys(h, Less).unwrap());
            report(&format!("multi_sort_host_keys_{ranks}gpu"), n, ms);
            ranks *= 2;
        }
    }
}

criterion_group!(benches, multi);
criterion_main!(benches);

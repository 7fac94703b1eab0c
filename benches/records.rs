//! Records and values wider than the kernels' words, against `benches/cub/records.cu` (CUB with
//! the functors a user writes) in the same device call: 64-byte rows by (score desc, id) (a
//! record: sorted by its packed order and gathered), 24-byte records by three 8-byte fields
//! (`c desc, a, b`: three packed words, a stable pass each), 16-byte keys ordered as `[u8; 16]` (a
//! derived key moved whole), and u32 keys with values of 4, 8, 12, 16, 24 and 100 bytes (4, 8
//! and 16 move as words, the others by position and one gather). Copy variants, timed with CUDA
//! events. Then the records and the 16-byte keys merged, searched, united and made distinct (the
//! records by one `u64` key each: the packed word, or for `triple24` their addresses;
//! `row64_custom` is the row by a custom comparator, the anchors' functor: by addresses).
//! Prints
//! criterion's report and one TSV line per case in the anchors' format: op impl type n ms
//! gkeys_s gbytes_s (bytes: items read and written once).
//!
//! Run: `cargo bench --bench records` (on the GPU machine: `.gpu/run bench records`).
//! `MERGEPATH_BENCH_LOG2=24,26` sets the records' and the pairs' sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mergepath::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use mergepath::{Comparator, Gpu, Key, Less, Value};
use std::time::Duration;

mod support;
use support::{bench_gpu, event_median_ms, gpu_time, Rng};

/// The 64-byte row of the anchors: by score descending, then id; by the anchors' own functor
/// too (`ByScoreId`, a custom comparator: the records compared through their addresses).
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
#[key(comparator(ByScoreId, cuda = "a.score > b.score || (a.score == b.score && a.id < b.id)", rust = "|a, b| a.score > b.score || (a.score == b.score && a.id < b.id)"))]
struct Row {
    score: f32,
    id: u32,
    seq: u64,
    payload: [u8; 48],
}

/// The 24-byte record of the anchors ordered by three 8-byte fields, `c desc, a, b`: an order of
/// 192 bits, three packed words (three stable passes).
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "c desc, a, b")]
struct Triple {
    a: u64,
    b: i64,
    c: f64,
}

/// A 16-byte key ordered as Rust orders `[u8; 16]` (UUIDs, hashes).
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
struct Uuid([u8; 16]);

/// The sizes: records, pairs.
fn sizes() -> (usize, usize) {
    let logs: Vec<u32> = std::env::var("MERGEPATH_BENCH_LOG2").ok().map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect()).unwrap_or_default();
    (1 << logs.first().copied().unwrap_or(24), 1 << logs.get(1).copied().unwrap_or(26))
}

fn report(c: &mut Criterion, gpu: &Gpu, op: &str, ty: &str, n: usize, bytes: usize, mut run: impl FnMut()) {
    let mut group = c.benchmark_group(format!("{op}_{ty}"));
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(BenchmarkId::new("copy", n), |b| b.iter_custom(|iters| gpu_time(gpu, iters, &mut run)));
    group.finish();
    let ms = event_median_ms(gpu, 10, &mut run);
    println!("{op}\tmergepath\t{ty}\t{n}\t{ms:.4}\t{:.3}\t{:.1}", n as f64 / ms / 1e6, bytes as f64 / ms / 1e6);
}

fn keys<K: Key + DeviceRepr + ValidAsZeroBits, C: Comparator<K>>(c: &mut Criterion, gpu: &Gpu, ty: &str, n: usize, comp: C, make: impl Fn(usize, u64) -> K) {
    let mut rng = Rng(42);
    let input = gpu.upload(&(0..n).map(|i| make(i, rng.next())).collect::<Vec<K>>()).unwrap();
    let mut out = gpu.alloc_zeros::<K>(n).unwrap();
    report(c, gpu, "sort_keys", ty, n, 2 * n * std::mem::size_of::<K>(), || mergepath::sort_keys_copy(gpu, &input, &mut out, comp).unwrap());
}

/// Records in the algorithms other than sorts, by their order keys: two sorted halves of `n`
/// records merged, searched (lower bounds of one in the other) and united, and the distinct
/// records of the merge.
fn algorithms<K: Key + DeviceRepr + ValidAsZeroBits, C: Comparator<K>>(c: &mut Criterion, gpu: &Gpu, ty: &str, n: usize, comp: C, make: impl Fn(usize, u64) -> K) {
    let mut rng = Rng(7);
    let input = gpu.upload(&(0..n).map(|i| make(i, rng.next())).collect::<Vec<K>>()).unwrap();
    let half = n / 2;
    let (mut a, mut b) = (gpu.alloc_zeros::<K>(half).unwrap(), gpu.alloc_zeros::<K>(n - half).unwrap());
    mergepath::sort_keys_copy(gpu, &input.slice(..half), &mut a, comp).unwrap();
    mergepath::sort_keys_copy(gpu, &input.slice(half..), &mut b, comp).unwrap();
    let (mut out, mut bounds) = (gpu.alloc_zeros::<K>(n).unwrap(), gpu.alloc_zeros::<u32>(half).unwrap());
    let size = std::mem::size_of::<K>();
    report(c, gpu, "merge_keys", ty, n, 2 * n * size, || mergepath::merge_keys(gpu, &a, &b, &mut out, comp).unwrap());
    report(c, gpu, "sorted_search", ty, n, n * size + half * 4, || mergepath::sorted_search(gpu, &a, &b, mergepath::Bound::Lower, &mut bounds, comp).unwrap());
    report(c, gpu, "set_union", ty, n, 2 * n * size, || {
        mergepath::set_operation_keys(gpu, mergepath::SetOperation::Union, &a, &b, &mut out, comp).unwrap();
    });
    mergepath::merge_keys(gpu, &a, &b, &mut out, comp).unwrap();
    let mut distinct = gpu.alloc_zeros::<K>(n).unwrap();
    report(c, gpu, "unique", ty, n, 2 * n * size, || {
        mergepath::unique(gpu, &out, &mut distinct, comp).unwrap();
    });
}

fn pairs<V: Value + DeviceRepr + ValidAsZeroBits>(c: &mut Criterion, gpu: &Gpu, n: usize) {
    let mut rng = Rng(11);
    let keys = gpu.upload(&(0..n).map(|_| rng.next() as u32).collect::<Vec<u32>>()).unwrap();
    let values = gpu.upload(&vec![V::zeroed(); n]).unwrap();
    let (mut ko, mut vo) = (gpu.alloc_zeros::<u32>(n).unwrap(), gpu.alloc_zeros::<V>(n).unwrap());
    let ty = format!("u32_v{}", std::mem::size_of::<V>());
    report(c, gpu, "sort_pairs", &ty, n, 2 * n * (4 + std::mem::size_of::<V>()), || mergepath::sort_pairs_copy(gpu, &keys, &values, &mut ko, &mut vo, Less).unwrap());
}

fn benches(c: &mut Criterion) {
    let Some(gpu) = bench_gpu() else { return };
    let (records, pairs_n) = sizes();
    let row = |i: usize, r: u64| Row { score: (r % 1_000_003) as f32 / 7.0, id: (r >> 32) as u32, seq: i as u64, payload: [(r >> 8) as u8; 48] };
    keys(c, &gpu, "row64", records, Less, row);
    keys(c, &gpu, "row64_custom", records, ByScoreId, row);
    keys(c, &gpu, "u8x16", records, Less, |_, r| Uuid(((r as u128) << 64 | r.rotate_left(29) as u128).to_le_bytes()));
    keys(c, &gpu, "triple24", records, Less, |_, r| Triple { a: r % 1000, b: (r >> 10) as i64 % 1000, c: (r >> 20) as f64 % 1000.0 });
    algorithms(c, &gpu, "row64", records, Less, row);
    algorithms(c, &gpu, "row64_custom", records, ByScoreId, row);
    algorithms(c, &gpu, "triple24", records, Less, |_, r| Triple { a: r % 1000, b: (r >> 10) as i64 % 1000, c: (r >> 20) as f64 % 1000.0 });
    algorithms(c, &gpu, "u8x16", records, Less, |_, r| Uuid(((r as u128) << 64 | r.rotate_left(29) as u128).to_le_bytes()));
    pairs::<u32>(c, &gpu, pairs_n);
    pairs::<u64>(c, &gpu, pairs_n);
    pairs::<[u8; 12]>(c, &gpu, pairs_n);
    pairs::<[u32; 4]>(c, &gpu, pairs_n);
    pairs::<[u8; 24]>(c, &gpu, pairs_n);
    pairs::<[u8; 100]>(c, &gpu, pairs_n);
}

criterion_group!(group, benches);
criterion_main!(group);

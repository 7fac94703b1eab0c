//! GPU mergesort against `slice::sort_by` (stable): every built-in key type and both
//! comparators, lengths 0, 1, tile +- 1, 2^k +- 1 and random ones up to 2^26, the
//! distributions below, stability through `sort_indices` on keys with many duplicates, pairs
//! with 4/8/16-byte values, the copy variants, API validation, and one sort of more than 2^31
//! keys.

mod common;

use common::{assert_same, gpu, Rng, TestKey};
use mergepath::cudarc::driver::CudaSlice;
use mergepath::testing::{self, Pattern};
use mergepath::{cpu, tuning, Comparator, Error, Gpu, Greater, Less};

/// The keys these tests sort: built-in keys the tests and the testing kit both make.
trait SortKey: TestKey + testing::TestKey {}
impl<K: TestKey + testing::TestKey> SortKey for K {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortDist {
    Uniform,
    AllEqual,
    TwoDistinct,
    Sorted,
    ReverseSorted,
    OrganPipe,
    /// Ascending runs of one random length (the testing kit's `Pattern::Saw`).
    Saw,
    /// A pool of 64 keys drawn with Zipf weights (the testing kit's `Pattern::Zipf`).
    Zipf,
    /// Ordinary keys mixed with the type's special values (NaN, infinities, signed zeros).
    Specials,
}
const SORT_DISTS: [SortDist; 9] = [
    SortDist::Uniform,
    SortDist::AllEqual,
    SortDist::TwoDistinct,
    SortDist::Sorted,
    SortDist::ReverseSorted,
    SortDist::OrganPipe,
    SortDist::Saw,
    SortDist::Zipf,
    SortDist::Specials,
];

/// `n` keys of `dist`; Sorted/ReverseSorted/OrganPipe are in `comp`'s order.
fn keys_of<K: SortKey, C: Comparator<K>>(n: usize, dist: SortDist, seed: u64, comp: C) -> Vec<K> {
    let mut rng = Rng(seed);
    let pool: Vec<K> = match dist {
        SortDist::AllEqual => vec![K::from_bits(rng.next())],
        SortDist::TwoDistinct => vec![K::from_bits(rng.next()), K::from_bits(rng.next())],
        SortDist::Specials => <K as TestKey>::specials().into_iter().chain((0..8).map(|_| K::from_bits(rng.next()))).collect(),
        _ => Vec::new(),
    };
    let mut keys: Vec<K> = (0..n)
        .map(|_| if pool.is_empty() { K::from_bits(rng.next()) } else { pool[rng.below(pool.len() as u64) as usize] })
        .collect();
    let ascending = |v: &mut [K]| v.sort_by(|x, y| common::ordering(&comp, x, y));
    match dist {
        SortDist::Sorted => ascending(&mut keys),
        SortDist::ReverseSorted => {
            ascending(&mut keys);
            keys.reverse();
        }
        SortDist::OrganPipe => {
            ascending(&mut keys);
            let tail: Vec<K> = keys.split_off(n / 2);
            keys.extend(tail.into_iter().rev());
        }
        SortDist::Saw => keys = Pattern::Saw.arrange(keys, seed, comp),
        SortDist::Zipf => keys = Pattern::Zipf.arrange(keys, seed, comp),
        _ => {}
    }
    keys
}

/// The merge passes' tile and the blocksort's block for keys K on this GPU.
fn tile_of<K: SortKey>(gpu: &Gpu) -> (usize, usize) {
    let (arch, bytes) = (gpu.compute_capability().unwrap(), std::mem::size_of::<K>());
    (tuning::sort_shape(arch, bytes).tile(), tuning::blocksort_shape(arch, bytes).tile())
}

/// Lengths: 0, 1, tile +- 1, block +- 1, a few blocks (odd and even numbers of merge levels,
/// partial last four-way frames), 2^k +- 1 up to 2^20, a few random ones. `big` adds 2^22 + 1
/// and a random length up to 2^26.
fn lengths((tile, block): (usize, usize), rng: &mut Rng, big: bool) -> Vec<usize> {
    let mut v = vec![0, 1, 2, tile - 1, tile, tile + 1, block - 1, block, block + 1, 2 * block + 1, 3 * block - 1];
    v.extend([4 * block + 1, 5 * block + tile / 2, 9 * block - 1, 16 * block, 17 * block + 3 * tile + 7]);
    for k in [4, 9, 12, 16, 20] {
        v.extend([(1 << k) - 1, (1 << k) + 1]);
    }
    v.extend((0..3).map(|_| rng.below(300_000) as usize));
    if big {
        v.push((1 << 22) + 1);
        v.push((1 << 25) + rng.below(1 << 25) as usize);
    }
    v
}

/// A device sort of keys in place: mergesort's or the sample sort's.
type KeysSort<K, C> = fn(&Gpu, &mut CudaSlice<K>, C) -> mergepath::Result<()>;

fn check_sort_keys<K: SortKey, C: Comparator<K>>(gpu: &Gpu, comp: C, big: bool) {
    check_sort_keys_by::<K, C>(gpu, comp, big, "sort_keys", mergepath::sort_keys::<K, C>);
}

fn check_sort_keys_by<K: SortKey, C: Comparator<K>>(gpu: &Gpu, comp: C, big: bool, name: &str, sort: KeysSort<K, C>) {
    let tile = tile_of::<K>(gpu);
    let mut rng = Rng(0x50f7 ^ tile.0 as u64);
    for n in lengths(tile, &mut rng, big) {
        for dist in SORT_DISTS {
            if n > 1 << 20 && dist != SortDist::Uniform && dist != SortDist::OrganPipe {
                continue; // the large lengths: two distributions are enough
            }
            let seed = rng.next();
            let keys = keys_of::<K, C>(n, dist, seed, comp);
            let want = cpu::sort_keys(&keys, comp);
            let mut d = gpu.upload(&keys).unwrap();
            sort(gpu, &mut d, comp).unwrap();
            let ctx = format!("{name} {} {} n={n} {dist:?} seed={seed:#x}", std::any::type_name::<K>(), C::NAME);
            assert_same(&gpu.download(&d).unwrap(), &want, &ctx);
        }
    }
}

macro_rules! sort_keys_tests {
    ($($name:ident: $t:ident $big:expr),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            check_sort_keys::<$t, Less>(gpu, Less, $big);
            check_sort_keys::<$t, Greater>(gpu, Greater, false);
        }
    )*};
}
sort_keys_tests!(sort_keys_u8: u8 false, sort_keys_u16: u16 false, sort_keys_u32: u32 true, sort_keys_u64: u64 true, sort_keys_i8: i8 false, sort_keys_i16: i16 false, sort_keys_i32: i32 false, sort_keys_i64: i64 false, sort_keys_f32: f32 true, sort_keys_f64: f64 false);

macro_rules! samplesort_keys_tests {
    ($($name:ident: $t:ident $big:expr),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            check_sort_keys_by::<$t, Less>(gpu, Less, $big, "samplesort", mergepath::samplesort::sort_keys::<$t, Less>);
            check_sort_keys_by::<$t, Greater>(gpu, Greater, false, "samplesort", mergepath::samplesort::sort_keys::<$t, Greater>);
        }
    )*};
}
samplesort_keys_tests!(samplesort_keys_u8: u8 false, samplesort_keys_u16: u16 false, samplesort_keys_u32: u32 true, samplesort_keys_u64: u64 true, samplesort_keys_i32: i32 false, samplesort_keys_i64: i64 false, samplesort_keys_f32: f32 true, samplesort_keys_f64: f64 false);

/// The sample sort's stability and values: u32 keys with many duplicates (equality buckets) or
/// random ones with their input positions, u64 keys with 16-byte values, against a stable sort
/// on the CPU; skewed u64 keys (a few very frequent values) with their positions.
#[test]
fn samplesort_pairs_are_stable() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x5a5);
    for n in [3000usize, 6000, 100_003, 1 << 20, (1 << 22) + 5, 10_000_019] {
        for dist in [SortDist::TwoDistinct, SortDist::Uniform, SortDist::AllEqual, SortDist::ReverseSorted] {
            let keys = keys_of::<u32, Less>(n, dist, rng.next(), Less);
            let positions: Vec<u32> = (0..n as u32).collect();
            let ctx = format!("samplesort pairs n={n} {dist:?}");
            let (want_k, want_v) = cpu::sort_pairs(&keys, &positions, Less);
            let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&positions).unwrap());
            mergepath::samplesort::sort_pairs(gpu, &mut dk, &mut dv, Less).unwrap();
            assert_eq!(gpu.download(&dk).unwrap(), want_k, "{ctx}");
            assert_eq!(gpu.download(&dv).unwrap(), want_v, "{ctx}: u32 positions");
            let wide: Vec<u64> = keys.iter().map(|&k| u64::from(k) << 20 | rng.below(4)).collect();
            let v16: Vec<[u32; 4]> = (0..n as u32).map(|i| [i, !i, 3, i ^ 0x55]).collect();
            let (want_k, want_v) = cpu::sort_pairs(&wide, &v16, Greater);
            let (mut dk, mut dv) = (gpu.upload(&wide).unwrap(), gpu.upload(&v16).unwrap());
            mergepath::samplesort::sort_pairs(gpu, &mut dk, &mut dv, Greater).unwrap();
            assert_eq!(gpu.download(&dk).unwrap(), want_k, "{ctx}: u64 keys");
            assert_eq!(gpu.download(&dv).unwrap(), want_v, "{ctx}: 16-byte values");
        }
        // Skewed: value v = 2^20 / (1 + r), r uniform, so small values are very frequent.
        let keys: Vec<u64> = (0..n).map(|_| (1u64 << 20) / (1 + rng.below(1 << 20))).collect();
        let positions: Vec<u64> = (0..n as u64).collect();
        let (want_k, want_v) = cpu::sort_pairs(&keys, &positions, Less);
        let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&positions).unwrap());
        mergepath::samplesort::sort_pairs(gpu, &mut dk, &mut dv, Less).unwrap();
        assert_eq!(gpu.download(&dk).unwrap(), want_k, "samplesort Zipf n={n}");
        assert_eq!(gpu.download(&dv).unwrap(), want_v, "samplesort Zipf n={n}: positions");
    }
}

/// The sample sort's copy variant leaves its input and the output past the result as they were.
#[test]
fn samplesort_keys_copy_leaves_input() {
    let Some(gpu) = gpu() else { return };
    let keys = keys_of::<f32, Less>(500_001, SortDist::Specials, 9, Less);
    let d = gpu.upload(&keys).unwrap();
    let mut out = gpu.upload(&vec![7.0f32; keys.len() + 2]).unwrap();
    mergepath::samplesort::sort_keys_copy(gpu, &d, &mut out, Less).unwrap();
    let got = gpu.download(&out).unwrap();
    assert_same(&got[..keys.len()], &cpu::sort_keys(&keys, Less), "samplesort copy");
    assert_same(&got[keys.len()..], &[7.0, 7.0], "samplesort copy: past the result");
    assert_same(&gpu.download(&d).unwrap(), &keys, "samplesort copy: input");
}

/// More than 2^31 keys through the sample sort (64-bit offsets, equality buckets of ~2^23
/// keys): u8 keys, checked against the key counts.
#[test]
fn samplesort_beyond_2_pow_31() {
    let Some(gpu) = gpu() else { return };
    check_u8_sort_beyond_2_pow_31(gpu, 321, Less, mergepath::samplesort::sort_keys::<u8, Less>);
}

/// Stability: `sort_indices` and `argsort` on keys with many duplicates must give exactly the
/// positions a stable sort gives, for u32 and u64 indices; `argsort` leaves the keys as they are.
fn check_sort_indices<K: SortKey, C: Comparator<K>>(gpu: &Gpu, comp: C) {
    let tile = tile_of::<K>(gpu);
    let mut rng = Rng(0x1d5);
    for n in lengths(tile, &mut rng, false) {
        for dist in [SortDist::TwoDistinct, SortDist::AllEqual, SortDist::Uniform, SortDist::ReverseSorted, SortDist::Specials] {
            let keys = keys_of::<K, C>(n, dist, rng.next(), comp);
            let positions: Vec<u64> = (0..n as u64).collect();
            let (want_k, want_i) = cpu::sort_pairs(&keys, &positions, comp);
            let ctx = format!("sort_indices {} {} n={n} {dist:?}", std::any::type_name::<K>(), C::NAME);
            let mut dk = gpu.upload(&keys).unwrap();
            let mut di = gpu.upload(&vec![u32::MAX; n]).unwrap();
            mergepath::sort_indices(gpu, &mut dk, &mut di, comp).unwrap();
            assert_same(&gpu.download(&dk).unwrap(), &want_k, &ctx);
            let got: Vec<u64> = gpu.download(&di).unwrap().into_iter().map(u64::from).collect();
            assert_eq!(got, want_i, "{ctx}: u32 indices");
            let mut dk = gpu.upload(&keys).unwrap();
            let mut di = gpu.upload(&vec![u64::MAX; n]).unwrap();
            mergepath::sort_indices(gpu, &mut dk, &mut di, comp).unwrap();
            assert_eq!(gpu.download(&di).unwrap(), want_i, "{ctx}: u64 indices");
            let dk = gpu.upload(&keys).unwrap();
            let mut di = gpu.upload(&vec![u64::MAX; n]).unwrap();
            mergepath::argsort(gpu, &dk, &mut di, comp).unwrap();
            assert_eq!(gpu.download(&di).unwrap(), want_i, "{ctx}: argsort");
            assert_same(&gpu.download(&dk).unwrap(), &keys, &format!("{ctx}: argsort's keys"));
        }
    }
}

#[test]
fn sort_indices_is_stable() {
    let Some(gpu) = gpu() else { return };
    check_sort_indices::<u32, Less>(gpu, Less);
    check_sort_indices::<u32, Greater>(gpu, Greater);
    check_sort_indices::<i8, Less>(gpu, Less);
    check_sort_indices::<u64, Greater>(gpu, Greater);
    check_sort_indices::<f32, Less>(gpu, Less);
    check_sort_indices::<f32, Greater>(gpu, Greater);
    check_sort_indices::<i16, Greater>(gpu, Greater);
    check_sort_indices::<f64, Greater>(gpu, Greater);
}

/// Pairs with 4-, 8- and 16-byte values, in place and as copies (inputs left as they were),
/// with 2- and 4-byte keys (two-way passes, per the tuning table, for 2-byte keys) and 8-byte
/// keys (four-way passes from about 2 M items).
fn check_sort_pairs<K: SortKey + mergepath::cudarc::driver::ValidAsZeroBits>(gpu: &Gpu, rng: &mut Rng)
where
    Less: Comparator<K>,
    Greater: Comparator<K>,
{
    for n in [0usize, 1, 5000, 20_000, 123_457, 300_001, 1 << 20, (1 << 22) + 3] {
        for dist in [SortDist::TwoDistinct, SortDist::Uniform, SortDist::Specials] {
            let keys = keys_of::<K, _>(n, dist, rng.next(), Less);
            let v4: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
            let v8: Vec<u64> = (0..n).map(|_| rng.next()).collect();
            let v16: Vec<[u32; 4]> = v8.iter().map(|&x| [x as u32, (x >> 32) as u32, !(x as u32), 7]).collect();
            let ctx = format!("sort_pairs {} n={n} {dist:?}", std::any::type_name::<K>());

            let (want_k, want_v) = cpu::sort_pairs(&keys, &v4, Greater);
            let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&v4).unwrap());
            mergepath::sort_pairs(gpu, &mut dk, &mut dv, Greater).unwrap();
            assert_same(&gpu.download(&dk).unwrap(), &want_k, &ctx);
            assert_eq!(gpu.download(&dv).unwrap(), want_v, "{ctx}: 4-byte values");

            let (want_k, want_v) = cpu::sort_pairs(&keys, &v8, Less);
            let (dk, dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&v8).unwrap());
            let (mut ok, mut ov) = (gpu.alloc_zeros::<K>(n + 3).unwrap(), gpu.alloc_zeros::<u64>(n).unwrap());
            mergepath::sort_pairs_copy(gpu, &dk, &dv, &mut ok, &mut ov, Less).unwrap();
            let got_k = gpu.download(&ok).unwrap();
            assert_same(&got_k[..n], &want_k, &format!("{ctx}: copy keys"));
            assert_same(&got_k[n..], &[<K as bytemuck::Zeroable>::zeroed(); 3], &format!("{ctx}: past the result untouched"));
            assert_eq!(gpu.download(&ov).unwrap(), want_v, "{ctx}: 8-byte values");
            assert_same(&gpu.download(&dk).unwrap(), &keys, &format!("{ctx}: input keys untouched"));
            assert_eq!(gpu.download(&dv).unwrap(), v8, "{ctx}: input values untouched");

            let (_, want_v) = cpu::sort_pairs(&keys, &v16, Less);
            let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&v16).unwrap());
            mergepath::sort_pairs(gpu, &mut dk, &mut dv, Less).unwrap();
            assert_eq!(gpu.download(&dv).unwrap(), want_v, "{ctx}: 16-byte values");
        }
    }
}

#[test]
fn sort_pairs_in_place_and_copy() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(77);
    // Keys of at most 4 bytes travel zipped with 4-byte values; u64 keys do not.
    check_sort_pairs::<u16>(gpu, &mut rng);
    check_sort_pairs::<i32>(gpu, &mut rng);
    check_sort_pairs::<f32>(gpu, &mut rng);
    check_sort_pairs::<i8>(gpu, &mut rng);
    check_sort_pairs::<u64>(gpu, &mut rng);
}

#[test]
fn sort_keys_copy_leaves_input() {
    let Some(gpu) = gpu() else { return };
    for n in [0usize, 3, 77_777, 1 << 21] {
        let keys = keys_of::<f64, _>(n, SortDist::Specials, n as u64, Less);
        let input = gpu.upload(&keys).unwrap();
        let mut out = gpu.alloc_zeros::<f64>(n).unwrap();
        mergepath::sort_keys_copy(gpu, &input, &mut out, Less).unwrap();
        assert_same(&gpu.download(&out).unwrap(), &cpu::sort_keys(&keys, Less), &format!("sort_keys_copy n={n}"));
        assert_same(&gpu.download(&input).unwrap(), &keys, "input untouched");
    }
}

/// Sorting a view sorts only the view.
#[test]
fn sort_keys_view() {
    let Some(gpu) = gpu() else { return };
    let keys = keys_of::<i32, _>(50_000, SortDist::Uniform, 5, Less);
    let mut d = gpu.upload(&keys).unwrap();
    let mut view = d.slice_mut(1_000..41_000);
    mergepath::sort_keys(gpu, &mut view, Less).unwrap();
    let got = gpu.download(&d).unwrap();
    assert_eq!(got[..1_000], keys[..1_000]);
    assert_eq!(got[41_000..], keys[41_000..]);
    assert_eq!(got[1_000..41_000], cpu::sort_keys(&keys[1_000..41_000], Less)[..]);
}

#[test]
fn sort_api_errors() {
    let Some(gpu) = gpu() else { return };
    let mut keys = gpu.upload(&[3u32, 1, 2]).unwrap();
    let mut short_values = gpu.upload(&[0u32, 1]).unwrap();
    assert_eq!(
        mergepath::sort_pairs(gpu, &mut keys, &mut short_values, Less),
        Err(Error::LengthMismatch { what: "values", expected: 3, got: 2 })
    );
    let mut indices = gpu.alloc_zeros::<u32>(4).unwrap();
    assert_eq!(
        mergepath::sort_indices(gpu, &mut keys, &mut indices, Less),
        Err(Error::LengthMismatch { what: "indices", expected: 3, got: 4 })
    );
    let mut out = gpu.alloc_zeros::<u32>(2).unwrap();
    assert_eq!(
        mergepath::sort_keys_copy(gpu, &keys, &mut out, Less),
        Err(Error::OutputTooSmall { what: "output", needed: 3, got: 2 })
    );
    assert_eq!(gpu.download(&keys).unwrap(), [3, 1, 2], "nothing ran on bad input");
}

/// More than 2^31 keys: 64-bit counts through the blocksort and every merge pass. u8 keys keep
/// it to ~4.4 GB of device memory; the result is checked against the key counts.
#[test]
fn huge_sort_beyond_2_pow_31() {
    let Some(gpu) = gpu() else { return };
    check_u8_sort_beyond_2_pow_31(gpu, 123, Greater, mergepath::sort_keys::<u8, Greater>);
}

/// Sorts 2,200,000,011 random u8 keys by `comp` with `sort` and checks the
/// result against the counts of each key.
fn check_u8_sort_beyond_2_pow_31<C: Comparator<u8>>(gpu: &Gpu, seed: u64, comp: C, sort: KeysSort<u8, C>) {
    let n = 2_200_000_011usize;
    assert!(n > 1 << 31);
    let mut rng = Rng(seed);
    let mut counts = [0usize; 256];
    let keys: Vec<u8> = (0..n)
        .map(|_| {
            let k = (rng.next() >> 56) as u8;
            counts[k as usize] += 1;
            k
        })
        .collect();
    let mut d = gpu.upload(&keys).unwrap();
    drop(keys);
    sort(gpu, &mut d, comp).unwrap();
    let got = gpu.download(&d).unwrap();
    let mut order: Vec<u8> = (0..=255).collect();
    order.sort_by(|x, y| common::ordering(&comp, x, y));
    let mut pos = 0;
    for v in order.into_iter().map(usize::from) {
        if let Some(i) = got[pos..pos + counts[v]].iter().position(|&x| x as usize != v) {
            panic!("key {v}: wrong value at {}", pos + i);
        }
        pos += counts[v];
    }
    assert_eq!(pos, n);
}

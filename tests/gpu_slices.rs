//! Host slices in, host slices out, the work on the GPU (`Gpu::sort_keys` and the other methods
//! of `mergepath::slices`), against the host backend: sizes 0, 1, around a chunk and many
//! chunks (small work pieces through `with_work_bytes`, and the default pieces), pageable and
//! pinned memory, several key types, a derived key, pairs and indices, merges, searches, set
//! operations, segmented sorts, bad input, two `Gpu`s on different streams at once, calls
//! from several threads on one `Gpu`, and sorts larger than a memory cap (sorted runs merged
//! from host memory) with their progress.

mod common;
#[path = "common/hit.rs"]
mod hit;

use common::{assert_same, capped_gpu, gpu, inputs, Dist, Rng, TestKey};
use hit::{hits, Hit};
use mergepath::slices::with_work_bytes;
use mergepath::{host, Backend, Bound, Comparator, Error, Gpu, Greater, Host, Less, SetOperation};

/// Work pieces of the runs: small ones (many chunks, ranges and staging pieces from small
/// inputs, an odd size among them) and the default (0).
const WORK: [usize; 3] = [4096, 1000, 0];

/// Random keys of the type with its special values mixed in.
fn random_keys<K: TestKey>(n: usize, rng: &mut Rng) -> Vec<K> {
    let specials = K::specials();
    (0..n)
        .map(|_| {
            let r = rng.next();
            if !specials.is_empty() && r.is_multiple_of(8) {
                specials[(r >> 8) as usize % specials.len()]
            } else {
                K::from_bits(r >> 3)
            }
        })
        .collect()
}

/// Lengths around the chunk of `work` bytes for keys of `item` bytes, and many chunks.
fn lengths(work: usize, item: usize) -> Vec<usize> {
    let chunk = if work == 0 { 1 << 20 } else { (work / item).max(1) };
    vec![0, 1, 2, chunk - 1, chunk, chunk + 1, 2 * chunk + 1, 7 * chunk + 3, 37 * chunk + 11]
}

fn check_sort_keys<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, seed: u64) {
    let mut rng = Rng(seed);
    for work in WORK {
        for n in lengths(work, std::mem::size_of::<K>()) {
            let input: Vec<K> = random_keys(n, &mut rng);
            let mut want = input.clone();
            host::sort_keys(&mut want, comp).unwrap();
            let ctx = format!("{} {} n={n} work={work}", std::any::type_name::<K>(), C::NAME);
            let mut got = input.clone();
            with_work_bytes(work, || gpu.sort_keys(&mut got, comp)).unwrap();
            assert_same(&got, &want, &format!("{ctx} pageable"));
            let mut pinned = gpu.pinned_from(&input).unwrap();
            with_work_bytes(work, || gpu.sort_keys(&mut pinned[..], comp)).unwrap();
            assert_same(&pinned, &want, &format!("{ctx} pinned"));
        }
    }
}

#[test]
fn sorts_of_keys_equal_the_host_backend() {
    let Some(gpu) = gpu() else { return };
    check_sort_keys::<u32, _>(gpu, Less, 1);
    check_sort_keys::<u32, _>(gpu, Greater, 2);
    check_sort_keys::<u64, _>(gpu, Less, 3);
    check_sort_keys::<f32, _>(gpu, Less, 4);
    check_sort_keys::<f64, _>(gpu, Greater, 5);
    check_sort_keys::<i16, _>(gpu, Less, 6);
    check_sort_keys::<u8, _>(gpu, Less, 7);
}

#[test]
fn a_large_sort_from_a_vec_and_from_pinned_memory() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(99);
    // More than two default chunks of u32 keys, with a short last chunk.
    let input: Vec<u32> = (0..(1 << 24) + 12_345).map(|_| rng.next() as u32).collect();
    let mut want = input.clone();
    want.sort();
    let mut got = input.clone();
    gpu.sort_keys(&mut got, Less).unwrap();
    assert_same(&got, &want, "2^24 + 12345 u32 pageable");
    let mut pinned = gpu.pinned_from(&input).unwrap();
    gpu.sort_keys(&mut pinned[..], Less).unwrap();
    assert_same(&pinned, &want, "2^24 + 12345 u32 pinned");
}

#[test]
fn derived_keys_sort_by_their_orders() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(11);
    for work in WORK {
        for n in lengths(work, std::mem::size_of::<Hit>()) {
            check_hits(gpu, &hits(n, &mut rng), work, &format!("n={n} work={work}"));
        }
    }
}

/// `input` sorted on `gpu` by both of `Hit`'s orders (the derived one and `ByX`) under work
/// pieces of `work` bytes, against the host backend.
fn check_hits(gpu: &Gpu, input: &[Hit], work: usize, ctx: &str) {
    for by_x in [false, true] {
        let (mut want, mut got) = (input.to_vec(), input.to_vec());
        if by_x {
            host::sort_keys(&mut want, hit::ByX).unwrap();
            with_work_bytes(work, || gpu.sort_keys(&mut got, hit::ByX)).unwrap();
        } else {
            host::sort_keys(&mut want, Less).unwrap();
            with_work_bytes(work, || gpu.sort_keys(&mut got, Less)).unwrap();
        }
        assert_same(&got, &want, &format!("Hit by_x={by_x} {ctx}"));
    }
}

/// Pairs with positions as values (so stability shows), and indices of both widths.
fn check_sort_pairs<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, seed: u64) {
    let mut rng = Rng(seed);
    for work in WORK {
        for n in lengths(work, std::mem::size_of::<K>() + 8) {
            let keys: Vec<K> = random_keys(n, &mut rng);
            let values: Vec<u64> = (0..n as u64).collect();
            let (mut want_k, mut want_v) = (keys.clone(), values.clone());
            host::sort_pairs(&mut want_k, &mut want_v, comp).unwrap();
            let ctx = format!("{} n={n} work={work}", std::any::type_name::<K>());
            let (mut k, mut v) = (keys.clone(), values.clone());
            with_work_bytes(work, || gpu.sort_pairs(&mut k, &mut v, comp)).unwrap();
            assert_same(&k, &want_k, &format!("{ctx} pairs keys"));
            assert_eq!(v, want_v, "{ctx} pairs values");
            let (mut pk, mut pv) = (gpu.pinned_from(&keys).unwrap(), gpu.pinned_from(&values).unwrap());
            with_work_bytes(work, || gpu.sort_pairs(&mut pk[..], &mut pv[..], comp)).unwrap();
            assert_same(&pk, &want_k, &format!("{ctx} pinned pairs keys"));
            assert_eq!(&pv[..], &want_v[..], "{ctx} pinned pairs values");
            let mut k32 = keys.clone();
            let mut i32s = vec![u32::MAX; n];
            with_work_bytes(work, || gpu.sort_indices(&mut k32, &mut i32s, comp)).unwrap();
            assert_same(&k32, &want_k, &format!("{ctx} indices keys"));
            assert!(i32s.iter().zip(&want_v).all(|(&i, &w)| i as u64 == w), "{ctx} u32 indices");
            let mut k64 = keys.clone();
            let mut i64s = vec![u64::MAX; n];
            with_work_bytes(work, || gpu.sort_indices(&mut k64, &mut i64s, comp)).unwrap();
            assert_eq!(i64s, want_v, "{ctx} u64 indices");
        }
    }
}

#[test]
fn sorts_of_pairs_and_indices_equal_the_host_backend() {
    let Some(gpu) = gpu() else { return };
    check_sort_pairs::<u32, _>(gpu, Less, 21);
    check_sort_pairs::<f32, _>(gpu, Greater, 22);
    check_sort_pairs::<u64, _>(gpu, Less, 23);
    // 4- and 16-byte values.
    let mut rng = Rng(24);
    for work in WORK {
        for n in lengths(work, 20) {
            let keys: Vec<u32> = (0..n).map(|_| rng.below(100) as u32).collect();
            let v4: Vec<u32> = (0..n as u32).collect();
            let v16: Vec<[u32; 4]> = (0..n as u32).map(|i| [i, !i, i ^ 0x55, 7]).collect();
            let (mut want_k, mut want_v4) = (keys.clone(), v4.clone());
            host::sort_pairs(&mut want_k, &mut want_v4, Less).unwrap();
            let (mut k, mut v) = (keys.clone(), v4.clone());
            with_work_bytes(work, || gpu.sort_pairs(&mut k, &mut v, Less)).unwrap();
            assert_eq!((k, v), (want_k.clone(), want_v4.clone()), "u32 -> u32 n={n} work={work}");
            let (mut k, mut v) = (keys.clone(), v16.clone());
            with_work_bytes(work, || gpu.sort_pairs(&mut k, &mut v, Less)).unwrap();
            assert_eq!(k, want_k, "u32 -> [u32; 4] keys n={n} work={work}");
            assert!(v.iter().zip(&want_v4).all(|(x, &i)| *x == v16[i as usize]), "u32 -> [u32; 4] values n={n} work={work}");
        }
    }
}

fn check_merges<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, seed: u64) {
    let mut rng = Rng(seed);
    for work in WORK {
        let range = if work == 0 { 1 << 20 } else { work / std::mem::size_of::<K>() };
        let mut sizes = vec![(0, 0), (1, 0), (0, 1), (range - 1, 1), (range, range), (3 * range + 1, 4 * range - 5), (9 * range, 2)];
        sizes.push((rng.below(20 * range as u64) as usize, rng.below(20 * range as u64) as usize));
        for (i, &(na, nb)) in sizes.iter().enumerate() {
            let dist = [Dist::Uniform, Dist::FewDistinct, Dist::AlreadySorted, Dist::Specials][i % 4];
            let (a, b) = inputs::<K, C>(na, nb, dist, comp, rng.next());
            let mut want = vec![K::from_bits(0); na + nb + 3];
            host::merge_keys(&a, &b, &mut want, comp).unwrap();
            let ctx = format!("{} {na}+{nb} {dist:?} work={work}", std::any::type_name::<K>());
            let mut got = vec![K::from_bits(0); na + nb + 3];
            with_work_bytes(work, || gpu.merge_keys(&a, &b, &mut got, comp)).unwrap();
            assert_same(&got, &want, &format!("{ctx} pageable"));
            let (pa, pb) = (gpu.pinned_from(&a).unwrap(), gpu.pinned_from(&b).unwrap());
            let mut pout = gpu.pinned_from(&vec![K::from_bits(0); na + nb + 3]).unwrap();
            with_work_bytes(work, || gpu.merge_keys(&pa, &pb, &mut pout, comp)).unwrap();
            assert_same(&pout, &want, &format!("{ctx} pinned"));
            // Pairs: positions (A's, then B's offset by 2^40) as values show the stable order.
            let (av, bv): (Vec<u64>, Vec<u64>) = ((0..na as u64).collect(), (0..nb as u64).map(|j| j + (1 << 40)).collect());
            let (mut wk, mut wv) = (vec![K::from_bits(0); na + nb], vec![0u64; na + nb]);
            host::merge_pairs(&a, &av, &b, &bv, &mut wk, &mut wv, comp).unwrap();
            let (mut gk, mut gv) = (vec![K::from_bits(0); na + nb], vec![0u64; na + nb]);
            with_work_bytes(work, || gpu.merge_pairs(&a, &av, &b, &bv, &mut gk, &mut gv, comp)).unwrap();
            assert_same(&gk, &wk, &format!("{ctx} pairs keys"));
            assert_eq!(gv, wv, "{ctx} pairs values");
        }
    }
}

#[test]
fn merges_equal_the_host_backend() {
    let Some(gpu) = gpu() else { return };
    check_merges::<u32, _>(gpu, Less, 31);
    check_merges::<u64, _>(gpu, Greater, 32);
    check_merges::<f32, _>(gpu, Less, 33);
    let mut rng = Rng(34);
    let (mut a, mut b) = (hits(5000, &mut rng), hits(7001, &mut rng));
    host::sort_keys(&mut a, Less).unwrap();
    host::sort_keys(&mut b, Less).unwrap();
    let mut want = vec![Hit { score: 0.0, id: 0, x: 0 }; 12_001];
    host::merge_keys(&a, &b, &mut want, Less).unwrap();
    let mut got = want.clone();
    got.fill(Hit { score: 1.0, id: 1, x: 1 });
    with_work_bytes(4096, || gpu.merge_keys(&a, &b, &mut got, Less)).unwrap();
    assert_same(&got, &want, "Hit merge");
}

fn check_searches<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, seed: u64) {
    let mut rng = Rng(seed);
    for (nn, nh) in [(0, 5), (5, 0), (1, 1), (1000, 3000), (70_001, 20_000)] {
        let dist = if nn % 2 == 0 { Dist::FewDistinct } else { Dist::Uniform };
        let (needles, haystack) = inputs::<K, C>(nn, nh, dist, comp, rng.next());
        let ctx = format!("{} {nn} in {nh}", std::any::type_name::<K>());
        for bound in [Bound::Lower, Bound::Upper] {
            let (mut want, mut got) = (vec![7u32; nn + 2], vec![7u32; nn + 2]);
            host::sorted_search(&needles, &haystack, bound, &mut want, comp).unwrap();
            gpu.sorted_search(&needles, &haystack, bound, &mut got, comp).unwrap();
            assert_eq!(got, want, "{ctx} {bound:?}");
        }
        let (mut wl, mut wu, mut gl, mut gu) = (vec![0u64; nn], vec![0u64; nn], vec![0u64; nn], vec![0u64; nn]);
        host::sorted_search_range(&needles, &haystack, &mut wl, &mut wu, comp).unwrap();
        gpu.sorted_search_range(&needles, &haystack, &mut gl, &mut gu, comp).unwrap();
        assert_eq!((gl, gu), (wl, wu), "{ctx} range");
        let (mut wc, mut gc) = (vec![0u32; nn], vec![9u32; nn]);
        host::sorted_search_count(&needles, &haystack, &mut wc, comp).unwrap();
        gpu.sorted_search_count(&needles, &haystack, &mut gc, comp).unwrap();
        assert_eq!(gc, wc, "{ctx} count");
        let (mut wf, mut gf) = (vec![0u8; nn], vec![9u8; nn]);
        host::sorted_search_contains(&needles, &haystack, &mut wf, comp).unwrap();
        gpu.sorted_search_contains(&needles, &haystack, &mut gf, comp).unwrap();
        assert_eq!(gf, wf, "{ctx} contains");
    }
}

#[test]
fn searches_equal_the_host_backend() {
    let Some(gpu) = gpu() else { return };
    check_searches::<u32, _>(gpu, Less, 41);
    check_searches::<f64, _>(gpu, Greater, 42);
    check_searches::<i8, _>(gpu, Less, 43);
}

fn check_sets<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, seed: u64) {
    let mut rng = Rng(seed);
    for (na, nb) in [(0, 0), (0, 9), (9, 0), (1, 1), (3000, 2000), (100_000, 77_777)] {
        for dist in [Dist::FewDistinct, Dist::Uniform, Dist::AllEqual] {
            let (a, b) = inputs::<K, C>(na, nb, dist, comp, rng.next());
            let (av, bv): (Vec<u32>, Vec<u32>) = ((0..na as u32).collect(), (0..nb as u32).map(|j| j | 1 << 31).collect());
            for op in SetOperation::ALL {
                let ctx = format!("{} {op:?} {na}+{nb} {dist:?}", std::any::type_name::<K>());
                let max = op.max_len(na, nb);
                let mut want = vec![K::from_bits(0); max];
                let len = host::set_operation_keys(op, &a, &b, &mut want, comp).unwrap();
                want.truncate(len);
                let mut got = vec![K::from_bits(0); max];
                assert_eq!(gpu.set_operation_keys(op, &a, &b, &mut got, comp), Ok(len), "{ctx} len");
                assert_same(&got[..len], &want, &ctx);
                assert_eq!(gpu.set_operation_len(op, &a, &b, comp), Ok(len), "{ctx} len only");
                let (mut wk, mut wv) = (vec![K::from_bits(0); max], vec![0u32; max]);
                host::set_operation_pairs(op, &a, &av, &b, &bv, &mut wk, &mut wv, comp).unwrap();
                let (mut gk, mut gv) = (vec![K::from_bits(0); max], vec![0u32; max]);
                assert_eq!(gpu.set_operation_pairs(op, &a, &av, &b, &bv, &mut gk, &mut gv, comp), Ok(len), "{ctx} pairs len");
                assert_same(&gk[..len], &wk[..len], &format!("{ctx} pairs keys"));
                assert_eq!(gv[..len], wv[..len], "{ctx} pairs values");
                if len > 1 {
                    // A short output receives the result's first items and the full length.
                    let mut short = vec![K::from_bits(0); len - 1];
                    let err = gpu.set_operation_keys(op, &a, &b, &mut short, comp);
                    assert_eq!(err, Err(Error::OutputTooSmall { what: "set operation output", needed: len, got: len - 1 }), "{ctx} short");
                    assert_same(&short, &want[..len - 1], &format!("{ctx} short output"));
                }
            }
        }
    }
}

#[test]
fn set_operations_equal_the_host_backend() {
    let Some(gpu) = gpu() else { return };
    check_sets::<u32, _>(gpu, Less, 51);
    check_sets::<u64, _>(gpu, Greater, 52);
}

#[test]
fn segmented_sorts_equal_the_host_backend() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(61);
    for (n, avg) in [(0usize, 4usize), (1, 1), (10_000, 3), (50_000, 200), (300_000, 70_000)] {
        let mut offsets = vec![rng.below(3).min(n as u64) as usize];
        while *offsets.last().unwrap() < n.saturating_sub(5) {
            let next = *offsets.last().unwrap() + rng.below(2 * avg as u64 + 1) as usize;
            offsets.push(next.min(n - 5));
        }
        let keys: Vec<f32> = random_keys(n, &mut rng);
        let values: Vec<u64> = (0..n as u64).collect();
        let (mut wk, mut wv) = (keys.clone(), values.clone());
        host::sort_segments_pairs(&mut wk, &mut wv, &offsets, Less).unwrap();
        let (mut gk, mut gv) = (keys.clone(), values.clone());
        gpu.sort_segments_pairs(&mut gk, &mut gv, &offsets, Less).unwrap();
        assert_same(&gk, &wk, &format!("n={n} avg={avg} pairs keys"));
        assert_eq!(gv, wv, "n={n} avg={avg} pairs values");
        let mut gk = keys.clone();
        gpu.sort_segments_keys(&mut gk, &offsets, Less).unwrap();
        assert_same(&gk, &wk, &format!("n={n} avg={avg} keys"));
    }
}

/// Segmented sorts of host slices with many offsets (checked on the GPU, not on the host):
/// the host backend's error, the keys and values as they were.
#[test]
fn segmented_sorts_of_slices_check_many_offsets() {
    let Some(gpu) = gpu() else { return };
    let n = 100_000;
    let keys: Vec<u32> = (0..n as u32).rev().collect();
    let values: Vec<u64> = (0..n as u64).collect();
    let mut decreasing: Vec<usize> = (0..=n).step_by(10).collect();
    decreasing[7_000] = 5;
    let mut past_end: Vec<usize> = (0..=n).step_by(10).collect();
    *past_end.last_mut().unwrap() = n + 1;
    for offsets in [decreasing, past_end] {
        let want = host::sort_segments_keys(&mut keys.clone(), &offsets, Less).unwrap_err();
        let (mut k, mut v) = (keys.clone(), values.clone());
        assert_eq!(gpu.sort_segments_keys(&mut k, &offsets, Less).unwrap_err(), want);
        assert_eq!(gpu.sort_segments_pairs(&mut k, &mut v, &offsets, Less).unwrap_err(), want);
        assert!(k == keys && v == values, "{want}: the slices as they were");
    }
}

/// Bad input to every kind of call on `backend`: each call's error, after checking that the
/// call left its data as it was.
fn bad_input_errors(backend: &impl Backend) -> Vec<Error> {
    let keys: Vec<u32> = (0..1000).rev().collect();
    let mut errors = Vec::new();
    let (mut k, mut v) = (keys.clone(), vec![5u32; 999]);
    errors.push(backend.sort_pairs(&mut k, &mut v, Less).unwrap_err());
    assert_eq!((&k, &v), (&keys, &vec![5u32; 999]));
    let mut idx = vec![0u64; 10];
    errors.push(backend.sort_indices(&mut k, &mut idx, Less).unwrap_err());
    assert_eq!(k, keys);
    let mut out = vec![1u32; 1999];
    errors.push(backend.merge_keys(&keys, &keys, &mut out, Less).unwrap_err());
    assert_eq!(out, vec![1u32; 1999]);
    let mut short = vec![0u32; 3];
    errors.push(backend.sorted_search(&keys, &keys, Bound::Lower, &mut short, Less).unwrap_err());
    assert_eq!(short, [0, 0, 0]);
    let mut vout = vec![0u32; 5];
    errors.push(backend.set_operation_pairs(SetOperation::Union, &keys, &keys[1..], &keys, &keys, &mut out, &mut vout, Less).unwrap_err());
    errors.push(backend.sort_segments_keys(&mut k, &[0, 500, 400], Less).unwrap_err());
    errors.push(backend.sort_segments_keys(&mut k, &[0, 1001], Less).unwrap_err());
    assert_eq!(k, keys);
    let mut bulk = vec![7u32; 1003];
    errors.push(backend.bulk_insert(&keys, &[0u32, 9, 8], &[1, 2, 3], &mut bulk).unwrap_err());
    errors.push(backend.bulk_insert(&keys, &[0u32, 9, 1001], &[1, 2, 3], &mut bulk).unwrap_err());
    errors.push(backend.bulk_insert(&keys, &[0u32, 9, 1000], &[1, 2], &mut bulk).unwrap_err());
    errors.push(backend.bulk_insert(&keys, &[0u32, 9, 1000], &[1, 2, 3], &mut bulk[..1002]).unwrap_err());
    errors.push(backend.bulk_remove(&keys, &[3u64, 1000], &mut bulk).unwrap_err());
    errors.push(backend.bulk_remove(&keys, &[3u64, 3, 4], &mut bulk[..997]).unwrap_err());
    assert_eq!(bulk, vec![7u32; 1003]);
    errors
}

/// `argsort` on both backends: the positions of a stable sort, the keys left as they are.
fn check_argsort(backend: &impl Backend, keys: &[u32]) {
    let positions: Vec<u64> = (0..keys.len() as u64).collect();
    let (_, want) = mergepath::cpu::sort_pairs(keys, &positions, Greater);
    let mut got = vec![u64::MAX; keys.len()];
    let before = keys.to_vec();
    backend.argsort(keys, &mut got, Greater).unwrap();
    assert_eq!(got, want, "argsort on {}, n={}", backend.name(), keys.len());
    assert_eq!(keys, before);
}

#[test]
fn argsort_leaves_the_keys_on_both_backends() {
    let mut rng = Rng(0xa5);
    for n in [0usize, 1, 1000, 300_001] {
        let keys: Vec<u32> = (0..n).map(|_| rng.below(50) as u32).collect();
        check_argsort(&Host, &keys);
        if let Some(gpu) = gpu() {
            check_argsort(gpu, &keys);
        }
    }
}

#[test]
fn bad_input_is_the_same_error_on_both_backends_and_leaves_the_data_as_it_was() {
    let want = [
        Error::LengthMismatch { what: "values", expected: 1000, got: 999 },
        Error::LengthMismatch { what: "indices", expected: 1000, got: 10 },
        Error::OutputTooSmall { what: "out", needed: 2000, got: 1999 },
        Error::OutputTooSmall { what: "out", needed: 1000, got: 3 },
        Error::LengthMismatch { what: "a_values", expected: 1000, got: 999 },
        Error::InvalidArgument { argument: "offsets", reason: "must be non-decreasing: offsets[2] = 400 is below offsets[1] = 500".into() },
        Error::InvalidArgument { argument: "offsets", reason: "offsets[1] = 1001 is past the end of the 1000 keys".into() },
        Error::InvalidArgument { argument: "positions", reason: "not sorted: positions[2] = 8 is below positions[1] = 9".into() },
        Error::InvalidArgument { argument: "positions", reason: "position 1001 is past the end of the 1000 items".into() },
        Error::LengthMismatch { what: "values", expected: 3, got: 2 },
        Error::OutputTooSmall { what: "out", needed: 1003, got: 1002 },
        Error::InvalidArgument { argument: "positions", reason: "position 1000 is not one of the 1000 items".into() },
        Error::OutputTooSmall { what: "out", needed: 998, got: 997 },
    ];
    assert_eq!(bad_input_errors(&Host), want);
    let Some(gpu) = gpu() else { return };
    assert_eq!(bad_input_errors(gpu), want);
    // Uploads and downloads of the plain API through the staging buffers.
    let keys: Vec<u32> = (0..1000).rev().collect();
    let dev = gpu.upload(&keys).unwrap();
    let mut back = vec![0u32; 999];
    assert!(matches!(gpu.download_into(&dev, &mut back), Err(Error::LengthMismatch { .. })));
    let mut back = vec![0u32; 1000];
    gpu.download_into(&dev, &mut back).unwrap();
    assert_eq!(back, keys);
}

#[test]
fn a_memory_cap_too_small_for_any_run_is_an_error_before_any_copy() {
    if gpu().is_none() {
        return;
    }
    let capped = Gpu::new(0).unwrap().with_memory_limit(4096);
    let mut keys: Vec<u32> = (0..100_000u32).rev().collect();
    let before = keys.clone();
    match capped.sort_keys(&mut keys, Less) {
        Err(Error::TooLargeForDevice { needed, available }) => assert!(needed > available && available <= 4096, "{needed} {available}"),
        other => panic!("want TooLargeForDevice, got {other:?}"),
    }
    let mut values = vec![0u64; keys.len()];
    assert!(matches!(capped.sort_pairs(&mut keys, &mut values, Less), Err(Error::TooLargeForDevice { .. })));
    assert_eq!(keys, before, "keys left as they were");
}

/// Sorts larger than a memory cap: 2, 3 and 17 runs merged from host memory, keys with many
/// duplicates across runs (stability through positions as values and indices), pairs,
/// indices, a derived key with its two orders, against the host backend; the progress
/// callback counts up to its total.
#[test]
fn sorts_larger_than_a_memory_cap_merge_sorted_runs_from_host_memory() {
    if gpu().is_none() {
        return;
    }
    let mut rng = Rng(0xe17);
    for (runs, work, n) in [(2usize, 1usize << 16, 300_001usize), (3, 4096, 100_003), (17, 4096, 250_000), (3, 0, 3_000_017)] {
        let ctx = format!("runs={runs} work={work} n={n}");
        // Keys: few distinct values, so equal keys sit in every run.
        let keys: Vec<u32> = (0..n).map(|_| rng.below(1000) as u32).collect();
        let positions: Vec<u64> = (0..n as u64).collect();
        let (mut want_k, mut want_v) = (keys.clone(), positions.clone());
        host::sort_pairs(&mut want_k, &mut want_v, Less).unwrap();

        let gpu = capped_gpu(n, 4, 0, runs, work);
        let mut got = keys.clone();
        let mut seen: Vec<(u64, u64)> = Vec::new();
        with_work_bytes(work, || gpu.sort_keys_with_progress(&mut got, Less, |done, total| seen.push((done, total)))).unwrap();
        assert_eq!(got, want_k, "{ctx} keys");
        let total = 4 * 4 * n as u64;
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0) && seen.iter().all(|&(_, t)| t == total), "{ctx} progress");
        assert_eq!(seen.last().copied(), Some((total, total)), "{ctx} progress ends at the total");

        let gpu = capped_gpu(n, 4, 8, runs, work);
        let (mut k, mut v) = (keys.clone(), positions.clone());
        with_work_bytes(work, || gpu.sort_pairs(&mut k, &mut v, Less)).unwrap();
        assert_eq!((&k, &v), (&want_k, &want_v), "{ctx} pairs with positions");
        let mut k = keys.clone();
        let mut indices = vec![u64::MAX; n];
        with_work_bytes(work, || gpu.sort_indices(&mut k, &mut indices, Less)).unwrap();
        assert_eq!((&k, &indices), (&want_k, &want_v), "{ctx} u64 indices");

        let gpu = capped_gpu(n, 4, 4, runs, work);
        let mut k = keys.clone();
        let mut indices = vec![u32::MAX; n];
        with_work_bytes(work, || gpu.sort_indices(&mut k, &mut indices, Less)).unwrap();
        assert!(k == want_k && indices.iter().zip(&want_v).all(|(&i, &w)| i as u64 == w), "{ctx} u32 indices");

        let gpu = capped_gpu(n, std::mem::size_of::<Hit>(), 0, runs, work);
        check_hits(&gpu, &hits(n, &mut rng), work, &ctx);
    }
}

/// Whether `got` holds exactly the items of `want` (as multisets).
fn same_items<T: Ord + Clone>(got: &[T], want: &[T]) -> bool {
    let (mut g, mut w) = (got.to_vec(), want.to_vec());
    g.sort_unstable();
    w.sort_unstable();
    g == w
}

/// A failure injected at transfer step k (a staged piece or a direct copy) of host-slice sorts,
/// for k from the first upload to past the last download: in core and as 2 and 3 runs merged
/// from host memory, keys alone and pairs. Each call fails with an error (or succeeds where k
/// is past its last step), and the caller's slices hold exactly their items, each value still
/// with its key; the `Gpu` sorts correctly afterwards.
#[test]
fn a_failure_in_the_middle_of_a_pipeline_leaves_the_slices_their_items() {
    if gpu().is_none() {
        return;
    }
    let mut rng = Rng(0xfa11);
    let n = 200_003;
    let keys: Vec<u32> = (0..n).map(|_| rng.below(5000) as u32).collect();
    let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let pairs = |k: &[u32], v: &[u32]| -> Vec<(u32, u32)> { k.iter().copied().zip(v.iter().copied()).collect() };
    let want_pairs = pairs(&keys, &values);
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    for (runs, work) in [(1usize, 1usize << 16), (2, 1 << 16), (3, 4096)] {
        let keys_gpu = if runs == 1 { Gpu::new(0).unwrap() } else { capped_gpu(n, 4, 0, runs, work) };
        let pairs_gpu = if runs == 1 { Gpu::new(0).unwrap() } else { capped_gpu(n, 4, 4, runs, work) };
        let (mut failed, mut k) = (0, 0);
        loop {
            let ctx = format!("runs={runs} work={work}: failure at step {k}");
            let mut got = keys.clone();
            let result = {
                let _fail = mergepath::testing::fail_transfer_after(k);
                with_work_bytes(work, || keys_gpu.sort_keys(&mut got, Less))
            };
            assert!(same_items(&got, &keys), "{ctx}: keys lost or doubled");
            let (mut gk, mut gv) = (keys.clone(), values.clone());
            let pair_result = {
                let _fail = mergepath::testing::fail_transfer_after(k);
                with_work_bytes(work, || pairs_gpu.sort_pairs(&mut gk, &mut gv, Less))
            };
            assert!(same_items(&pairs(&gk, &gv), &want_pairs), "{ctx}: pairs lost, doubled or torn apart");
            match (result, pair_result) {
                (Ok(()), Ok(())) => {
                    assert_eq!(got, sorted, "{ctx}: a call that succeeded sorted");
                    break;
                }
                _ => failed += 1,
            }
            k += 1 + k / 4;
        }
        assert!(failed >= 3, "runs={runs}: only {failed} injected failures");
        let mut again = keys.clone();
        with_work_bytes(work, || keys_gpu.sort_keys(&mut again, Less)).unwrap();
        assert_eq!(again, sorted, "runs={runs}: a sort after the failures");
    }
}

/// A panic in the progress callback reaches the caller once the sort's work has finished; the
/// `Gpu` sorts again afterwards.
#[test]
fn merges_larger_than_a_memory_cap_run_in_short_ranges() {
    let Some(_) = gpu() else { return };
    // Two 16 M-key inputs under a 32 MiB cap: the ranges shrink to what the cap holds.
    let gpu = Gpu::new(0).unwrap().with_memory_limit(32 << 20);
    let mut rng = Rng(0x32);
    let mut half = |n: usize| {
        let mut v: Vec<u32> = (0..n).map(|_| rng.below(1 << 20) as u32).collect();
        v.sort_unstable();
        v
    };
    let (a, b) = (half(16 << 20), half((16 << 20) + 3));
    let (av, bv): (Vec<u32>, Vec<u32>) = ((0..a.len() as u32).collect(), (0..b.len() as u32).map(|i| i | 1 << 31).collect());
    let mut want = vec![0u32; a.len() + b.len()];
    host::merge_keys(&a, &b, &mut want, Less).unwrap();
    let mut out = vec![0u32; want.len()];
    gpu.merge_keys(&a, &b, &mut out, Less).unwrap();
    assert_same(&out, &want, "merge_keys under a 32 MiB cap");
    let (mut ok, mut ov) = (vec![0u32; want.len()], vec![0u32; want.len()]);
    gpu.merge_pairs(&a, &av, &b, &bv, &mut ok, &mut ov, Less).unwrap();
    let (mut hk, mut hv) = (vec![0u32; want.len()], vec![0u32; want.len()]);
    host::merge_pairs(&a, &av, &b, &bv, &mut hk, &mut hv, Less).unwrap();
    assert_eq!((ok, ov), (hk, hv), "merge_pairs under a 32 MiB cap");
}

#[test]
fn a_panic_in_the_progress_callback_is_resumed_after_the_work() {
    if gpu().is_none() {
        return;
    }
    let n = 200_000;
    let gpu = capped_gpu(n, 4, 0, 3, 4096);
    let keys: Vec<u32> = (0..n as u32).rev().collect();
    for panic_at in [1usize, 5, 40] {
        let mut got = keys.clone();
        let mut calls = 0;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_work_bytes(4096, || {
                gpu.sort_keys_with_progress(&mut got, Less, |_, _| {
                    calls += 1;
                    if calls == panic_at {
                        panic!("progress callback panics");
                    }
                })
            })
        }));
        assert!(caught.is_err(), "the panic reaches the caller (panic at call {panic_at})");
        let mut again = keys.clone();
        with_work_bytes(4096, || gpu.sort_keys(&mut again, Less)).unwrap();
        assert!(again.windows(2).all(|w| w[0] <= w[1]), "sorts after the panic");
    }
}

#[test]
fn uploads_and_downloads_round_trip_pageable_and_pinned() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(71);
    for n in [0usize, 1, 1_000_003, 9_000_000] {
        let data: Vec<u64> = (0..n).map(|_| rng.next()).collect();
        let dev = gpu.upload(&data).unwrap();
        assert_eq!(gpu.download(&dev).unwrap(), data, "n={n} pageable");
        let pinned = gpu.pinned_from(&data).unwrap();
        let dev = gpu.upload(&pinned).unwrap();
        let mut back = gpu.alloc_pinned::<u64>(n).unwrap();
        gpu.download_into(&dev, &mut back).unwrap();
        assert_eq!(&back[..], &data[..], "n={n} pinned");
    }
}

#[test]
fn two_gpus_on_different_streams_sort_host_data_at_once() {
    let Some(gpu) = gpu() else { return };
    let ctx = gpu.context().clone();
    let handles: Vec<Gpu> = (0..2).map(|_| Gpu::with_stream(ctx.new_stream().unwrap())).collect();
    let mut rng = Rng(81);
    let inputs: Vec<Vec<u64>> = (0..2).map(|_| (0..3_000_000).map(|_| rng.next() % 1000).collect()).collect();
    std::thread::scope(|s| {
        for (g, input) in handles.iter().zip(&inputs) {
            s.spawn(move || {
                for round in 0..3 {
                    let mut keys = input.clone();
                    let mut idx = vec![0u32; keys.len()];
                    with_work_bytes(if round == 0 { 0 } else { 1 << 20 }, || g.sort_indices(&mut keys, &mut idx, Less)).unwrap();
                    let mut want: Vec<(u64, u32)> = input.iter().copied().zip(0..).collect();
                    want.sort_by_key(|p| p.0);
                    assert!(keys.iter().zip(&idx).eq(want.iter().map(|p| (&p.0, &p.1))), "round {round}");
                }
            });
        }
    });
}

#[test]
fn calls_from_several_threads_share_one_gpu() {
    // One call at a time holds the `Gpu`'s staging buffers; calls made meanwhile copy directly.
    // Both paths must give the same results, whichever thread wins.
    let Some(gpu) = gpu() else { return };
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng(91 + t);
                for round in 0..4 {
                    let n = 3_000_000 + rng.below(1_000_000) as usize;
                    let input: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
                    let mut keys = input.clone();
                    gpu.sort_keys(&mut keys, Less).unwrap();
                    let mut want = input.clone();
                    want.sort_unstable();
                    assert!(keys == want, "thread {t} round {round}: sort of {n}");
                    let (a, b) = want.split_at(n / 3);
                    let mut merged = vec![0u32; n];
                    gpu.merge_keys(a, b, &mut merged, Less).unwrap();
                    assert!(merged == want, "thread {t} round {round}: merge of {n}");
                }
            });
        }
    });
}

/// The device calls do not check their positions: unsorted positions, or positions past the
/// array, still give every item once (insert), and a selection of the array's items without
/// an error or an access out of bounds (remove).
#[test]
fn bulk_calls_on_unchecked_device_positions_keep_their_promises() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0xb0);
    for (n, m) in [(1usize, 3usize), (1000, 300), (100_000, 40_000)] {
        let array: Vec<u32> = (0..n as u32).collect();
        let values: Vec<u32> = (n as u32..(n + m) as u32).collect();
        let positions: Vec<u32> = (0..m).map(|_| rng.below(2 * n as u64 + 2) as u32).collect();
        let (a, p, v) = (gpu.upload(&array).unwrap(), gpu.upload(&positions).unwrap(), gpu.upload(&values).unwrap());
        let mut out = gpu.alloc_zeros::<u32>(n + m).unwrap();
        mergepath::bulk_insert(gpu, &a, &p, &v, &mut out).unwrap();
        let mut items = gpu.download(&out).unwrap();
        items.sort_unstable();
        assert_eq!(items, (0..(n + m) as u32).collect::<Vec<_>>(), "insert n={n} m={m}: every item once");
        let mut kept = gpu.alloc_zeros::<u32>(n).unwrap();
        match mergepath::bulk_remove(gpu, &a, &p, &mut kept) {
            Ok(count) => {
                let kept = gpu.download(&kept).unwrap();
                assert!(count <= n && kept[..count].iter().all(|&x| (x as usize) < n), "remove n={n} m={m}: items of the array");
            }
            Err(e) => assert!(matches!(e, Error::OutputTooSmall { .. }), "remove n={n} m={m}: {e}"),
        }
    }
}

/// Joins of unsorted columns (device and host slices) give pairs of rows in range or
/// `NO_ROW`, never an error or an access out of bounds.
#[test]
fn joins_of_unsorted_columns_give_rows_in_range() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x10);
    // At most 10^8 pairs, whatever the search's unspecified ranges on unsorted columns.
    for (n, m) in [(1usize, 3usize), (1000, 300), (20_000, 5_000)] {
        let a: Vec<u32> = (0..n).map(|_| rng.below(64) as u32).collect();
        let b: Vec<u32> = (0..m).map(|_| rng.below(64) as u32).collect();
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        for kind in mergepath::JoinKind::ALL {
            let device = mergepath::join(gpu, &da, &db, kind, Less).unwrap().download(gpu).unwrap();
            for (rows_a, rows_b) in [device, gpu.join(&a, &b, kind, Less).unwrap()] {
                let in_range = |rows: &[i64], len: usize| rows.iter().all(|&r| r == mergepath::NO_ROW || (0..len as i64).contains(&r));
                assert!(rows_a.len() == rows_b.len() && in_range(&rows_a, n) && in_range(&rows_b, m), "{kind:?} join of {n} and {m} unsorted rows");
            }
        }
    }
}

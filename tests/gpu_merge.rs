//! GPU merge against the CPU oracle: every built-in key type and both comparators, lengths
//! around the tile size, the distributions of `common::Dist`, stability through source indices,
//! 4/8/16-byte values, partitions, API validation, and one merge of more than 2^31 keys.

mod common;

use common::{assert_same, gpu, inputs, Dist, Rng, TestKey, DISTS};
use mergepath::{cpu, tuning, Comparator, Error, Gpu, Greater, Less, MergeStrategy};

/// (a_len, b_len) pairs: empty, single, around the tile size, and random larger ones.
fn lengths(tile: usize, rng: &mut Rng) -> Vec<(usize, usize)> {
    let mut v = vec![(0, 0), (0, 1), (1, 0), (1, 1), (0, 5), (7, 0), (tile - 1, 0), (0, tile), (tile + 1, 0)];
    for total in [tile - 1, tile, tile + 1, 2 * tile - 1, 3 * tile + 1] {
        for a in [1, total / 3, total / 2, total - 1] {
            v.push((a, total - a));
        }
    }
    for _ in 0..4 {
        v.push((rng.below(20 * tile as u64) as usize, rng.below(20 * tile as u64) as usize));
    }
    v.push((100_003, 37));
    v.push((250_000, 262_144));
    v
}

fn tile_of<K: TestKey>(gpu: &Gpu) -> usize {
    tuning::merge_shape(gpu.compute_capability().unwrap(), std::mem::size_of::<K>()).tile()
}

/// Every strategy: the two-phase merge and the co-rank ladder, over lengths around the two-phase
/// tile and around the ladder's tile and per-CTA block.
fn check_merge_keys<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C) {
    let tile = tile_of::<K>(gpu);
    let arch = gpu.compute_capability().unwrap();
    let ladder_tile = tuning::ladder_tile(arch, std::mem::size_of::<K>());
    let ladder_block = ladder_tile * tuning::LADDER_BLOCK_TILES;
    let mut rng = Rng(0x5eed ^ tile as u64);
    let mut sizes = lengths(tile, &mut rng);
    for total in [ladder_tile - 1, ladder_tile + 1, ladder_block - 1, ladder_block + 1, 3 * ladder_block + 7] {
        sizes.extend([(total / 3, total - total / 3), (total - 1, 1), (1, total - 1)]);
    }
    for (a_len, b_len) in sizes {
        for dist in DISTS {
            let seed = rng.next();
            let (a, b) = inputs::<K, C>(a_len, b_len, dist, comp, seed);
            let want = cpu::merge_keys(&a, &b, comp);
            let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
            for strategy in MergeStrategy::ALL {
                // Poison the output so unwritten elements show.
                let mut out = gpu.upload(&vec![K::from_bits(0xdead_beef); a_len + b_len]).unwrap();
                mergepath::merge_keys_with(gpu, &da, &db, &mut out, comp, strategy).unwrap();
                let got = gpu.download(&out).unwrap();
                let ctx = format!("merge_keys {strategy:?} {} {} a={a_len} b={b_len} {dist:?} seed={seed:#x}", std::any::type_name::<K>(), C::NAME);
                assert_same(&got, &want, &ctx);
            }
        }
    }
}

macro_rules! merge_keys_tests {
    ($($name:ident: $t:ident),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            check_merge_keys::<$t, Less>(gpu, Less);
            check_merge_keys::<$t, Greater>(gpu, Greater);
        }
    )*};
}
merge_keys_tests!(merge_keys_u8: u8, merge_keys_u16: u16, merge_keys_u32: u32, merge_keys_u64: u64, merge_keys_i8: i8, merge_keys_i16: i16, merge_keys_i32: i32, merge_keys_i64: i64, merge_keys_f32: f32, merge_keys_f64: f64);

/// Values are the source positions (A: 0.., B: a_len..), so equal keys show whether A's came
/// first and each input kept its order: the oracle is stable, and the comparison is exact.
fn check_merge_pairs_stable<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C) {
    let tile = tile_of::<K>(gpu);
    let mut rng = Rng(0xabc);
    for (a_len, b_len) in lengths(tile, &mut rng) {
        for dist in [Dist::FewDistinct, Dist::AllEqual, Dist::Uniform] {
            let seed = rng.next();
            let (a, b) = inputs::<K, C>(a_len, b_len, dist, comp, seed);
            let av: Vec<u32> = (0..a_len as u32).collect();
            let bv: Vec<u32> = (a_len as u32..(a_len + b_len) as u32).collect();
            let (want_k, want_v) = cpu::merge_pairs(&a, &av, &b, &bv, comp);
            let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
            let (dav, dbv) = (gpu.upload(&av).unwrap(), gpu.upload(&bv).unwrap());
            let mut ok = gpu.upload(&vec![K::from_bits(0x5a5a); a_len + b_len]).unwrap();
            let mut ov = gpu.upload(&vec![u32::MAX; a_len + b_len]).unwrap();
            mergepath::merge_pairs(gpu, &da, &dav, &db, &dbv, &mut ok, &mut ov, comp).unwrap();
            let ctx = format!("merge_pairs {} {} a={a_len} b={b_len} {dist:?}", std::any::type_name::<K>(), C::NAME);
            assert_same(&gpu.download(&ok).unwrap(), &want_k, &ctx);
            assert_eq!(gpu.download(&ov).unwrap(), want_v, "{ctx}: values (source positions)");
        }
    }
}

#[test]
fn merge_pairs_is_stable() {
    let Some(gpu) = gpu() else { return };
    check_merge_pairs_stable::<u32, Less>(gpu, Less);
    check_merge_pairs_stable::<u32, Greater>(gpu, Greater);
    check_merge_pairs_stable::<i8, Less>(gpu, Less);
    check_merge_pairs_stable::<u64, Greater>(gpu, Greater);
    check_merge_pairs_stable::<f32, Less>(gpu, Less);
    check_merge_pairs_stable::<f64, Greater>(gpu, Greater);
}

/// 8- and 16-byte values travel whole (two and four words).
#[test]
fn merge_pairs_wide_values() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(7);
    for (a_len, b_len) in [(0, 3), (5000, 7001), (123_457, 98_765)] {
        let (a, b) = inputs::<u16, Less>(a_len, b_len, Dist::FewDistinct, Less, rng.next());
        let av8: Vec<u64> = (0..a_len).map(|_| rng.next()).collect();
        let bv8: Vec<u64> = (0..b_len).map(|_| rng.next()).collect();
        let av16: Vec<[u32; 4]> = av8.iter().map(|&x| [x as u32, (x >> 32) as u32, !(x as u32), 7]).collect();
        let bv16: Vec<[u32; 4]> = bv8.iter().map(|&x| [x as u32, (x >> 32) as u32, !(x as u32), 9]).collect();
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let mut ok = gpu.alloc_zeros::<u16>(a_len + b_len).unwrap();

        let (want_k, want_v) = cpu::merge_pairs(&a, &av8, &b, &bv8, Less);
        let mut ov = gpu.alloc_zeros::<u64>(a_len + b_len).unwrap();
        let (dav, dbv) = (gpu.upload(&av8).unwrap(), gpu.upload(&bv8).unwrap());
        mergepath::merge_pairs(gpu, &da, &dav, &db, &dbv, &mut ok, &mut ov, Less).unwrap();
        assert_eq!(gpu.download(&ok).unwrap(), want_k);
        assert_eq!(gpu.download(&ov).unwrap(), want_v, "8-byte values a={a_len} b={b_len}");

        let (_, want_v) = cpu::merge_pairs(&a, &av16, &b, &bv16, Less);
        let mut ov = gpu.alloc_zeros::<[u32; 4]>(a_len + b_len).unwrap();
        let (dav, dbv) = (gpu.upload(&av16).unwrap(), gpu.upload(&bv16).unwrap());
        mergepath::merge_pairs(gpu, &da, &dav, &db, &dbv, &mut ok, &mut ov, Less).unwrap();
        assert_eq!(gpu.download(&ov).unwrap(), want_v, "16-byte values a={a_len} b={b_len}");
    }
}

/// Views into larger buffers work, and `out` may be longer than the result (the rest untouched).
#[test]
fn merge_keys_views_and_long_output() {
    let Some(gpu) = gpu() else { return };
    let (a, b) = inputs::<i32, Less>(10_000, 20_000, Dist::Uniform, Less, 3);
    let mut ab = a.clone();
    ab.extend_from_slice(&b);
    let dab = gpu.upload(&ab).unwrap();
    let mut out = gpu.upload(&vec![-1i32; 40_000]).unwrap();
    let mut out_view = out.slice_mut(5_000..);
    mergepath::merge_keys(gpu, &dab.slice(..10_000), &dab.slice(10_000..), &mut out_view, Less).unwrap();
    let got = gpu.download(&out).unwrap();
    assert!(got[..5_000].iter().chain(&got[35_000..]).all(|&x| x == -1), "outside the result untouched");
    assert_eq!(got[5_000..35_000], cpu::merge_keys(&a, &b, Less)[..]);
}

#[test]
fn partitions_match_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(11);
    for (a_len, b_len, spacing) in [(0, 0, 1), (0, 100, 7), (1000, 0, 64), (33_333, 44_444, 1000), (1 << 20, 3 << 18, 3840), (5, 5, 1)] {
        for dist in DISTS {
            let (a, b) = inputs::<u32, Greater>(a_len, b_len, dist, Greater, rng.next());
            let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
            let parts = mergepath::merge_path_partitions(gpu, &da, &db, spacing, Greater).unwrap();
            let want: Vec<i64> = mergepath::partition::merge_path_partitions_cpu(&a, &b, spacing, |x, y| y < x)
                .into_iter()
                .map(|p| p as i64)
                .collect();
            assert_eq!(gpu.download(&parts).unwrap(), want, "a={a_len} b={b_len} spacing={spacing} {dist:?}");
        }
    }
}

#[test]
fn api_errors() {
    let Some(gpu) = gpu() else { return };
    let a = gpu.upload(&[1u32, 2, 3]).unwrap();
    let b = gpu.upload(&[2u32, 4]).unwrap();
    let mut short = gpu.alloc_zeros::<u32>(4).unwrap();
    assert_eq!(
        mergepath::merge_keys(gpu, &a, &b, &mut short, Less),
        Err(Error::OutputTooSmall { what: "out", needed: 5, got: 4 })
    );
    let av = gpu.upload(&[1u32, 2]).unwrap();
    let bv = gpu.upload(&[1u32, 2]).unwrap();
    let mut ok = gpu.alloc_zeros::<u32>(5).unwrap();
    let mut ov = gpu.alloc_zeros::<u32>(5).unwrap();
    assert_eq!(
        mergepath::merge_pairs(gpu, &a, &av, &b, &bv, &mut ok, &mut ov, Less),
        Err(Error::LengthMismatch { what: "a_values", expected: 3, got: 2 })
    );
    assert_eq!(
        mergepath::merge_path_partitions(gpu, &a, &b, 0, Less).map(|_| ()),
        Err(Error::InvalidArgument { argument: "spacing", reason: "must be positive, got 0".into() })
    );
    // A buffer of another context is refused before anything is launched.
    let other = mergepath::cudarc::driver::CudaContext::new_non_primary(0, 0).unwrap();
    let foreign = other.default_stream().clone_htod(&[5u32, 6]).unwrap();
    assert_eq!(mergepath::merge_keys(gpu, &a, &foreign, &mut ok, Less), Err(Error::WrongContext { what: "b" }));
}

/// More than 2^31 keys: 64-bit counts end to end. u8 keys keep it to ~4.4 GB of device memory;
/// the result is checked run by run against the key counts.
#[test]
fn huge_merge_beyond_2_pow_31() {
    let Some(gpu) = gpu() else { return };
    let (a_len, b_len) = (1_100_000_007usize, 1_100_000_013usize);
    assert!(a_len + b_len > 1 << 31);
    let mut rng = Rng(99);
    let runs = |len: usize, rng: &mut Rng| -> (Vec<u8>, [usize; 256]) {
        let mut counts = [0usize; 256];
        let mut left = len;
        for (v, c) in counts.iter_mut().enumerate() {
            *c = if v == 255 { left } else { (rng.below(2 * (len / 256) as u64) as usize).min(left) };
            left -= *c;
        }
        let mut keys = Vec::with_capacity(len);
        for (v, &c) in counts.iter().enumerate() {
            keys.resize(keys.len() + c, v as u8);
        }
        (keys, counts)
    };
    let (a, ca) = runs(a_len, &mut rng);
    let (b, cb) = runs(b_len, &mut rng);
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    drop((a, b));
    let mut out = gpu.alloc_zeros::<u8>(a_len + b_len).unwrap();
    mergepath::merge_keys(gpu, &da, &db, &mut out, Less).unwrap();
    let got = gpu.download(&out).unwrap();
    let mut pos = 0;
    for v in 0..256 {
        let n = ca[v] + cb[v];
        if let Some(i) = got[pos..pos + n].iter().position(|&x| x as usize != v) {
            panic!("key {v}: wrong value at {}", pos + i);
        }
        pos += n;
    }
    assert_eq!(pos, a_len + b_len);
}

/// Unsorted inputs (a caller's mistake) give unspecified results but stay inside every buffer,
/// and merges keep their items: the two-phase merge (`merge_keys`, `merge_pairs`) gives an
/// unspecified order of the same keys, each value with its key; the co-rank ladder strategies
/// keys from the inputs; sorted search gives in-range indices and the set operations keys from
/// the inputs. Run under compute-sanitizer to see no access goes out of bounds (the merge path
/// searches of two diagonals can cross on unsorted data). A sorted merge afterwards is exact.
#[test]
fn unsorted_inputs_stay_in_bounds() {
    let Some(gpu) = gpu() else { return };
    let tile = tile_of::<u32>(gpu);
    let mut rng = Rng(77);
    for (na, nb) in [(tile + 5, 3 * tile - 1), (100_000, 37_000), (1, 2 * tile), (5 * tile, 0)] {
        let a: Vec<u32> = (0..na).map(|_| rng.below(1000) as u32).collect();
        let b: Vec<u32> = (0..nb).map(|_| rng.below(1000) as u32).collect();
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let from_inputs = |got: &[u32]| got.iter().all(|k| a.contains(k) || b.contains(k));
        let sorted = |mut v: Vec<u32>| {
            v.sort_unstable();
            v
        };
        let all_keys = sorted([a.clone(), b.clone()].concat());
        for strategy in MergeStrategy::ALL {
            let mut out = gpu.alloc_zeros::<u32>(na + nb).unwrap();
            mergepath::merge_keys_with(gpu, &da, &db, &mut out, Less, strategy).unwrap();
            let got = gpu.download(&out).unwrap();
            assert!(from_inputs(&got), "{strategy:?} {na} {nb}");
            if strategy == MergeStrategy::TwoPhase {
                assert!(sorted(got) == all_keys, "the same keys: {na} {nb}");
            }
        }
        // Values: each item's input (1 or 2) and position, so each must come with its key.
        let tagged = |tag: u64, n: usize| (0..n as u64).map(|i| tag << 32 | i).collect::<Vec<u64>>();
        let (va, vb) = (gpu.upload(&tagged(1, na)).unwrap(), gpu.upload(&tagged(2, nb)).unwrap());
        let (mut ok, mut ov) = (gpu.alloc_zeros::<u32>(na + nb).unwrap(), gpu.alloc_zeros::<u64>(na + nb).unwrap());
        mergepath::merge_pairs(gpu, &da, &va, &db, &vb, &mut ok, &mut ov, Less).unwrap();
        let mut got: Vec<(u32, u64)> = gpu.download(&ok).unwrap().into_iter().zip(gpu.download(&ov).unwrap()).collect();
        got.sort_unstable();
        let mut want: Vec<(u32, u64)> = a.iter().copied().zip(tagged(1, na)).chain(b.iter().copied().zip(tagged(2, nb))).collect();
        want.sort_unstable();
        assert!(got == want, "pairs keep their keys: {na} {nb}");
        let mut idx = gpu.alloc_zeros::<u32>(na).unwrap();
        for bound in [mergepath::Bound::Lower, mergepath::Bound::Upper] {
            mergepath::sorted_search(gpu, &da, &db, bound, &mut idx, Less).unwrap();
            assert!(gpu.download(&idx).unwrap().iter().all(|&i| i as usize <= nb), "search {na} {nb}");
        }
        for op in mergepath::SetOperation::ALL {
            let mut out = gpu.alloc_zeros::<u32>(op.max_len(na, nb)).unwrap();
            // The length is unspecified too: it may pass max_len (OutputTooSmall, the output
            // then holding its first max_len keys).
            let len = match mergepath::set_operation_keys(gpu, op, &da, &db, &mut out, Less).unwrap().read(gpu) {
                Ok(len) => len,
                Err(Error::OutputTooSmall { got, .. }) => got,
                Err(e) => panic!("{op:?} {na} {nb}: {e}"),
            };
            assert!(from_inputs(&gpu.download(&out).unwrap()[..len]), "{op:?} {na} {nb}");
        }
    }
    // The guard the unsorted merges tripped is left as it was: a sorted merge after is exact.
    let (a, b) = inputs::<u32, _>(100_000, 37_000, Dist::Uniform, Less, 5);
    let mut out = gpu.alloc_zeros::<u32>(a.len() + b.len()).unwrap();
    mergepath::merge_keys(gpu, &gpu.upload(&a).unwrap(), &gpu.upload(&b).unwrap(), &mut out, Less).unwrap();
    assert_same(&gpu.download(&out).unwrap(), &cpu::merge_keys(&a, &b, Less), "a sorted merge after unsorted ones");
}

/// Merges from several threads on one `Gpu`, unsorted and sorted inputs mixed: each call keeps
/// its items and a sorted one is exact (a guard's reports and fallback stay with their call).
#[test]
fn merges_from_threads_keep_their_items() {
    let Some(gpu) = gpu() else { return };
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let mut rng = Rng(100 + t);
                for round in 0..24 {
                    let (na, nb) = (rng.below(40_000) as usize + 1, rng.below(40_000) as usize);
                    let mut a: Vec<u32> = (0..na).map(|_| rng.below(1000) as u32).collect();
                    let mut b: Vec<u32> = (0..nb).map(|_| rng.below(1000) as u32).collect();
                    if round % 2 == 0 {
                        a.sort_unstable();
                        b.sort_unstable();
                    }
                    let mut out = gpu.alloc_zeros::<u32>(na + nb).unwrap();
                    mergepath::merge_keys(gpu, &gpu.upload(&a).unwrap(), &gpu.upload(&b).unwrap(), &mut out, Less).unwrap();
                    let mut got = gpu.download(&out).unwrap();
                    if round % 2 == 0 {
                        assert_same(&got, &cpu::merge_keys(&a, &b, Less), &format!("thread {t} round {round}: sorted"));
                    }
                    got.sort_unstable();
                    let mut want = [a, b].concat();
                    want.sort_unstable();
                    assert!(got == want, "thread {t} round {round}: the same keys");
                }
            });
        }
    });
}


//! Multiset operations on the GPU against the CPU oracle (C++'s std::set_* loop): all four
//! operations, every built-in key type and both comparators, keys, pairs (values are source
//! positions, so the copy each output comes from is checked) and lengths only; empty and
//! one-sided inputs, all-equal keys, few distinct keys (long runs across tiles), disjoint
//! ranges, identical inputs, NaN and signed zeros, tile +- 1, up to 2^26 items; truncated
//! outputs. Skips without a GPU (fails with MERGEPATH_REQUIRE_GPU=1).

mod common;
use common::{assert_same, gpu, inputs, Dist, Rng, TestKey, DISTS};
use mergepath::{cpu, tuning, Comparator, Error, Gpu, Greater, Less, SetOperation};

/// Values that name their source: A's item i carries i, B's item j carries 2^40 + j.
const B_TAG: u64 = 1 << 40;

fn check<K: TestKey, C: Comparator<K>>(gpu: &Gpu, a: &[K], b: &[K], comp: C, pairs: bool, ctx: &str) {
    let (da, db) = (gpu.upload(a).unwrap(), gpu.upload(b).unwrap());
    let a_vals: Vec<u64> = (0..a.len() as u64).collect();
    let b_vals: Vec<u64> = (0..b.len() as u64).map(|j| B_TAG + j).collect();
    let (dav, dbv) = (gpu.upload(&a_vals).unwrap(), gpu.upload(&b_vals).unwrap());
    for op in SetOperation::ALL {
        let ctx = format!("{ctx} {op:?}");
        let want = cpu::set_operation_keys(op, a, b, comp);
        let cap = op.max_len(a.len(), b.len());
        // A guard item past the result must stay untouched.
        let mut out = gpu.upload(&vec![K::from_bits(7); cap + 1]).unwrap();
        let len = mergepath::set_operation_keys(gpu, op, &da, &db, &mut out, comp).unwrap();
        let n = len.read(gpu).unwrap();
        let got = gpu.download(&out).unwrap();
        assert_same(&got[..n], &want, &ctx);
        assert_same(&got[n..n + 1], &[K::from_bits(7)], &format!("{ctx}: past the result"));
        let only = mergepath::set_operation_len(gpu, op, &da, &db, comp).unwrap();
        assert_eq!(only.read(gpu).unwrap(), want.len(), "{ctx}: length only");
        if pairs {
            let (wk, wv) = cpu::set_operation_pairs(op, a, &a_vals, b, &b_vals, comp);
            let (mut ok, mut ov) = (gpu.upload(&vec![K::from_bits(0); wk.len()]).unwrap(), gpu.alloc_zeros::<u64>(wk.len()).unwrap());
            let len = mergepath::set_operation_pairs(gpu, op, &da, &dav, &db, &dbv, &mut ok, &mut ov, comp).unwrap();
            assert_eq!(len.read(gpu).unwrap(), wk.len(), "{ctx}: pairs length");
            assert_same(&gpu.download(&ok).unwrap(), &wk, &format!("{ctx}: pair keys"));
            assert!(gpu.download(&ov).unwrap() == wv, "{ctx}: pair values (sources)");
        }
    }
}

fn check_type<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, pairs: bool, big: bool) {
    let tile = tuning::sets_shape(gpu.compute_capability().unwrap(), std::mem::size_of::<K>()).tile();
    let mut rng = Rng(0x5e75 ^ tile as u64);
    let mut sizes = vec![(0, 0), (0, 9), (9, 0), (1, 1), (tile - 1, 1), (1, tile + 1), (tile, tile), (tile + 1, tile - 1), (3 * tile + 1, 2 * tile - 1)];
    sizes.extend((0..3).map(|_| (rng.below(200_000) as usize, rng.below(200_000) as usize)));
    if big {
        sizes.push((1 << 22, (1 << 22) + tile + 1));
    }
    for (n, m) in sizes {
        for dist in DISTS {
            let seed = rng.next();
            let (a, b) = inputs::<K, C>(n, m, dist, comp, seed);
            let ctx = format!("{} {} a={n} b={m} {dist:?} seed={seed:#x}", std::any::type_name::<K>(), C::NAME);
            check(gpu, &a, &b, comp, pairs, &ctx);
            if dist == Dist::Uniform || dist == Dist::FewDistinct {
                check(gpu, &a, &a, comp, pairs, &format!("{ctx} identical"));
            }
        }
    }
}

macro_rules! set_tests {
    ($($name:ident: $t:ident $pairs:expr, $big:expr);*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            check_type::<$t, Less>(gpu, Less, $pairs, $big);
            check_type::<$t, Greater>(gpu, Greater, false, false);
        }
    )*};
}
set_tests!(sets_u8: u8 false, false; sets_u16: u16 true, false; sets_u32: u32 true, true; sets_u64: u64 true, true; sets_i8: i8 false, false; sets_i16: i16 false, false;
           sets_i32: i32 false, false; sets_i64: i64 false, false; sets_f32: f32 true, false; sets_f64: f64 false, false);

/// 2^26 items (2^25 per side) of random u32 keys with many matches, keys and pairs.
#[test]
fn sets_u32_two_to_the_26() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(26);
    let mut draw = || {
        let mut v: Vec<u32> = (0..1usize << 25).map(|_| rng.below(1 << 26) as u32).collect();
        v.sort_unstable();
        v
    };
    let (a, b) = (draw(), draw());
    check(gpu, &a, &b, Less, true, "u32 2^25 + 2^25");
}

/// 4- and 16-byte values ride along like 8-byte ones.
#[test]
fn sets_value_sizes() {
    let Some(gpu) = gpu() else { return };
    let (a, b) = inputs::<u32, Less>(50_000, 70_000, Dist::FewDistinct, Less, 3);
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    let a4: Vec<u32> = (0..a.len() as u32).collect();
    let b4: Vec<u32> = (0..b.len() as u32).map(|j| j | 1 << 31).collect();
    let a16: Vec<[u32; 4]> = a4.iter().map(|&i| [i, !i, i ^ 5, 9]).collect();
    let b16: Vec<[u32; 4]> = b4.iter().map(|&i| [i, !i, i ^ 5, 9]).collect();
    for op in SetOperation::ALL {
        let (wk, w4) = cpu::set_operation_pairs(op, &a, &a4, &b, &b4, Less);
        let (mut ok, mut ov) = (gpu.alloc_zeros::<u32>(wk.len()).unwrap(), gpu.alloc_zeros::<u32>(wk.len()).unwrap());
        let (da4, db4) = (gpu.upload(&a4).unwrap(), gpu.upload(&b4).unwrap());
        assert_eq!(mergepath::set_operation_pairs(gpu, op, &da, &da4, &db, &db4, &mut ok, &mut ov, Less).unwrap().read(gpu).unwrap(), wk.len());
        assert!(gpu.download(&ok).unwrap() == wk && gpu.download(&ov).unwrap() == w4, "{op:?} 4-byte values");
        let (_, w16) = cpu::set_operation_pairs(op, &a, &a16, &b, &b16, Less);
        let mut ov16 = gpu.alloc_zeros::<[u32; 4]>(wk.len()).unwrap();
        let (da16, db16) = (gpu.upload(&a16).unwrap(), gpu.upload(&b16).unwrap());
        mergepath::set_operation_pairs(gpu, op, &da, &da16, &db, &db16, &mut ok, &mut ov16, Less).unwrap();
        assert!(gpu.download(&ov16).unwrap() == w16, "{op:?} 16-byte values");
    }
}

/// Outputs shorter than the result: its first items are written, nothing past the buffer, and
/// reading the length reports the shortfall.
#[test]
fn sets_truncated_output() {
    let Some(gpu) = gpu() else { return };
    let (a, b) = inputs::<u32, Less>(100_000, 90_000, Dist::Uniform, Less, 11);
    let want = cpu::set_operation_keys(SetOperation::Union, &a, &b, Less);
    let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
    let mut backing = gpu.upload(&vec![u32::MAX; 10_001]).unwrap();
    let len = {
        let mut out = backing.slice_mut(..10_000);
        mergepath::set_operation_keys(gpu, SetOperation::Union, &da, &db, &mut out, Less).unwrap()
    };
    assert_eq!(len.read(gpu), Err(Error::OutputTooSmall { what: "set operation output", needed: want.len(), got: 10_000 }));
    let got = gpu.download(&backing).unwrap();
    assert!(got[..10_000] == want[..10_000], "the result's first items");
    assert_eq!(got[10_000], u32::MAX, "nothing past the buffer");
    let mut empty = gpu.alloc_zeros::<u32>(0).unwrap();
    let len = mergepath::set_operation_keys(gpu, SetOperation::Intersection, &da, &db, &mut empty, Less).unwrap();
    let n = cpu::set_operation_keys(SetOperation::Intersection, &a, &b, Less).len();
    assert_eq!(len.read(gpu).map_err(|e| e.to_string()), if n == 0 { Ok(0) } else { Err(Error::OutputTooSmall { what: "set operation output", needed: n, got: 0 }.to_string()) });
}

#[test]
fn sets_errors() {
    let Some(gpu) = gpu() else { return };
    let a = gpu.upload(&[1u32, 2, 3]).unwrap();
    let b = gpu.upload(&[2u32]).unwrap();
    let (av, bv) = (gpu.upload(&[0u32; 2]).unwrap(), gpu.upload(&[0u32; 1]).unwrap());
    let (mut ok, mut ov) = (gpu.alloc_zeros::<u32>(4).unwrap(), gpu.alloc_zeros::<u32>(4).unwrap());
    assert!(matches!(
        mergepath::set_operation_pairs(gpu, SetOperation::Union, &a, &av, &b, &bv, &mut ok, &mut ov, Less),
        Err(Error::LengthMismatch { what: "a_values", expected: 3, got: 2 })
    ));
    // A buffer of another context is refused before anything is launched.
    let other = mergepath::cudarc::driver::CudaContext::new_non_primary(0, 0).unwrap();
    let foreign = other.default_stream().clone_htod(&[5u32, 6]).unwrap();
    assert!(matches!(
        mergepath::set_operation_len(gpu, SetOperation::Union, &a, &foreign, Less).map(|_| ()),
        Err(Error::WrongContext { what: "b" })
    ));
    // Empty inputs: a zero length, nothing launched past the allocation.
    let empty = gpu.alloc_zeros::<u32>(0).unwrap();
    for op in SetOperation::ALL {
        assert_eq!(mergepath::set_operation_len(gpu, op, &empty, &empty, Less).unwrap().read(gpu), Ok(0));
    }
}

//! `#[derive(Key)]`: derived comparators on the CPU (here and in CI), and sorts and merges of
//! derived structs on the GPU against the CPU oracle, stability included; array fields and
//! tuple structs against Rust's own orders.

mod common;
#[path = "common/hit.rs"]
mod hit;
use common::{assert_same, gpu, Rng};
use hit::{hits, ByX, Hit};
use mergepath::testing::{self, Backend};
use mergepath::{cpu, Comparator, Greater, Less};
use proptest::test_runner::{Config, TestError, TestRunner};

/// The benchmark key: (x asc, id asc).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "x, id")]
struct Point {
    x: f32,
    id: i32,
}

/// An order wider than 64 bits (compared field by field on the GPU).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "a desc, b, c desc")]
struct Wide {
    a: i64,
    b: f32,
    c: i16,
    d: u16,
}

/// An order of 24 bits, signed fields descending and ascending (packed into 32 bits on the GPU).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "w desc, hi")]
struct Small {
    lo: u8,
    hi: i8,
    w: i16,
}

/// A 16-byte hash key: a tuple struct of one array, ordered as Rust orders `[u8; 16]`.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
struct Uuid([u8; 16]);

/// A fixed-width name descending, then a count; `tag` is carried, never compared.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "name desc, count")]
struct Named {
    name: [u8; 10],
    tag: u16,
    count: u32,
}

/// A signed byte array descending, then a count: compared four bytes at a time on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "s desc, t")]
struct Signed {
    s: [i8; 12],
    t: u32,
}

/// An array whose order covers all 8 bytes: packed into one u64 on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "0 desc")]
struct Quad([i16; 4]);

/// A 64-byte row by (score desc, id): wider than the key tiles, so a record sorted by its
/// packed order and gathered; `seq` and `payload` carried. `ByTail` orders it by its last byte
/// (a custom comparator on a record: its kernels compare the records through their addresses).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
#[key(comparator(ByTail, cuda = "a.payload[47] < b.payload[47]", rust = "|a, b| a.payload[47] < b.payload[47]"))]
struct Row {
    score: f32,
    id: u32,
    seq: u64,
    payload: [u8; 48],
}

/// A 32-byte record whose 64-bit order has a float descending, a signed integer and a signed
/// array: every kind of element the packing reads.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "c desc, a, b")]
struct Mixed {
    a: i16,
    b: [i8; 2],
    c: f32,
    seq: u64,
    rest: [u64; 2],
}

/// A 24-byte record whose order, three 8-byte fields, takes 192 bits: three packed words, the
/// first sorted whole, the others inside the runs tied on the words before.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "c desc, a, b")]
struct ThreeWords {
    a: u64,
    b: i64,
    c: f64,
}

/// A 32-byte record ordered by a 12-byte name and an id: 13 elements, 128 bits, the name's
/// last four bytes sharing the second word with the id.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "name, id")]
struct Labelled {
    name: [u8; 12],
    id: u32,
    payload: [u8; 16],
}

/// A newtype with a comparator of its own (CUDA names a tuple struct's fields f0, f1, ...).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(comparator(ByPopcount, cuda = "__popc(a.f0) < __popc(b.f0)", rust = "|a, b| a.0.count_ones() < b.0.count_ones()"))]
struct Bits(u32);

#[test]
fn array_fields_and_tuple_structs_on_the_cpu() {
    let u = |b0: u8, b15: u8| {
        let mut a = [7u8; 16];
        a[0] = b0;
        a[15] = b15;
        Uuid(a)
    };
    assert!(Less.is_less(&u(1, 9), &u(2, 0)) && Less.is_less(&u(1, 0), &u(1, 9)) && !Less.is_less(&u(1, 9), &u(1, 9)));
    assert!(Greater.is_less(&u(2, 0), &u(1, 9)));
    let named = |name: &[u8], tag, count| {
        let mut n = [0u8; 10];
        n[..name.len()].copy_from_slice(name);
        Named { name: n, tag, count }
    };
    assert!(Less.is_less(&named(b"bob", 0, 5), &named(b"alice", 0, 1)), "name descending");
    assert!(Less.is_less(&named(b"bob", 9, 1), &named(b"bob", 0, 2)), "then count ascending; tag ignored");
    assert!(!Less.is_less(&named(b"bob", 9, 1), &named(b"bob", 0, 1)) && !Less.is_less(&named(b"bob", 0, 1), &named(b"bob", 9, 1)));
    assert!(Less.is_less(&Quad([3, 0, 0, 0]), &Quad([2, 9, 9, 9])) && Less.is_less(&Quad([2, 0, 0, 1]), &Quad([2, 0, 0, 0])));
    assert_eq!(<Less as Comparator<Quad>>::PACKED_U64, Some(false), "an order over every bit of an 8-byte array");
    assert_eq!(<Less as Comparator<Uuid>>::PACKED_U64, None);
    // Keys over 8 bytes sort by their order packed into words: a [u8; 16] takes two, byte 0 highest.
    let words = <Less as Comparator<Uuid>>::SORT_BY_WORDS.expect("a 16-byte key sorts by packed words");
    assert_eq!((words.words(), words.descending, words.fields.len()), (2, false, 16));
    let mut bytes = [0u8; 16];
    bytes[0] = 0xab;
    bytes[8] = 0xcd;
    assert_eq!((words.pack(&bytes, 0), words.pack(&bytes, 1)), (0xab << 56, 0xcd << 56));
    assert!(<Greater as Comparator<Uuid>>::SORT_BY_WORDS.is_some_and(|w| w.descending));
    assert_eq!(<Less as Comparator<Quad>>::SORT_BY_WORDS, None, "8-byte keys sort as they are (or packed into one u64)");
    assert_eq!(<ByPopcount as Comparator<Bits>>::SORT_BY_WORDS, None, "custom comparators compare keys");
    assert!(ByPopcount.is_less(&Bits(0b1000), &Bits(0b11)) && !ByPopcount.is_less(&Bits(0b11), &Bits(0b101)));
    assert_eq!(<ByPopcount as Comparator<Bits>>::NAME, "ByPopcount");
}

/// Sorts of array keys and tuple structs on the GPU against Rust's own (stable) sorts: `[u8; 16]`
/// keys in Rust's order and its reverse, a fixed-width name descending then a count (with a
/// carried tag), a packed `[i16; 4]`, and a newtype by its popcount (stability shows: keys equal
/// by popcount stay in input order).
#[test]
fn sort_array_keys_and_tuple_structs() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0xa77);
    for n in [0usize, 1, 1000, 70_001, (1 << 20) + 3] {
        // Few distinct prefixes, so the later bytes decide often.
        let uuids: Vec<Uuid> = (0..n)
            .map(|_| {
                let (r, s) = (rng.next(), rng.next());
                let mut a = [0u8; 16];
                a[..8].copy_from_slice(&(r % 5).to_le_bytes());
                a[8..].copy_from_slice(&s.to_le_bytes());
                Uuid(a)
            })
            .collect();
        let mut want = uuids.clone();
        want.sort_by_key(|u| u.0);
        let mut d = gpu.upload(&uuids).unwrap();
        mergepath::sort_keys(gpu, &mut d, Less).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "Uuid n={n}");
        // Random ones: the first eight bytes decide (the first word's sort alone).
        let random: Vec<Uuid> = (0..n).map(|_| Uuid(((rng.next() as u128) << 64 | rng.next() as u128).to_le_bytes())).collect();
        let mut want_random = random.clone();
        want_random.sort_by_key(|u| u.0);
        let mut d = gpu.upload(&random).unwrap();
        mergepath::sort_keys(gpu, &mut d, Less).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want_random, "random Uuid n={n}");
        want.reverse();
        let mut d = gpu.upload(&uuids).unwrap();
        mergepath::sort_keys(gpu, &mut d, Greater).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "Uuid Greater n={n}");

        // Few distinct bytes, negative ones among them, so every word decides sometimes.
        let signed: Vec<Signed> = (0..n)
            .map(|_| {
                let r = rng.next();
                let mut s = [0i8; 12];
                s[(r % 12) as usize] = ((r >> 8) % 5) as i8 - 2;
                Signed { s, t: (r >> 16) as u32 % 3 }
            })
            .collect();
        let mut want = signed.clone();
        want.sort_by_key(|k| (std::cmp::Reverse(k.s), k.t));
        let mut d = gpu.upload(&signed).unwrap();
        mergepath::sort_keys(gpu, &mut d, Less).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "Signed n={n}");

        let names: Vec<Named> = (0..n)
            .map(|i| {
                let r = rng.next();
                let mut name = [b'a'; 10];
                name[(r % 10) as usize] = b'a' + (r >> 8) as u8 % 3;
                Named { name, tag: i as u16, count: (r >> 16) as u32 % 4 }
            })
            .collect();
        let mut want = names.clone();
        want.sort_by(|a, b| b.name.cmp(&a.name).then(a.count.cmp(&b.count)));
        let mut d = gpu.upload(&names).unwrap();
        mergepath::sort_keys(gpu, &mut d, Less).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "Named n={n} (stable: tags of equal keys in input order)");

        let quads: Vec<Quad> = (0..n).map(|_| Quad((rng.next() % 4096).to_le_bytes()[..8].chunks(2).map(|c| i16::from_le_bytes([c[0], c[1]]) % 3).collect::<Vec<_>>().try_into().unwrap())).collect();
        let mut want = quads.clone();
        want.sort_by_key(|q| std::cmp::Reverse(q.0));
        let mut d = gpu.upload(&quads).unwrap();
        mergepath::sort_keys(gpu, &mut d, Less).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "Quad n={n}");

        let bits: Vec<Bits> = (0..n).map(|_| Bits(rng.next() as u32)).collect();
        let mut want = bits.clone();
        want.sort_by_key(|b| b.0.count_ones());
        let mut d = gpu.upload(&bits).unwrap();
        mergepath::sort_keys(gpu, &mut d, ByPopcount).unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "Bits by popcount n={n}");
    }
}

#[test]
fn derived_comparators_on_the_cpu() {
    let a = Hit { score: 2.0, id: 1, x: 5 };
    let b = Hit { score: 1.0, id: 0, x: -5 };
    let c = Hit { score: 2.0, id: 3, x: 0 };
    assert!(Less.is_less(&a, &b), "score descending");
    assert!(Less.is_less(&a, &c), "then id ascending");
    assert!(!Less.is_less(&a, &a));
    assert!(Greater.is_less(&b, &a) && Greater.is_less(&c, &a));
    assert!(ByX.is_less(&b, &c) && !ByX.is_less(&a, &c));
    let nan = Hit { score: f32::NAN, ..a };
    assert!(Less.is_less(&nan, &a), "+NaN is the largest score, first when descending");
    let p = |x, id| Point { x, id };
    assert!(Less.is_less(&p(-0.0, 9), &p(0.0, 0)), "total order: -0.0 before +0.0");
    assert!(Less.is_less(&p(1.0, -1), &p(1.0, 0)));
    assert_eq!(<Hit as mergepath::Key>::CUDA_TYPE, "mergepath_user::Hit");
    assert_eq!(<ByX as Comparator<Hit>>::NAME, "ByX");
    // Only an order over every bit of an 8-byte key sorts as packed u64s.
    assert_eq!(<Less as Comparator<Point>>::PACKED_U64, Some(false));
    assert_eq!(<Greater as Comparator<Point>>::PACKED_U64, Some(true));
    assert_eq!(<Less as Comparator<Hit>>::PACKED_U64, None, "Hit's order leaves out x");
    assert_eq!(<ByX as Comparator<Hit>>::PACKED_U64, None);
    assert_eq!(<Less as Comparator<Small>>::PACKED_U64, None, "Small's order leaves out lo");
}

fn check_sort<C: Comparator<Hit>>(comp: C) {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0xd3);
    for n in [0usize, 1, 1000, 2049, 70_001, 1 << 20, (1 << 22) + 7] {
        let keys = hits(n, &mut rng);
        let ctx = format!("sort Hit by {} n={n}", C::NAME);
        let mut d = gpu.upload(&keys).unwrap();
        mergepath::sort_keys(gpu, &mut d, comp).unwrap();
        assert_same(&gpu.download(&d).unwrap(), &cpu::sort_keys(&keys, comp), &ctx);
        // Stability: positions of equal keys (many ties) in input order.
        let positions: Vec<u64> = (0..n as u64).collect();
        let (want_k, want_i) = cpu::sort_pairs(&keys, &positions, comp);
        let (mut dk, mut di) = (gpu.upload(&keys).unwrap(), gpu.upload(&vec![0u64; n]).unwrap());
        mergepath::sort_indices(gpu, &mut dk, &mut di, comp).unwrap();
        assert_same(&gpu.download(&dk).unwrap(), &want_k, &ctx);
        assert_eq!(gpu.download(&di).unwrap(), want_i, "{ctx}: indices");
        // The sample sort: the same keys and positions.
        let (mut dk, mut dp) = (gpu.upload(&keys).unwrap(), gpu.upload(&positions).unwrap());
        mergepath::samplesort::sort_pairs(gpu, &mut dk, &mut dp, comp).unwrap();
        assert_same(&gpu.download(&dk).unwrap(), &want_k, &format!("{ctx}: samplesort"));
        assert_eq!(gpu.download(&dp).unwrap(), want_i, "{ctx}: samplesort positions");
    }
}

#[test]
fn sort_derived_keys() {
    check_sort(Less);
    check_sort(Greater);
    check_sort(ByX);
}

/// Segmented sort with a derived comparator (CUB's segmented sort has no custom comparators):
/// small segments, tile-crossing ones, pairs carrying positions for stability.
#[test]
fn sort_segments_of_derived_keys() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x5e);
    let mut offsets = vec![0usize];
    for i in 0..3000 {
        let len = if i % 500 == 7 { 20_000 + rng.below(5000) as usize } else { rng.below(90) as usize };
        offsets.push(offsets.last().unwrap() + len);
    }
    let keys = hits(*offsets.last().unwrap(), &mut rng);
    let positions: Vec<u32> = (0..keys.len() as u32).collect();
    for comp_name in ["ByX", "Less"] {
        let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&positions).unwrap());
        let (want_k, want_v) = if comp_name == "ByX" {
            mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, &offsets, ByX).unwrap();
            cpu::sort_segments_pairs(&keys, &positions, &offsets, ByX)
        } else {
            mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, &offsets, Less).unwrap();
            cpu::sort_segments_pairs(&keys, &positions, &offsets, Less)
        };
        assert_same(&gpu.download(&dk).unwrap(), &want_k, &format!("segments of Hit by {comp_name}"));
        assert_eq!(gpu.download(&dv).unwrap(), want_v, "segments of Hit by {comp_name}: positions");
    }
}

#[test]
fn merge_derived_keys() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x3e);
    for (na, nb) in [(0usize, 5usize), (1000, 1), (100_000, 77_777)] {
        let mut a = hits(na, &mut rng);
        let mut b = hits(nb, &mut rng);
        a.sort_by(|x, y| cpu::ordering(&ByX, x, y));
        b.sort_by(|x, y| cpu::ordering(&ByX, x, y));
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let mut out = gpu.alloc_zeros::<Hit>(na + nb).unwrap();
        mergepath::merge_keys(gpu, &da, &db, &mut out, ByX).unwrap();
        assert_same(&gpu.download(&out).unwrap(), &cpu::merge_keys(&a, &b, ByX), &format!("merge Hit by x {na}+{nb}"));
    }
}

/// Point's order covers all its 8 bytes, so its sorts sort packed u64s (packing and unpacking
/// once): in place and into another buffer, both directions, NaNs and signed zeros included.
#[test]
fn sort_two_field_structs() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x77);
    let specials = [f32::NAN, -f32::NAN, f32::from_bits(0x7fc0_0001), -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY];
    // One block; one two-way pass; five four-way passes; a blocksort on doubled blocks (11
    // levels, 8-byte keys) and five four-way passes.
    for n in [3usize, 5000, 1 << 21, (1 << 22) + 1] {
        let keys: Vec<Point> = (0..n)
            .map(|_| {
                let r = rng.next();
                let x = if r.is_multiple_of(16) { specials[(r >> 4) as usize % specials.len()] } else { (r % 1000) as f32 - 500.0 };
                Point { x, id: (r >> 32) as i32 % 100 }
            })
            .collect();
        let mut d = gpu.upload(&keys).unwrap();
        mergepath::sort_keys(gpu, &mut d, Less).unwrap();
        assert_same(&gpu.download(&d).unwrap(), &cpu::sort_keys(&keys, Less), &format!("sort Point n={n}"));
        let input = gpu.upload(&keys).unwrap();
        let mut out = gpu.alloc_zeros::<Point>(n + 3).unwrap();
        mergepath::sort_keys_copy(gpu, &input, &mut out, Greater).unwrap();
        let got = gpu.download(&out).unwrap();
        assert_same(&got[..n], &cpu::sort_keys(&keys, Greater), &format!("sort_keys_copy Point n={n} Greater"));
        assert!(got[n..].iter().all(|p| *p == Point { x: 0.0, id: 0 }), "sort_keys_copy wrote past n");
        assert_eq!(gpu.download(&input).unwrap().iter().map(|p| (p.x.to_bits(), p.id)).collect::<Vec<_>>(), keys.iter().map(|p| (p.x.to_bits(), p.id)).collect::<Vec<_>>(), "input left as it is");
        // Buffers 4 bytes off 8-byte alignment (Points from the second word of u32 buffers):
        // the CUDA struct is 8-byte aligned (`Key::DEVICE_ALIGN`), so they are an error before
        // any launch, the output untouched.
        let mut words = vec![0u32];
        words.extend_from_slice(bytemuck::cast_slice(&keys));
        let shifted_in = gpu.upload(&words).unwrap();
        let mut shifted_out = gpu.alloc_zeros::<u32>(2 * n + 1).unwrap();
        let mut aligned_out = gpu.alloc_zeros::<Point>(n).unwrap();
        {
            // SAFETY: Point is plain old data of two 4-byte words, so any 2n words are n Points.
            let input = unsafe { shifted_in.slice(1..).transmute::<Point>(n) }.unwrap();
            let mut out = shifted_out.slice_mut(1..);
            // SAFETY: as above.
            let mut out = unsafe { out.transmute_mut::<Point>(n) }.unwrap();
            let aligned = gpu.upload(&keys).unwrap();
            assert!(matches!(mergepath::sort_keys_copy(gpu, &aligned, &mut out, Less), Err(mergepath::Error::Misaligned { .. })), "an output at 4 mod 8");
            assert!(matches!(mergepath::sort_keys_copy(gpu, &input, &mut aligned_out, Greater), Err(mergepath::Error::Misaligned { .. })), "an input at 4 mod 8");
        }
        assert!(gpu.download(&shifted_out).unwrap().iter().all(|&w| w == 0), "nothing written");
        assert!(gpu.download(&aligned_out).unwrap().iter().all(|p| *p == Point { x: 0.0, id: 0 }), "nothing written");
    }
}

/// Two comparators that are not strict weak orders, a mistake the library cannot see: one not
/// irreflexive, one a coin flip per pair of keys; and one whose CUDA functor and Rust twin are
/// different orders (each a strict weak order), which only a comparison on the GPU shows.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(comparator(NotIrreflexive, cuda = "a.x <= b.x", rust = "|a, b| a.x <= b.x"))]
#[key(comparator(TwinsDisagree, cuda = "a.x < b.x", rust = "|a, b| a.x < b.x || (a.x == b.x && a.y < b.y)"))]
#[key(comparator(CoinFlip, cuda = "((a.x * 2654435761u) ^ (b.x * 2246822519u)) >> 31", rust = "|a, b| ((a.x.wrapping_mul(2654435761) ^ b.x.wrapping_mul(2246822519)) >> 31) == 1"))]
struct Careless {
    x: u32,
    y: u32,
}

fn sort_carelessly<C: Comparator<Careless>>(gpu: &mergepath::Gpu, keys: &[Careless], comp: C) {
    let n = keys.len();
    let ctx = format!("{} n={n}", C::NAME);
    let mut d = gpu.upload(keys).unwrap();
    mergepath::sort_keys(gpu, &mut d, comp).unwrap();
    let input = gpu.upload(keys).unwrap();
    let mut out = gpu.alloc_zeros::<Careless>(n + 5).unwrap();
    mergepath::sort_keys_copy(gpu, &input, &mut out, comp).unwrap();
    let got = gpu.download(&out).unwrap();
    assert!(got[n..].iter().all(|k| *k == Careless { x: 0, y: 0 }), "{ctx}: sort_keys_copy wrote past n");
    let (mut dk, mut dv) = (gpu.upload(keys).unwrap(), gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap());
    mergepath::sort_pairs(gpu, &mut dk, &mut dv, comp).unwrap();
    let mut ds = gpu.upload(keys).unwrap();
    mergepath::samplesort::sort_keys(gpu, &mut ds, comp).unwrap();
    let (mut sk, mut sv) = (gpu.upload(keys).unwrap(), gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap());
    mergepath::samplesort::sort_pairs(gpu, &mut sk, &mut sv, comp).unwrap();
    gpu.download(&ds).unwrap();
    let offsets = [0, n / 3, n / 3 + 70, n];
    mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, &offsets[..], comp).unwrap();
    let (a, b) = (gpu.upload(&keys[..n / 2]).unwrap(), gpu.upload(&keys[n / 2..]).unwrap());
    mergepath::merge_keys(gpu, &a, &b, &mut out, comp).unwrap();
    // Every kernel stayed in bounds: the context still works (an illegal address would fail
    // every later call) and sorts correctly.
    gpu.download(&dk).unwrap();
    gpu.download(&out).unwrap();
    let mut check = gpu.upload(keys).unwrap();
    mergepath::sort_keys(gpu, &mut check, Less).unwrap();
    assert_same(&gpu.download(&check).unwrap(), &cpu::sort_keys(keys, Less), &format!("{ctx}: a correct sort after"));
}

/// Comparators that are not strict weak orders give an unspecified order, never an access out
/// of bounds (run under compute-sanitizer on the GPU machine): keys, pairs, segments, merges,
/// up to four-way passes, and the sample sort (whose splitters they may leave out of order).
#[test]
fn comparators_that_are_not_strict_weak_orders_stay_in_bounds() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0xc0);
    for n in [5000usize, 1 << 21, (1 << 22) + 3] {
        let keys: Vec<Careless> = (0..n)
            .map(|_| {
                let r = rng.next();
                Careless { x: (r % 1000) as u32, y: (r >> 32) as u32 }
            })
            .collect();
        sort_carelessly(gpu, &keys, NotIrreflexive);
        sort_carelessly(gpu, &keys, CoinFlip);
    }
}

/// The testing kit's `check_comparator` catches a comparator that is not a strict weak order
/// (here not irreflexive) and shrinks the failing case to the one key that shows it: on the CPU,
/// so in CI too.
#[test]
fn check_comparator_catches_and_shrinks_a_broken_comparator() {
    let minimal = minimal_failure(Backend::Host, NotIrreflexive, "not irreflexive");
    assert_eq!(minimal.len(), 1, "shrunk to one key: {minimal:?}");
    // The coin flip is caught too (asymmetry or transitivity, whichever the keys show first).
    let minimal = minimal_failure(Backend::Host, CoinFlip, "comparator CoinFlip");
    assert!(minimal.len() <= 3, "shrunk to at most three keys: {minimal:?}");
}

/// On the GPU, `check_comparator` also catches twins that disagree (both strict weak orders, so
/// the CPU half passes), shrunk to two keys of equal `x`.
#[test]
fn check_comparator_catches_cuda_and_rust_twins_that_disagree() {
    let mut runner = TestRunner::new(Config { failure_persistence: None, ..Config::with_cases(64) });
    runner
        .run(&testing::comparator_keys::<Careless>(), |keys| testing::check_comparator(Backend::Host, &keys, TwinsDisagree))
        .expect("each twin is a strict weak order");
    let Some(gpu) = gpu() else { return };
    let minimal = minimal_failure(Backend::Gpu(gpu), TwinsDisagree, "the CUDA functor");
    assert_eq!(minimal.len(), 2, "shrunk to two keys: {minimal:?}");
    assert_eq!(minimal[0].x, minimal[1].x, "the twins differ on keys of equal x: {minimal:?}");
}

/// The minimal keys on which `check_comparator` fails for `comp`, its message containing `want`.
fn minimal_failure<C: Comparator<Careless>>(backend: Backend<'_>, comp: C, want: &str) -> Vec<Careless> {
    let mut runner = TestRunner::new(Config { failure_persistence: None, ..Config::with_cases(256) });
    match runner.run(&testing::comparator_keys::<Careless>(), |keys| testing::check_comparator(backend, &keys, comp)) {
        Err(TestError::Fail(reason, minimal)) => {
            assert!(reason.message().contains(want), "{}: {reason}", C::NAME);
            minimal
        }
        other => panic!("{}: check_comparator did not catch it: {other:?}", C::NAME),
    }
}

/// Orders packed into one integer (up to 64 bits) and compared field by field (wider), against
/// the field-by-field oracle, with NaNs, signed zeros, negative integers and many ties.
#[test]
fn sort_packed_and_wide_orders() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x9a);
    let floats = [f32::NAN, -f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1.5, -1.5];
    for n in [7usize, 4000, 300_001] {
        let wide: Vec<Wide> = (0..n)
            .map(|_| {
                let r = rng.next();
                Wide { a: (r % 7) as i64 - 3, b: floats[(r >> 8) as usize % floats.len()], c: (r >> 16) as i16 % 5, d: (r >> 32) as u16 }
            })
            .collect();
        let small: Vec<Small> = (0..n)
            .map(|_| {
                let r = rng.next();
                Small { lo: r as u8, hi: (r >> 8) as i8, w: ((r >> 16) as i16) % 300 }
            })
            .collect();
        for greater in [false, true] {
            let ctx = |what: &str| format!("sort {what} n={n} {}", if greater { "Greater" } else { "Less" });
            let (mut dw, mut ds) = (gpu.upload(&wide).unwrap(), gpu.upload(&small).unwrap());
            if greater {
                mergepath::sort_keys(gpu, &mut dw, Greater).unwrap();
                mergepath::sort_keys(gpu, &mut ds, Greater).unwrap();
                assert_same(&gpu.download(&dw).unwrap(), &cpu::sort_keys(&wide, Greater), &ctx("Wide"));
                assert_same(&gpu.download(&ds).unwrap(), &cpu::sort_keys(&small, Greater), &ctx("Small"));
            } else {
                mergepath::sort_keys(gpu, &mut dw, Less).unwrap();
                mergepath::sort_keys(gpu, &mut ds, Less).unwrap();
                assert_same(&gpu.download(&dw).unwrap(), &cpu::sort_keys(&wide, Less), &ctx("Wide"));
                assert_same(&gpu.download(&ds).unwrap(), &cpu::sort_keys(&small, Less), &ctx("Small"));
            }
        }
    }
}

/// Rows with many ties in the order (so stability shows through `seq`), the floats' special
/// values among the scores.
fn rows(n: usize, seed: u64) -> Vec<Row> {
    let mut rng = Rng(seed);
    let floats = [f32::NAN, -f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1.5, -1.5, 2.25];
    (0..n)
        .map(|i| {
            let r = rng.next();
            let mut payload = [0u8; 48];
            payload[..8].copy_from_slice(&r.to_le_bytes());
            payload[47] = (r >> 40) as u8 % 7;
            Row { score: floats[r as usize % floats.len()], id: (r >> 16) as u32 % 50, seq: i as u64, payload }
        })
        .collect()
}

fn mixed(n: usize, seed: u64) -> Vec<Mixed> {
    let mut rng = Rng(seed);
    let floats = [f32::NAN, -0.0, 0.0, f32::NEG_INFINITY, -3.5, 7.0];
    (0..n)
        .map(|i| {
            let r = rng.next();
            Mixed { a: (r % 9) as i16 - 4, b: [(r >> 8) as i8 % 3, (r >> 16) as i8], c: floats[(r >> 24) as usize % floats.len()], seq: i as u64, rest: [r, !r] }
        })
        .collect()
}

fn three_words(n: usize, seed: u64) -> Vec<ThreeWords> {
    let mut rng = Rng(seed);
    let floats = [f64::NAN, -0.0, 0.0, f64::INFINITY, -2.5, 1e300];
    (0..n)
        .map(|_| {
            let r = rng.next();
            ThreeWords { a: (r % 5) << 60 | r >> 60, b: ((r >> 8) % 7) as i64 - 3, c: floats[(r >> 16) as usize % floats.len()] }
        })
        .collect()
}

/// ThreeWords whose first word (c) takes `c_values` values (at most n: ties of a few items; far
/// more: almost none, so the later words sort nothing), the others few.
fn three_words_spread(n: usize, seed: u64, c_values: u64) -> Vec<ThreeWords> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let (r, s) = (rng.next(), rng.next());
            ThreeWords { a: r % 3, b: ((r >> 8) % 3) as i64 - 1, c: (s % c_values) as f64 - (c_values / 2) as f64 }
        })
        .collect()
}

fn labelled(n: usize, seed: u64) -> Vec<Labelled> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let r = rng.next();
            let mut name = [b'a'; 12];
            name[0] = b'a' + (r % 3) as u8;
            name[11] = b'a' + (r >> 8) as u8 % 4;
            let mut payload = [0u8; 16];
            payload[..8].copy_from_slice(&(i as u64).to_le_bytes());
            Labelled { name, id: (r >> 16) as u32 % 6, payload }
        })
        .collect()
}

/// Sorts by packed words at sizes a sanitizer runs quickly: the first word alone, runs of ties
/// long and short in the later words, three words and two, a 16-byte key, each against the
/// stable sort (`sort_keys` and `sort_pairs` with positions).
#[test]
fn sorts_by_packed_words_at_small_sizes() {
    let Some(gpu) = gpu() else { return };
    fn run<K: mergepath::Key + mergepath::cudarc::driver::DeviceRepr + mergepath::cudarc::driver::ValidAsZeroBits + PartialEq + std::fmt::Debug, C: Comparator<K>>(gpu: &mergepath::Gpu, items: &[K], comp: C, ctx: &str) {
        let want = stable(items, comp);
        let mut d = gpu.upload(items).unwrap();
        mergepath::sort_keys(gpu, &mut d, comp).unwrap();
        assert_same(&gpu.download(&d).unwrap(), &want, &format!("{ctx} sort_keys"));
        let positions: Vec<u32> = (0..items.len() as u32).collect();
        let (mut dk, mut dv) = (gpu.upload(items).unwrap(), gpu.upload(&positions).unwrap());
        mergepath::sort_pairs(gpu, &mut dk, &mut dv, comp).unwrap();
        let got: Vec<K> = gpu.download(&dv).unwrap().iter().map(|&p| items[p as usize]).collect();
        assert_same(&got, &want, &format!("{ctx} sort_pairs positions"));
    }
    let mut rng = Rng(0x5ad);
    for n in [1usize, 2, 1000, 5000] {
        run(gpu, &three_words(n, n as u64), Less, &format!("ThreeWords n={n}"));
        run(gpu, &three_words_spread(n, n as u64 + 1, n as u64), Greater, &format!("ThreeWords, short ties, n={n}"));
        run(gpu, &three_words_spread(n, n as u64 + 2, 1 << 52), Less, &format!("ThreeWords, first words distinct, n={n}"));
        run(gpu, &labelled(n, n as u64 + 3), Less, &format!("Labelled n={n}"));
        let uuids: Vec<Uuid> = (0..n).map(|_| Uuid(((rng.next() % 3) as u128 | (rng.next() as u128) << 64).to_le_bytes())).collect();
        run(gpu, &uuids, Less, &format!("Uuid, three first words, n={n}"));
    }
}

/// The stable sort of `items` by `comp` on the CPU.
fn stable<K: mergepath::Key, C: Comparator<K>>(items: &[K], comp: C) -> Vec<K> {
    let mut v = items.to_vec();
    v.sort_by(|a, b| if comp.is_less(a, b) { std::cmp::Ordering::Less } else if comp.is_less(b, a) { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal });
    v
}

/// A record's packed order (what its sorts sort, word by word) orders as its field order, ties
/// included: orders of one word (64 bits) and of two and three; those of several words have a
/// module on addresses.
#[test]
fn records_pack_their_order_into_u64_words_that_order_as_the_fields() {
    fn check<K: mergepath::Key>(items: &[K], words: usize)
    where
        Less: Comparator<K>,
        Greater: Comparator<K>,
    {
        let order = <Less as Comparator<K>>::RECORD.expect("a record");
        assert_eq!(<Greater as Comparator<K>>::RECORD.map(|o| o.descending), Some(true));
        assert_eq!(order.words(), words);
        // Orders of several words have kernels on the records' addresses (merges and searches
        // run on them), Greater the same module (reversed).
        assert_eq!(order.by_address.is_some(), words > 1);
        let greater = <Greater as Comparator<K>>::RECORD.and_then(|o| o.by_address);
        assert_eq!(greater.map(<[u8]>::as_ptr), order.by_address.map(<[u8]>::as_ptr), "one module, embedded once");
        let packed = |x: &K| (0..words).map(|w| order.pack(bytemuck::bytes_of(x), w)).collect::<Vec<u64>>();
        for pair in items.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let (pa, pb) = (packed(a), packed(b));
            assert_eq!(pa < pb, Less.is_less(a, b), "{pa:x?} {pb:x?}");
            assert_eq!(pb < pa, Less.is_less(b, a), "{pa:x?} {pb:x?}");
        }
    }
    check(&rows(20_000, 1), 1);
    check(&mixed(20_000, 2), 1);
    check(&labelled(20_000, 3), 2);
    check(&three_words(20_000, 4), 3);
    assert!(<Less as Comparator<Point>>::RECORD.is_none(), "keys of at most 16 bytes are not records");
    // A custom comparator's module: its kernels and its records' module on addresses, one copy.
    let by_tail = <ByTail as Comparator<Row>>::RECORD.and_then(|o| o.by_address).map(<[u8]>::as_ptr);
    assert_eq!(by_tail, Some(<ByTail as Comparator<Row>>::KERNELS.as_ptr()));
}

/// Records sorted on the GPU (in place, copying, with values of 4 and 12 bytes, with indices;
/// from device memory and from host slices, in core and larger than a memory cap) against
/// Rust's stable sort.
#[test]
fn sort_records_wider_than_the_key_tiles() {
    let Some(gpu) = gpu() else { return };
    fn run<K: mergepath::Key + mergepath::cudarc::driver::DeviceRepr + mergepath::cudarc::driver::ValidAsZeroBits + PartialEq + std::fmt::Debug, C: Comparator<K>>(gpu: &mergepath::Gpu, items: &[K], comp: C, ctx: &str) {
        let n = items.len();
        let want = stable(items, comp);
        let mut d = gpu.upload(items).unwrap();
        mergepath::sort_keys(gpu, &mut d, comp).unwrap();
        assert_same(&gpu.download(&d).unwrap(), &want, &format!("{ctx} sort_keys"));
        let input = gpu.upload(items).unwrap();
        let mut out = gpu.alloc_zeros::<K>(n + 1).unwrap();
        mergepath::sort_keys_copy(gpu, &input, &mut out, comp).unwrap();
        assert_same(&gpu.download(&out).unwrap()[..n], &want, &format!("{ctx} sort_keys_copy"));
        // Values: positions (4 bytes) and 12-byte arrays of them, so each shows where its key was.
        let positions: Vec<u32> = (0..n as u32).collect();
        let wide: Vec<[u32; 3]> = positions.iter().map(|&p| [p, !p, p ^ 0x5555]).collect();
        let (mut dk, mut dv, mut dw) = (gpu.upload(items).unwrap(), gpu.upload(&positions).unwrap(), gpu.upload(&wide).unwrap());
        mergepath::sort_pairs(gpu, &mut dk, &mut dv, comp).unwrap();
        let got_positions = gpu.download(&dv).unwrap();
        assert_same(&gpu.download(&dk).unwrap(), &want, &format!("{ctx} sort_pairs keys"));
        let mut want_positions = positions.clone();
        want_positions.sort_by(|&i, &j| if comp.is_less(&items[i as usize], &items[j as usize]) { std::cmp::Ordering::Less } else if comp.is_less(&items[j as usize], &items[i as usize]) { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal });
        assert_eq!(got_positions, want_positions, "{ctx}: values follow their records, stably");
        let mut dk = gpu.upload(items).unwrap();
        mergepath::sort_pairs(gpu, &mut dk, &mut dw, comp).unwrap();
        let want_wide: Vec<[u32; 3]> = got_positions.iter().map(|&p| wide[p as usize]).collect();
        assert_eq!(gpu.download(&dw).unwrap(), want_wide, "{ctx}: 12-byte values (stable, so the same positions)");
        let (mut dk, mut di) = (gpu.upload(items).unwrap(), gpu.alloc_zeros::<u64>(n).unwrap());
        mergepath::sort_indices(gpu, &mut dk, &mut di, comp).unwrap();
        assert_eq!(gpu.download(&di).unwrap(), got_positions.iter().map(|&p| p as u64).collect::<Vec<_>>(), "{ctx} sort_indices");

        // Host slices: in core, then under a cap that takes two runs (the packed orders are
        // 8-byte keys with 4-byte positions).
        let mut host = items.to_vec();
        let mut values = positions.clone();
        gpu.sort_pairs(&mut host, &mut values, comp).unwrap();
        assert_same(&host, &want, &format!("{ctx} Gpu::sort_pairs"));
        assert_eq!(values, got_positions, "{ctx} Gpu::sort_pairs values");
        if n >= 100_000 {
            let capped = common::capped_gpu(n, 8, 4, 2, 4096);
            let mut host = items.to_vec();
            match mergepath::slices::with_work_bytes(4096, || capped.sort_keys(&mut host, comp)) {
                // A custom comparator's records sort on the device at once, or not at all.
                Err(mergepath::Error::TooLargeForDevice { .. }) if C::NAME == "ByTail" => assert_same(&host, items, &format!("{ctx} Gpu::sort_keys refused, the keys as they were")),
                result => {
                    result.unwrap();
                    assert_same(&host, &want, &format!("{ctx} Gpu::sort_keys in 2 runs"));
                }
            }
        }
    }
    for n in [0usize, 1, 1000, 100_003, 1 << 20] {
        let (r, m) = (rows(n, n as u64), mixed(n, n as u64 + 1));
        run(gpu, &r, Less, &format!("Row n={n} Less"));
        run(gpu, &r, Greater, &format!("Row n={n} Greater"));
        run(gpu, &r, ByTail, &format!("Row n={n} ByTail"));
        run(gpu, &m, Less, &format!("Mixed n={n} Less"));
        run(gpu, &m, Greater, &format!("Mixed n={n} Greater"));
    }
    // Orders of more than 64 bits: the first word, then the later ones inside the runs tied on
    // the words before (long runs, short runs, none).
    for n in [1usize, 1000, 100_003, 1 << 20] {
        let (w, l) = (three_words(n, n as u64 + 2), labelled(n, n as u64 + 3));
        run(gpu, &w, Less, &format!("ThreeWords n={n} Less"));
        run(gpu, &w, Greater, &format!("ThreeWords n={n} Greater"));
        run(gpu, &l, Less, &format!("Labelled n={n} Less"));
        let (pairs, distinct) = (three_words_spread(n, n as u64 + 4, n as u64), three_words_spread(n, n as u64 + 5, 1 << 52));
        run(gpu, &pairs, Less, &format!("ThreeWords, short ties, n={n} Less"));
        run(gpu, &distinct, Greater, &format!("ThreeWords, first words distinct, n={n} Greater"));
    }
}

/// Records in the algorithms other than sorts, at sizes of many tiles: orders of one word
/// (`Row`: its packed word) and of two and three (`Labelled`, `ThreeWords`: their addresses),
/// and a custom comparator, each against the CPU oracle through the testing kit's properties.
#[test]
fn records_in_every_algorithm() {
    let Some(gpu) = gpu() else { return };
    fn run<K: testing::TestKey, C: Comparator<K>>(gpu: &mergepath::Gpu, items: &[K], comp: C, what: &str) {
        let b = Backend::Gpu(gpu);
        let (x, y) = items.split_at(items.len() / 3);
        let (x, y) = (stable(x, comp), stable(y, comp));
        let check = |name: &str, result: testing::PropertyResult| result.unwrap_or_else(|e| panic!("{what} {name}: {e}"));
        check("merge_keys", testing::merge_keys(b, &x, &y, comp));
        check("merge_pairs", testing::merge_pairs(b, &x, &y, comp));
        check("sorted_search", testing::sorted_search(b, &x, &y, comp));
        check("set_operations", testing::set_operations(b, &x, &y, comp));
        check("runs", testing::runs(b, &y, comp));
        let offsets: Vec<usize> = (0..items.len()).step_by(7919).chain([items.len()]).collect();
        check("sort_segments", testing::sort_segments(b, items, &offsets, comp));
        let inputs: Vec<Vec<K>> = items.chunks(items.len() / 9 + 1).map(|c| stable(c, comp)).collect();
        check("merge_multiway", testing::merge_multiway(b, &inputs, comp));
        // The host-slice front ends: the same results as the host backend's.
        assert_eq!(on_slices(gpu, &x, &y, items, &offsets, comp), on_slices(&mergepath::Host, &x, &y, items, &offsets, comp), "{what}: Gpu methods on host slices");
    }
    /// A merge, lower bounds, an intersection, a segmented sort and the distinct keys, on host
    /// slices, as bytes (NaN fields compare by their bits).
    fn on_slices<K: mergepath::Key, C: Comparator<K>>(backend: &impl mergepath::Backend, x: &[K], y: &[K], items: &[K], offsets: &[usize], comp: C) -> Vec<Vec<u8>> {
        let mut merged = vec![x[0]; x.len() + y.len()];
        backend.merge_keys(x, y, &mut merged, comp).unwrap();
        let mut bounds = vec![0u32; x.len()];
        backend.sorted_search(x, y, mergepath::Bound::Lower, &mut bounds, comp).unwrap();
        let mut common = vec![x[0]; x.len()];
        let len = backend.set_operation_keys(mergepath::SetOperation::Intersection, x, y, &mut common, comp).unwrap();
        common.truncate(len);
        let mut segments = items.to_vec();
        backend.sort_segments_keys(&mut segments, offsets, comp).unwrap();
        let mut distinct = vec![y[0]; y.len()];
        let len = backend.unique(y, &mut distinct, comp).unwrap();
        distinct.truncate(len);
        let bytes = |items: &[K]| bytemuck::cast_slice::<K, u8>(items).to_vec();
        vec![bytes(&merged), bytemuck::cast_slice(&bounds).to_vec(), bytes(&common), bytes(&segments), bytes(&distinct)]
    }
    for n in [1000usize, 300_007] {
        run(gpu, &rows(n, n as u64), Greater, &format!("Row n={n}"));
        run(gpu, &rows(n, n as u64 + 4), ByTail, &format!("Row by a custom comparator n={n}"));
        run(gpu, &labelled(n, n as u64 + 1), Less, &format!("Labelled n={n}"));
        run(gpu, &three_words(n, n as u64 + 2), Greater, &format!("ThreeWords n={n}"));
        run(gpu, &three_words_spread(n, n as u64 + 3, 1 << 52), Less, &format!("ThreeWords, first words distinct, n={n}"));
    }
}

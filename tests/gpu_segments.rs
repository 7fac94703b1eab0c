//! Segmented sort on the GPU against per-segment `sort_by`: 10^6 segments of 0..=64 keys, 1000
//! of 0..=100k, one segment, all empty, runs of equal keys, sizes at the tile sizes, a few
//! segments far longer than the rest, offsets not starting at 0, every built-in key type and
//! both comparators, pairs (values are positions, so stability shows), two sorts on two
//! streams at once, and host offsets' errors as the host's check reports them. Skips without
//! a GPU (fails with MERGEPATH_REQUIRE_GPU=1).

mod common;
use common::{assert_same, gpu, Rng, TestKey};
use mergepath::{cpu, tuning, Comparator, Error, Gpu, Greater, Less};

/// Offsets of segments with lengths drawn by `len`, from `start`, `count` segments.
fn offsets(start: usize, count: usize, mut len: impl FnMut() -> usize) -> Vec<usize> {
    let mut v = vec![start];
    for _ in 0..count {
        v.push(v.last().unwrap() + len());
    }
    v
}

/// Keys with many repeats (so stability matters) and the type's special values.
fn keys<K: TestKey>(n: usize, seed: u64) -> Vec<K> {
    let mut rng = Rng(seed);
    let specials = K::specials();
    (0..n)
        .map(|_| if !specials.is_empty() && rng.below(16) == 0 { specials[rng.below(specials.len() as u64) as usize] } else { K::from_bits(rng.below(500)) })
        .collect()
}

fn check<K: TestKey, C: Comparator<K>>(gpu: &Gpu, offs: &[usize], tail: usize, comp: C, pairs: bool, ctx: &str) {
    let n = offs.last().copied().unwrap_or(0) + tail;
    check_keys(gpu, offs, &keys::<K>(n, n as u64 ^ 0x5e6), comp, pairs, ctx);
}

/// As `check`, on the given keys (`offs` ending at most at `k.len()`).
fn check_keys<K: TestKey, C: Comparator<K>>(gpu: &Gpu, offs: &[usize], k: &[K], comp: C, pairs: bool, ctx: &str) {
    let (k, n) = (k.to_vec(), k.len());
    let device_offsets = gpu.upload(&offs.iter().map(|&o| o as u64).collect::<Vec<u64>>()).unwrap();
    // Host offsets, then the same offsets in device memory.
    for on_device in [false, true] {
        let ctx = format!("{ctx} ({} offsets)", if on_device { "device" } else { "host" });
        let mut dk = gpu.upload(&k).unwrap();
        if pairs {
            let v: Vec<u32> = (0..n as u32).collect();
            let mut dv = gpu.upload(&v).unwrap();
            if on_device {
                mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, &device_offsets, comp).unwrap();
            } else {
                mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, offs, comp).unwrap();
            }
            let (wk, wv) = cpu::sort_segments_pairs(&k, &v, offs, comp);
            assert_same(&gpu.download(&dk).unwrap(), &wk, &format!("{ctx}: pair keys"));
            assert!(gpu.download(&dv).unwrap() == wv, "{ctx}: pair values (stability)");
        } else {
            if on_device {
                mergepath::sort_segments_keys(gpu, &mut dk, &device_offsets, comp).unwrap();
            } else {
                mergepath::sort_segments_keys(gpu, &mut dk, offs, comp).unwrap();
            }
            assert_same(&gpu.download(&dk).unwrap(), &cpu::sort_segments_keys(&k, offs, comp), &ctx);
        }
    }
}

fn check_type<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, pairs: bool) {
    let arch = gpu.compute_capability().unwrap();
    let tile = tuning::sort_shape(arch, std::mem::size_of::<K>()).tile();
    let pair_tile = tuning::sort_pairs_shape(arch, std::mem::size_of::<K>()).tile();
    let block = tuning::blocksort_shape(arch, std::mem::size_of::<K>()).tile();
    let name = format!("{} {}", std::any::type_name::<K>(), C::NAME);
    let mut rng = Rng(0x5e9 ^ tile as u64);
    // Tile-sized segments, ones at the tile stride and the longest segment taken whole by a
    // tile (`segment_geometry`), and ones around the blocksort block and a few merge passes.
    let (stride, small) = mergepath::segmented::segment_geometry(if pairs { pair_tile } else { tile });
    let sizes = [
        0, 1, tile - 1, tile, tile + 1, pair_tile - 1, pair_tile + 1, block - 1, block, block + 1, 2 * tile, 5 * block + 3,
        stride - 1, stride, stride + 1, small, small + 1, small - 1, 2 * stride,
    ];
    let mut i = 0;
    let offs = offsets(3, 3 * sizes.len(), || {
        i += 1;
        sizes[i % sizes.len()]
    });
    check(gpu, &offs, 5, comp, pairs, &format!("{name} tile-sized segments from 3"));
    check(gpu, &offsets(0, 20_000, || rng.below(65) as usize), 0, comp, pairs, &format!("{name} 20k segments of 0..=64"));
    // Short and longer segments mixed, so neighbouring tiles sort different ways.
    check(gpu, &offsets(1, 5_000, || if rng.below(4) == 0 { rng.below(400) } else { rng.below(40) } as usize), 0, comp, pairs, &format!("{name} 5k segments of 0..400"));
    check(gpu, &offsets(7, 30, || rng.below(100_001) as usize), 2, comp, pairs, &format!("{name} 30 segments of 0..=100k"));
    // A few segments far longer than the mean: with device offsets their levels run in the
    // launch of ordered work items (the launched levels are those of twice the mean length).
    let mut i = 0;
    let few_long = offsets(2, 4_000, || {
        i += 1;
        if i % 997 == 0 { 150_000 } else { rng.below(17) as usize }
    });
    check(gpu, &few_long, 1, comp, pairs, &format!("{name} 4k short segments and 4 of 150k"));
}

macro_rules! segment_tests {
    ($($name:ident: $t:ident $pairs:expr),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            check_type::<$t, Less>(gpu, Less, $pairs);
            check_type::<$t, Greater>(gpu, Greater, false);
        }
    )*};
}
segment_tests!(sort_segments_u8: u8 false, sort_segments_u16: u16 true, sort_segments_u32: u32 true, sort_segments_u64: u64 true, sort_segments_i8: i8 false, sort_segments_i16: i16 false, sort_segments_i32: i32 false, sort_segments_i64: i64 false, sort_segments_f32: f32 true, sort_segments_f64: f64 false);

#[test]
fn sort_segments_issue_cases() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(6);
    check::<u32, Less>(gpu, &offsets(0, 1_000_000, || rng.below(65) as usize), 0, Less, false, "10^6 segments of 0..=64");
    check::<u32, Less>(gpu, &offsets(0, 1_000_000, || rng.below(65) as usize), 0, Less, true, "10^6 segments of 0..=64, pairs");
    check::<u32, Less>(gpu, &offsets(0, 1000, || rng.below(100_001) as usize), 0, Less, false, "1000 segments of 0..=100k");
    check::<u64, Greater>(gpu, &offsets(0, 1000, || rng.below(100_001) as usize), 0, Greater, true, "1000 segments of 0..=100k, u64 pairs");
    check::<u32, Less>(gpu, &[0, 3_000_000], 0, Less, true, "one segment");
    check::<u32, Less>(gpu, &[5, 5, 5, 5], 9, Less, false, "all empty");
    check::<u32, Less>(gpu, &[0; 1000], 100, Less, false, "all empty at 0");
    check::<u32, Less>(gpu, &[2], 10, Less, false, "one offset: no segments");
}

/// Short segments of few distinct keys and of one key repeated: whole runs of equal keys claim
/// one place in the counting sort, and stability must still hold.
#[test]
fn sort_segments_equal_keys() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(11);
    let offs = offsets(0, 20_000, || rng.below(65) as usize);
    let n = *offs.last().unwrap();
    let few: Vec<u32> = (0..n).map(|_| rng.below(3) as u32).collect();
    let same = vec![7u32; n];
    for (k, what) in [(&few, "3 distinct keys"), (&same, "one key")] {
        check_keys(gpu, &offs, k, Less, true, &format!("20k segments of 0..=64, {what}, pairs, Less"));
        check_keys(gpu, &offs, k, Greater, true, &format!("20k segments of 0..=64, {what}, pairs, Greater"));
    }
}

/// Two sorts on two streams of one context, enqueued before either is waited for: each Gpu
/// handle has its own temporary storage, so neither corrupts the other.
#[test]
fn sort_segments_on_two_streams() {
    let Some(gpu) = gpu() else { return };
    let (s1, s2) = (gpu.context().new_stream().unwrap(), gpu.context().new_stream().unwrap());
    let (g1, g2) = (Gpu::with_stream(s1), Gpu::with_stream(s2));
    let mut rng = Rng(2);
    let (o1, o2) = (offsets(0, 300, || rng.below(40_000) as usize), offsets(0, 200_000, || rng.below(70) as usize));
    let (k1, k2) = (keys::<u32>(*o1.last().unwrap(), 1), keys::<u32>(*o2.last().unwrap(), 2));
    let (mut d1, mut d2) = (g1.upload(&k1).unwrap(), g2.upload(&k2).unwrap());
    for _ in 0..3 {
        // Repeated sorts of sorted data keep it; both streams stay busy together.
        mergepath::sort_segments_keys(&g1, &mut d1, &o1, Less).unwrap();
        mergepath::sort_segments_keys(&g2, &mut d2, &o2, Less).unwrap();
    }
    assert!(g1.download(&d1).unwrap() == cpu::sort_segments_keys(&k1, &o1, Less), "stream 1");
    assert!(g2.download(&d2).unwrap() == cpu::sort_segments_keys(&k2, &o2, Less), "stream 2");
}

#[test]
fn sort_segments_errors() {
    let Some(gpu) = gpu() else { return };
    let mut k = gpu.upload(&[3u32, 2, 1, 0]).unwrap();
    assert_eq!(mergepath::sort_segments_keys(gpu, &mut k, &[0, 3, 2], Less), Err(Error::InvalidArgument { argument: "offsets", reason: "must be non-decreasing: offsets[2] = 2 is below offsets[1] = 3".into() }));
    assert_eq!(mergepath::sort_segments_keys(gpu, &mut k, &[0, 5], Less), Err(Error::InvalidArgument { argument: "offsets", reason: "offsets[1] = 5 is past the end of the 4 keys".into() }));
    let mut v = gpu.upload(&[0u32; 3]).unwrap();
    assert_eq!(mergepath::sort_segments_pairs(gpu, &mut k, &mut v, &[0, 4], Less), Err(Error::LengthMismatch { what: "values", expected: 4, got: 3 }));
    assert_eq!(gpu.download(&k).unwrap(), [3, 2, 1, 0], "nothing sorted on bad input");
}

/// Host offsets are checked on the GPU (more than 4,096 of them) or on the host: every case
/// gets the error of the host's own check (`validate_segment_offsets`: the first offset out of
/// order, decreases before the end) or `Ok`, whichever of the GPU's threads finds it, and an
/// error leaves the keys as they were.
#[test]
fn host_offsets_errors_match_the_host_check() {
    use mergepath::segmented::validate_segment_offsets;
    let Some(gpu) = gpu() else { return };
    let n = 300_000;
    let k = keys::<u32>(n, 11);
    let mut rng = Rng(12);
    let good = offsets(1, 250_000, || rng.below(3) as usize);
    let with = |edits: &[(usize, usize)]| {
        let mut o = good.clone();
        for &(i, v) in edits {
            o[i] = v;
        }
        o
    };
    let last = good.len() - 1;
    let cases = [
        with(&[(200_001, 0)]),
        with(&[(240_000, 0), (150_000, usize::MAX)]),
        with(&[(last, n + 1)]),
        with(&[(last, n + 1), (249_999, 0)]),
        with(&[(last, usize::MAX)]),
        with(&[(0, 2)]),
        vec![usize::MAX],
        vec![0, usize::MAX, 5],
        vec![n + 1, n + 1],
        vec![7],
        vec![n],
    ];
    for offs in cases {
        let want = validate_segment_offsets(&offs, n);
        let ctx = format!("{} offsets, {want:?}", offs.len());
        let mut dk = gpu.upload(&k).unwrap();
        assert_eq!(mergepath::sort_segments_keys(gpu, &mut dk, &offs, Less), want, "{ctx}");
        if want.is_err() {
            assert!(gpu.download(&dk).unwrap() == k, "keys as they were: {ctx}");
        }
    }
}

/// Device offsets are not validated (that would wait for the GPU): offsets that decrease or
/// pass the end give unspecified contents but are clamped into the keys (compute-sanitizer
/// checks that no access goes out of bounds), and the call succeeds.
#[test]
fn sort_segments_bad_device_offsets_stay_in_bounds() {
    let Some(gpu) = gpu() else { return };
    let n = 50_000;
    let k = keys::<u32>(n, 9);
    // Short segments that sometimes step back (tiles whose starts are out of order).
    let mut rng = Rng(10);
    let mut at = 0i64;
    let jittery: Vec<u64> = (0..3000).map(|_| {
        at = (at + rng.below(60) as i64 - 18).max(0);
        at as u64
    }).collect();
    for bad in [vec![0u64, 30_000, 10_000, 50_000], vec![0, 20_000, u64::MAX], vec![u64::MAX, 0, 40_000], vec![45_000, 60_000, 70_000], jittery] {
        let mut dk = gpu.upload(&k).unwrap();
        let mut dv = gpu.upload(&(0..n as u32).collect::<Vec<u32>>()).unwrap();
        let offs = gpu.upload(&bad).unwrap();
        mergepath::sort_segments_keys(gpu, &mut dk, &offs, Less).unwrap();
        mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, &offs, Less).unwrap();
        assert_eq!(gpu.download(&dk).unwrap().len(), n, "{bad:?}");
    }
    // Past the end but monotone: every segment clamped to the keys, so sorted as if cut there.
    let mut dk = gpu.upload(&k).unwrap();
    mergepath::sort_segments_keys(gpu, &mut dk, &gpu.upload(&[40_000u64, 60_000]).unwrap(), Less).unwrap();
    assert!(gpu.download(&dk).unwrap() == cpu::sort_segments_keys(&k, &[40_000, n], Less), "clamped to the end");
}

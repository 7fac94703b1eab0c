//! Sorted search on the GPU against the CPU oracle (a binary search per needle): every built-in
//! key type and both comparators, lower and upper bounds, u32 and u64 indices, the range, count
//! and contains variants, lengths from 0 to
//! 2^24 + tile, empty and one-sided inputs, heavy duplicates, disjoint ranges, identical inputs,
//! NaN and signed zeros. Skips without a GPU (fails with MERGEPATH_REQUIRE_GPU=1).

mod common;
use common::{gpu, inputs, Dist, Rng, TestKey, DISTS};
use mergepath::{cpu, tuning, Bound, Comparator, Error, Gpu, Greater, Less};

fn check<K: TestKey, C: Comparator<K>>(gpu: &Gpu, needles: &[K], haystack: &[K], comp: C, ctx: &str) {
    let (dn, dh) = (gpu.upload(needles).unwrap(), gpu.upload(haystack).unwrap());
    for bound in [Bound::Lower, Bound::Upper] {
        let want: Vec<u64> = cpu::sorted_search(needles, haystack, bound, comp).into_iter().map(|i| i as u64).collect();
        let mut out32 = gpu.upload(&vec![u32::MAX; needles.len() + 2]).unwrap();
        mergepath::sorted_search(gpu, &dn, &dh, bound, &mut out32, comp).unwrap();
        let got32 = gpu.download(&out32).unwrap();
        assert_eq!(got32[needles.len()..], [u32::MAX; 2], "{ctx} {bound:?}: past the needles untouched");
        let got: Vec<u64> = got32[..needles.len()].iter().map(|&i| i as u64).collect();
        assert!(got == want, "{ctx} {bound:?} u32: first difference at {:?}", got.iter().zip(&want).position(|(g, w)| g != w));
        let mut out64 = gpu.alloc_zeros::<u64>(needles.len()).unwrap();
        mergepath::sorted_search(gpu, &dn, &dh, bound, &mut out64, comp).unwrap();
        assert!(gpu.download(&out64).unwrap() == want, "{ctx} {bound:?} u64");
    }
    // The variants: both bounds at once, counts of equal items, match flags.
    let lower = cpu::sorted_search(needles, haystack, Bound::Lower, comp);
    let upper = cpu::sorted_search(needles, haystack, Bound::Upper, comp);
    let (mut dl, mut du) = (gpu.alloc_zeros::<u64>(needles.len()).unwrap(), gpu.alloc_zeros::<u64>(needles.len()).unwrap());
    mergepath::sorted_search_range(gpu, &dn, &dh, &mut dl, &mut du, comp).unwrap();
    let as_u64 = |v: &[usize]| v.iter().map(|&i| i as u64).collect::<Vec<u64>>();
    assert!(gpu.download(&dl).unwrap() == as_u64(&lower) && gpu.download(&du).unwrap() == as_u64(&upper), "{ctx}: range");
    let counts: Vec<u32> = lower.iter().zip(&upper).map(|(l, u)| (u - l) as u32).collect();
    let mut dc = gpu.upload(&vec![u32::MAX; needles.len()]).unwrap();
    mergepath::sorted_search_count(gpu, &dn, &dh, &mut dc, comp).unwrap();
    assert!(gpu.download(&dc).unwrap() == counts, "{ctx}: equal counts");
    let found: Vec<u8> = counts.iter().map(|&c| u8::from(c > 0)).collect();
    let mut df = gpu.upload(&vec![7u8; needles.len()]).unwrap();
    mergepath::sorted_search_contains(gpu, &dn, &dh, &mut df, comp).unwrap();
    assert!(gpu.download(&df).unwrap() == found, "{ctx}: contains");
}

fn check_type<K: TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, big: bool) {
    let tile = tuning::search_shape(gpu.compute_capability().unwrap(), std::mem::size_of::<K>()).tile();
    let mut rng = Rng(0x5ea7c4 ^ tile as u64);
    let mut sizes = vec![(0, 0), (0, 9), (9, 0), (1, 1), (tile - 1, 1), (1, tile + 1), (tile, tile), (3 * tile + 1, 2 * tile - 1)];
    sizes.extend((0..3).map(|_| (rng.below(200_000) as usize, rng.below(200_000) as usize)));
    if big {
        sizes.extend([(1 << 24, tile), (1000, (1 << 24) + tile)]);
    }
    for (n, m) in sizes {
        for dist in DISTS {
            let seed = rng.next();
            let (needles, haystack) = inputs::<K, C>(n, m, dist, comp, seed);
            let ctx = format!("{} {} needles={n} haystack={m} {dist:?} seed={seed:#x}", std::any::type_name::<K>(), C::NAME);
            check(gpu, &needles, &haystack, comp, &ctx);
            if dist == Dist::Uniform {
                // Identical inputs: every needle equals a run of the haystack.
                check(gpu, &needles, &needles, comp, &format!("{ctx} identical"));
            }
        }
    }
}

macro_rules! search_tests {
    ($($name:ident: $t:ident $big:expr),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            check_type::<$t, Less>(gpu, Less, $big);
            check_type::<$t, Greater>(gpu, Greater, false);
        }
    )*};
}
search_tests!(sorted_search_u8: u8 false, sorted_search_u16: u16 false, sorted_search_u32: u32 true, sorted_search_u64: u64 true, sorted_search_i8: i8 false, sorted_search_i16: i16 false, sorted_search_i32: i32 false, sorted_search_i64: i64 false, sorted_search_f32: f32 true, sorted_search_f64: f64 false);

#[test]
fn one_pass_runs_crossing_many_tiles() {
    let Some(gpu) = gpu() else { return };
    let tile = tuning::search_shape(gpu.compute_capability().unwrap(), 4).tile();
    // Runs of one key over many tiles, on either side or both; empty sides; runs ending exactly
    // at tile boundaries.
    let run = |key: u32, n: usize| vec![key; n];
    let cases: Vec<(Vec<u32>, Vec<u32>)> = vec![
        (run(5, 100_000), run(5, 100_000)),
        (run(5, 10), run(5, 100_000)),
        (run(5, 100_000), run(5, 10)),
        ([run(1, 3), run(5, 50_000), run(9, 2)].concat(), [run(0, tile), run(5, 100_000), run(6, tile - 1)].concat()),
        ([run(4, tile), run(5, tile)].concat(), [run(4, 3 * tile), run(5, 1)].concat()),
        (run(5, 100_000), vec![]),
        (vec![], run(5, 100_000)),
        (run(5, 1), [run(5, tile - 1), run(6, tile)].concat()),
    ];
    for (needles, haystack) in cases {
        let ctx = format!("needles={} haystack={}", needles.len(), haystack.len());
        check(gpu, &needles, &haystack, Less, &ctx);
    }
}

/// Unsorted needles or haystacks (random, reversed, sorted the other way) cross the coarse
/// partitions: every output is still written (the buffers start as `u32::MAX`) and in range.
#[test]
fn unsorted_inputs_give_every_index_in_range() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(0x05ee_d0ff);
    let random = |rng: &mut Rng, n: usize, below: u64| (0..n).map(|_| rng.below(below) as u32).collect::<Vec<u32>>();
    let ascending = |n: usize| (0..n as u32).map(|i| i * 3).collect::<Vec<u32>>();
    let descending = |n: usize| (0..n as u32).rev().map(|i| i * 3).collect::<Vec<u32>>();
    let cases = [
        (random(&mut rng, 100_000, 1 << 20), ascending(70_000)),
        (ascending(100_000), random(&mut rng, 70_000, 1 << 20)),
        (random(&mut rng, 50_000, 1000), random(&mut rng, 300_000, 1000)),
        (descending(200_000), ascending(200_000)),
        (ascending(200_000), descending(150_000)),
        (descending(5_000), ascending(400_000)),
    ];
    for (needles, haystack) in &cases {
        let (n, m) = (needles.len(), haystack.len() as u32);
        let (dn, dh) = (gpu.upload(needles).unwrap(), gpu.upload(haystack).unwrap());
        let ctx = format!("needles={n} haystack={m}");
        let unset = || gpu.upload(&vec![u32::MAX; n]).unwrap();
        for bound in [Bound::Lower, Bound::Upper] {
            let mut out = unset();
            mergepath::sorted_search(gpu, &dn, &dh, bound, &mut out, Less).unwrap();
            assert!(gpu.download(&out).unwrap().iter().all(|&i| i <= m), "{ctx} {bound:?}");
        }
        let (mut lower, mut upper, mut counts) = (unset(), unset(), unset());
        mergepath::sorted_search_range(gpu, &dn, &dh, &mut lower, &mut upper, Less).unwrap();
        let in_range = |v: Vec<u32>| v.iter().all(|&i| i <= m);
        assert!(in_range(gpu.download(&lower).unwrap()) && in_range(gpu.download(&upper).unwrap()), "{ctx} range");
        mergepath::sorted_search_count(gpu, &dn, &dh, &mut counts, Less).unwrap();
        assert!(in_range(gpu.download(&counts).unwrap()), "{ctx} counts");
        let mut found = gpu.upload(&vec![7u8; n]).unwrap();
        mergepath::sorted_search_contains(gpu, &dn, &dh, &mut found, Less).unwrap();
        assert!(gpu.download(&found).unwrap().iter().all(|&f| f <= 1), "{ctx} contains");
    }
}

#[test]
fn sorted_search_errors() {
    let Some(gpu) = gpu() else { return };
    let needles = gpu.upload(&[1u32, 2, 3]).unwrap();
    let haystack = gpu.upload(&[2u32]).unwrap();
    let mut short = gpu.alloc_zeros::<u32>(2).unwrap();
    assert!(matches!(
        mergepath::sorted_search(gpu, &needles, &haystack, Bound::Lower, &mut short, Less),
        Err(Error::OutputTooSmall { .. })
    ));
    let (mut lo, mut short_up) = (gpu.upload(&[9u32; 3]).unwrap(), gpu.alloc_zeros::<u32>(1).unwrap());
    assert!(matches!(
        mergepath::sorted_search_range(gpu, &needles, &haystack, &mut lo, &mut short_up, Less),
        Err(Error::OutputTooSmall { .. })
    ));
    assert_eq!(gpu.download(&lo).unwrap(), [9, 9, 9], "nothing written when an output is too small");
    let mut flags = gpu.alloc_zeros::<u8>(2).unwrap();
    assert!(matches!(mergepath::sorted_search_contains(gpu, &needles, &haystack, &mut flags, Less), Err(Error::OutputTooSmall { .. })));
}

/// 80,000 segments: 50,000 of 0 to 8 items (a third empty), one of them of 3 × 2^20 items, then
/// 30,000 empty ones (tiles of boundaries alone and of items alone). Their starts, the item
/// count, and the offsets (the starts, then the count).
fn long_and_empty_segments(rng: &mut Rng) -> (Vec<u64>, usize, Vec<usize>) {
    let mut lengths: Vec<u64> = (0..50_000).map(|_| if rng.next().is_multiple_of(3) { 0 } else { rng.next() % 9 }).collect();
    lengths[20_000] = 3 << 20;
    lengths.extend(std::iter::repeat_n(0, 30_000));
    let starts: Vec<u64> = lengths.iter().scan(0, |at, &len| Some(std::mem::replace(at, *at + len))).collect();
    let count = lengths.iter().sum::<u64>() as usize;
    let offsets = starts.iter().map(|&s| s as usize).chain([count]).collect();
    (starts, count, offsets)
}

/// Load-balancing search on the device: u64 indices over one long segment among many empty
/// ones and short ones (tiles made of boundaries alone, of items alone), the outputs' tails
/// untouched, the errors, and starts that are not sorted (segments in range).
#[test]
fn load_balancing_search_on_device() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(31);
    let (starts, count, offsets) = long_and_empty_segments(&mut rng);
    let (want_s, want_r) = cpu::load_balancing_search(&offsets);
    let on_device = gpu.upload(&starts).unwrap();
    let (mut segments, mut ranks) = (gpu.upload(&vec![7u64; count + 2]).unwrap(), gpu.upload(&vec![7u64; count + 2]).unwrap());
    mergepath::load_balancing_search_ranks(gpu, count, &on_device, &mut segments, &mut ranks).unwrap();
    let (got_s, got_r) = (gpu.download(&segments).unwrap(), gpu.download(&ranks).unwrap());
    assert!(got_s[..count].iter().zip(&want_s).all(|(&g, &w)| g as usize == w), "segments");
    assert!(got_r[..count].iter().zip(&want_r).all(|(&g, &w)| g as usize == w), "ranks");
    assert_eq!((&got_s[count..], &got_r[count..]), (&[7u64, 7][..], &[7u64, 7][..]), "past the items untouched");

    let mut short = gpu.alloc_zeros::<u64>(count - 1).unwrap();
    let e = mergepath::load_balancing_search(gpu, count, &on_device, &mut short).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "segments", .. }), "{e}");
    let none = gpu.alloc_zeros::<u64>(0).unwrap();
    let e = mergepath::load_balancing_search(gpu, 5, &none, &mut segments).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "{e}");

    let unsorted: Vec<u32> = (0..10_000).map(|_| (rng.next() % 50_000) as u32).collect();
    let on_device = gpu.upload(&unsorted).unwrap();
    let mut out = gpu.alloc_zeros::<u32>(50_000).unwrap();
    mergepath::load_balancing_search(gpu, 50_000, &on_device, &mut out).unwrap();
    assert!(gpu.download(&out).unwrap().iter().all(|&s| (s as usize) < unsorted.len()), "segments in range on unsorted starts");
    let e = gpu.load_balancing_search(50_000, &unsorted, &mut [0u32; 50_000]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "host slices check the starts: {e}");

    // Interval expand of 5-byte values over the same unsorted starts stays in bounds, and wants
    // one value per segment.
    let values = gpu.upload(&(0..unsorted.len()).map(|s| [s as u8; 5]).collect::<Vec<[u8; 5]>>()).unwrap();
    let mut expanded = gpu.alloc_zeros::<[u8; 5]>(50_000).unwrap();
    mergepath::interval_expand(gpu, 50_000, &on_device, &values, &mut expanded).unwrap();
    let short = gpu.alloc_zeros::<[u8; 5]>(3).unwrap();
    let e = mergepath::interval_expand(gpu, 50_000, &on_device, &short, &mut expanded).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { what: "values", .. }), "{e}");
}

/// Interval moves on the device over one long interval among many empty and short ones (u64
/// indices): gather, scatter and move of 1-, 2-, 8-, 12- and 16-byte values (every word size)
/// against the oracle, the output's other items untouched; device sources and destinations
/// past their arrays skipped, never out of bounds; the errors, nothing written; and starts
/// that are not sorted (no access out of bounds).
#[test]
fn interval_moves_on_device() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(37);
    let (starts, count, offsets) = long_and_empty_segments(&mut rng);
    // Gather reads each interval from the input's far end backwards; scatter writes them in
    // reverse order; move does both.
    let from: Vec<u64> = offsets.windows(2).map(|w| (count - w[1]) as u64).collect();
    let to = from.clone();
    check_moves(gpu, &starts, &offsets, &from, &to, |i| i as u8);
    check_moves(gpu, &starts, &offsets, &from, &to, |i| i as u16);
    check_moves(gpu, &starts, &offsets, &from, &to, |i| i as u64 * 3);
    check_moves(gpu, &starts, &offsets, &from, &to, |i| [i as u32, !(i as u32), 5]);
    check_moves(gpu, &starts, &offsets, &from, &to, |i| [i as u64, !(i as u64)]);

    // Sources and destinations past the arrays: those moves are skipped.
    let (input, d_starts) = (gpu.upload(&vec![1u32; 100]).unwrap(), gpu.upload(&[0u32, 40]).unwrap());
    let (far, near) = (gpu.upload(&[u32::MAX - 3, 0]).unwrap(), gpu.upload(&[0u32, 90]).unwrap());
    let mut out = gpu.upload(&vec![7u32; 100]).unwrap();
    mergepath::interval_move(gpu, 80, &d_starts, &far, &near, &input, &mut out).unwrap();
    let got = gpu.download(&out).unwrap();
    assert!(got[..90].iter().all(|&v| v == 7) && got[90..].iter().all(|&v| v == 1), "only the 10 moves in range");

    let e = mergepath::interval_gather(gpu, 80, &d_starts, &far, &input, &mut out.slice_mut(..79)).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "out", .. }), "{e}");
    let e = mergepath::interval_scatter(gpu, 101, &d_starts, &near, &input, &mut out).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "input", .. }), "{e}");
    let one = gpu.upload(&[0u32]).unwrap();
    let e = mergepath::interval_move(gpu, 80, &d_starts, &one, &near, &input, &mut out).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { what: "sources", .. }), "{e}");
    assert_eq!(gpu.download(&out).unwrap(), got, "errors write nothing");
    let e = gpu.interval_gather(3, &[0u32, 2], &[0u32, 100], &[1u32; 100], &mut [0; 3]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "sources", .. }), "host slices check the intervals: {e}");

    // Device starts that are not sorted: every move in bounds (under memcheck), the values
    // written the input's.
    let unsorted: Vec<u32> = (0..10_000).map(|_| (rng.next() % 50_000) as u32).collect();
    let firsts: Vec<u32> = (0..10_000).map(|_| (rng.next() % 50_000) as u32).collect();
    let (d_unsorted, d_firsts) = (gpu.upload(&unsorted).unwrap(), gpu.upload(&firsts).unwrap());
    let input = gpu.upload(&(0..50_000u32).map(|i| i + 1).collect::<Vec<u32>>()).unwrap();
    for op in 0..3 {
        let mut out = gpu.alloc_zeros::<u32>(50_000).unwrap();
        match op {
            0 => mergepath::interval_gather(gpu, 50_000, &d_unsorted, &d_firsts, &input, &mut out),
            1 => mergepath::interval_scatter(gpu, 50_000, &d_unsorted, &d_firsts, &input, &mut out),
            _ => mergepath::interval_move(gpu, 50_000, &d_unsorted, &d_firsts, &d_firsts, &input, &mut out),
        }
        .unwrap();
        assert!(gpu.download(&out).unwrap().iter().all(|&v| v <= 50_000), "op {op}: input values or untouched");
    }
}

/// Gather, scatter and move of values `item(i)` on the device against the oracle.
fn check_moves<V: mergepath::Value + cudarc::driver::DeviceRepr + PartialEq + std::fmt::Debug>(gpu: &Gpu, starts: &[u64], offsets: &[usize], from: &[u64], to: &[u64], item: impl Fn(usize) -> V) {
    let count = offsets[offsets.len() - 1];
    let input: Vec<V> = (0..count).map(&item).collect();
    let untouched = item(usize::MAX);
    let as_usize = |v: &[u64]| v.iter().map(|&i| i as usize).collect::<Vec<usize>>();
    let (d_starts, d_from, d_to, d_input) = (gpu.upload(starts).unwrap(), gpu.upload(from).unwrap(), gpu.upload(to).unwrap(), gpu.upload(&input).unwrap());
    for (reads, writes) in [(true, false), (false, true), (true, true)] {
        let mut want = vec![untouched; count + 2];
        cpu::interval_move(&input, offsets, reads.then(|| as_usize(from)).as_deref(), writes.then(|| as_usize(to)).as_deref(), &mut want);
        let mut out = gpu.upload(&vec![untouched; count + 2]).unwrap();
        match (reads, writes) {
            (true, false) => mergepath::interval_gather(gpu, count, &d_starts, &d_from, &d_input, &mut out).unwrap(),
            (false, true) => mergepath::interval_scatter(gpu, count, &d_starts, &d_to, &d_input, &mut out).unwrap(),
            _ => mergepath::interval_move(gpu, count, &d_starts, &d_from, &d_to, &d_input, &mut out).unwrap(),
        }
        let got = gpu.download(&out).unwrap();
        let first = got.iter().zip(&want).position(|(g, w)| g != w);
        assert!(first.is_none(), "{} bytes, reads {reads} writes {writes}: first difference at {first:?}", size_of::<V>());
    }
}

/// Segmented reduction on the device: one segment of 3 Mi values among many empty and short
/// ones (u64 starts), each reduction against the sequential fold, float sums of small integers
/// (exact in any grouping), no values at all, the output's tail untouched, the errors, and
/// starts that are not sorted (no access out of bounds).
#[test]
fn segmented_reduce_on_device() {
    use mergepath::Reduction::{Max, Min, Sum};
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(37);
    let (starts, count, offsets) = long_and_empty_segments(&mut rng);
    let values: Vec<i32> = (0..count).map(|_| rng.next() as i32).collect();
    let (on_device, device_values) = (gpu.upload(&starts).unwrap(), gpu.upload(&values).unwrap());
    let segments = starts.len();
    for (reduction, op) in [(Sum, i32::wrapping_add as fn(i32, i32) -> i32), (Min, |a: i32, b: i32| a.min(b)), (Max, |a: i32, b: i32| a.max(b))] {
        let want = cpu::segmented_reduce(&values, &offsets, -5, op);
        let mut out = gpu.upload(&vec![7i32; segments + 2]).unwrap();
        mergepath::segmented_reduce(gpu, &on_device, &device_values, &mut out, reduction, -5, Less).unwrap();
        let got = gpu.download(&out).unwrap();
        assert_eq!(&got[..segments], &want[..], "{reduction:?}");
        assert_eq!(&got[segments..], &[7, 7], "{reduction:?}: past the segments untouched");
    }

    let floats: Vec<f32> = values.iter().map(|&v| (v & 7) as f32).collect();
    let want = cpu::segmented_reduce(&floats, &offsets, 0.0, |a, b| a + b);
    let mut sums = vec![0f32; segments];
    gpu.segmented_reduce(&starts, &floats, &mut sums, Sum, 0.0, Less).unwrap();
    assert_eq!(sums, want, "float sums of small integers");

    let mut out = gpu.alloc_zeros::<i32>(segments).unwrap();
    let nothing = gpu.alloc_zeros::<i32>(0).unwrap();
    let all_zero = gpu.alloc_zeros::<u64>(segments).unwrap();
    mergepath::segmented_reduce(gpu, &all_zero, &nothing, &mut out, Max, 9, Less).unwrap();
    assert!(gpu.download(&out).unwrap().iter().all(|&v| v == 9), "no values: every segment empty");
    let mut short = gpu.alloc_zeros::<i32>(segments - 1).unwrap();
    let e = mergepath::segmented_reduce(gpu, &on_device, &device_values, &mut short, Sum, 0, Less).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "out", .. }), "{e}");
    let none = gpu.alloc_zeros::<u64>(0).unwrap();
    let e = mergepath::segmented_reduce(gpu, &none, &device_values, &mut out, Sum, 0, Less).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "{e}");

    let unsorted: Vec<u32> = (0..10_000).map(|_| (rng.next() % 50_000) as u32).collect();
    let (on_device, few) = (gpu.upload(&unsorted).unwrap(), gpu.upload(&values[..50_000]).unwrap());
    let mut out = gpu.alloc_zeros::<i32>(unsorted.len()).unwrap();
    mergepath::segmented_reduce(gpu, &on_device, &few, &mut out, Min, 0, Less).unwrap();
    gpu.synchronize().unwrap();
    let e = gpu.segmented_reduce(&unsorted, &values[..50_000], &mut [0i32; 10_000], Min, 0, Less).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "host slices check the starts: {e}");
}

/// A record (24 bytes: wider than the kernels' key tiles) whose order leaves `seq` out, so
/// which of equal records a fold keeps shows.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
struct Scored {
    score: f32,
    id: u32,
    seq: u64,
    tag: u64,
}

/// Segmented minima and maxima of records on the device and on host slices, in both orders:
/// few distinct orders (ties everywhere, the first of equals kept), one long segment among
/// empty ones, against the host backend's fold; reduce-by-key with records for values; no
/// values at all; a sum refused.
#[test]
fn segmented_reduce_of_records() {
    use mergepath::Reduction::{Max, Min, Sum};
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(43);
    let (starts, count, _) = long_and_empty_segments(&mut rng);
    let values: Vec<Scored> = (0..count as u64).map(|seq| Scored { score: rng.below(3) as f32, id: rng.below(4) as u32, seq, tag: rng.next() }).collect();
    let empty = Scored { score: -1.0, id: 9, seq: u64::MAX, tag: 0 };
    let (on_device, device_values) = (gpu.upload(&starts).unwrap(), gpu.upload(&values).unwrap());
    let segments = starts.len();
    for reduction in [Min, Max] {
        for descending in [false, true] {
            let (mut want, mut host_slices) = (vec![empty; segments], vec![empty; segments]);
            let mut out = gpu.upload(&vec![empty; segments + 1]).unwrap();
            if descending {
                mergepath::host::segmented_reduce(&starts, &values, &mut want, reduction, empty, Greater).unwrap();
                mergepath::segmented_reduce(gpu, &on_device, &device_values, &mut out, reduction, empty, Greater).unwrap();
                gpu.segmented_reduce(&starts, &values, &mut host_slices, reduction, empty, Greater).unwrap();
            } else {
                mergepath::host::segmented_reduce(&starts, &values, &mut want, reduction, empty, Less).unwrap();
                mergepath::segmented_reduce(gpu, &on_device, &device_values, &mut out, reduction, empty, Less).unwrap();
                gpu.segmented_reduce(&starts, &values, &mut host_slices, reduction, empty, Less).unwrap();
            }
            let got = gpu.download(&out).unwrap();
            assert!(got[..segments] == want[..], "{reduction:?}, descending {descending}");
            assert_eq!(got[segments], empty, "past the segments untouched");
            assert!(host_slices == want, "{reduction:?} on host slices, descending {descending}");
        }
    }
    // Reduce-by-key with records for values: the runs of sorted group keys, each run's greatest
    // record (the first of equal ones), on the device and on host slices.
    let groups: Vec<u32> = (0..values.len()).map(|i| (i / 7 + i / 1000) as u32).collect();
    let mut want = (vec![0u32; groups.len()], vec![empty; groups.len()]);
    let runs = mergepath::host::reduce_by_key(&groups, &values, &mut want.0, &mut want.1, Max, Less, Less).unwrap();
    let (on_device, mut keys_out, mut values_out) = (gpu.upload(&groups).unwrap(), gpu.alloc_zeros::<u32>(groups.len()).unwrap(), gpu.alloc_zeros::<Scored>(groups.len()).unwrap());
    assert_eq!(mergepath::reduce_by_key(gpu, &on_device, &device_values, &mut keys_out, &mut values_out, Max, Less, Less).unwrap(), runs);
    assert_eq!(gpu.download(&keys_out).unwrap()[..runs], want.0[..runs]);
    assert!(gpu.download(&values_out).unwrap()[..runs] == want.1[..runs], "reduce_by_key of records");
    let mut host_slices = (vec![0u32; groups.len()], vec![empty; groups.len()]);
    assert_eq!(gpu.reduce_by_key(&groups, &values, &mut host_slices.0, &mut host_slices.1, Max, Less, Less).unwrap(), runs);
    assert!(host_slices.1[..runs] == want.1[..runs], "reduce_by_key of records on host slices");

    let none = gpu.alloc_zeros::<Scored>(0).unwrap();
    let all_zero = gpu.alloc_zeros::<u32>(5).unwrap();
    let mut out = gpu.alloc_zeros::<Scored>(5).unwrap();
    mergepath::segmented_reduce(gpu, &all_zero, &none, &mut out, Min, empty, Less).unwrap();
    assert!(gpu.download(&out).unwrap().iter().all(|&v| v == empty), "no values: every segment empty");
    let e = mergepath::segmented_reduce(gpu, &all_zero, &none, &mut out, Sum, empty, Less).unwrap_err();
    assert!(matches!(e, Error::NotSupported { .. }), "{e}");
}

/// Runs of equal keys on the device: 2^22 keys in runs of 1 to 3,000 (runs crossing
/// many tiles), unique, lengths (u32 and u64) and sums against the sequential runs, the output
/// room checked before anything is written, no keys, and keys from a view that is not
/// 16-byte aligned.
#[test]
fn runs_on_device() {
    use mergepath::Reduction::Sum;
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(41);
    let mut keys = Vec::new();
    while keys.len() < 1 << 22 {
        let longest = if rng.below(4) == 0 { 3000 } else { 3 };
        let (key, len) = (rng.next() as u32, 1 + rng.below(longest) as usize);
        keys.extend(std::iter::repeat_n(key, len));
    }
    let values: Vec<u64> = (0..keys.len()).map(|_| rng.next()).collect();
    let (want_keys, lengths) = cpu::run_length_encode(&keys, Less);
    let (_, want_sums) = cpu::reduce_by_key(&keys, &values, u64::wrapping_add, Less);
    let runs = want_keys.len();
    let (dk, dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&values).unwrap());
    let mut out = gpu.upload(&vec![7u32; runs + 1]).unwrap();
    assert_eq!(mergepath::unique(gpu, &dk, &mut out, Less).unwrap(), runs);
    let got = gpu.download(&out).unwrap();
    assert_eq!((&got[..runs], got[runs]), (&want_keys[..], 7), "unique, and the tail untouched");
    let mut lengths32 = gpu.alloc_zeros::<u32>(runs).unwrap();
    assert_eq!(mergepath::run_length_encode(gpu, &dk, &mut out, &mut lengths32, Less).unwrap(), runs);
    assert!(gpu.download(&lengths32).unwrap().iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "u32 lengths");
    let mut lengths64 = vec![0u64; runs];
    assert_eq!(gpu.run_length_encode(&keys, &mut vec![0u32; runs], &mut lengths64, Less).unwrap(), runs);
    assert!(lengths64.iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "u64 lengths (host slices)");
    let mut sums = gpu.alloc_zeros::<u64>(runs).unwrap();
    assert_eq!(mergepath::reduce_by_key(gpu, &dk, &dv, &mut out, &mut sums, Sum, Less, Less).unwrap(), runs);
    assert_eq!(gpu.download(&sums).unwrap(), want_sums, "sums by key");

    let mut short = gpu.upload(&vec![5u32; runs - 1]).unwrap();
    let e = mergepath::unique(gpu, &dk, &mut short, Less).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "out", .. }), "{e}");
    assert!(gpu.download(&short).unwrap().iter().all(|&k| k == 5), "nothing written");
    let none = gpu.alloc_zeros::<u32>(0).unwrap();
    assert_eq!(mergepath::unique(gpu, &none, &mut out, Less).unwrap(), 0);

    // Keys not 16-byte aligned (a view from the second key on): the tiles load them by
    // threads, not by bulk copies.
    let (want_keys, lengths) = cpu::run_length_encode(&keys[1..], Less);
    let runs = want_keys.len();
    let mut lengths32 = gpu.alloc_zeros::<u32>(runs).unwrap();
    assert_eq!(mergepath::run_length_encode(gpu, &dk.slice(1..), &mut out, &mut lengths32, Less).unwrap(), runs);
    assert_eq!(&gpu.download(&out).unwrap()[..runs], &want_keys[..], "unique, keys from the second on");
    assert!(gpu.download(&lengths32).unwrap().iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "lengths, keys from the second on");
    // Byte keys (16 a bulk copy's unit), from the third on.
    let bytes: Vec<u8> = keys.iter().map(|&k| (k % 7) as u8).collect();
    let (want_bytes, lengths) = cpu::run_length_encode(&bytes[2..], Less);
    let (db, mut out8) = (gpu.upload(&bytes).unwrap(), gpu.alloc_zeros::<u8>(bytes.len()).unwrap());
    let mut lengths32 = gpu.alloc_zeros::<u32>(bytes.len()).unwrap();
    assert_eq!(mergepath::run_length_encode(gpu, &db.slice(2..), &mut out8, &mut lengths32, Less).unwrap(), want_bytes.len());
    assert_eq!(&gpu.download(&out8).unwrap()[..want_bytes.len()], &want_bytes[..], "u8 keys");
    assert!(gpu.download(&lengths32).unwrap().iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "u8 keys' lengths");

    // Room for a run per key: the runs' kernel writes the lengths itself (runs across many
    // tiles, tiles with no run starting in them, a last run from the first key).
    let one_run = vec![3u32; 100_000];
    let long_inside = [vec![1u32; 7], vec![2u32; 50_000], vec![3u32]].concat();
    for keys in [&keys, &one_run, &long_inside] {
        let (want_keys, lengths) = cpu::run_length_encode(keys, Less);
        let (n, runs) = (keys.len(), want_keys.len());
        let dk = gpu.upload(keys).unwrap();
        let (mut out, mut l32, mut l64) = (gpu.alloc_zeros::<u32>(n).unwrap(), gpu.upload(&vec![9u32; n]).unwrap(), gpu.upload(&vec![9u64; n]).unwrap());
        assert_eq!(mergepath::run_length_encode(gpu, &dk, &mut out, &mut l32, Less).unwrap(), runs);
        assert_eq!(&gpu.download(&out).unwrap()[..runs], &want_keys[..]);
        let got = gpu.download(&l32).unwrap();
        assert!(got[..runs].iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "u32 lengths, {n} keys");
        assert!(got[runs..].iter().all(|&g| g == 9), "the tail untouched");
        assert_eq!(mergepath::run_length_encode(gpu, &dk, &mut out, &mut l64, Less).unwrap(), runs);
        let got = gpu.download(&l64).unwrap();
        assert!(got[..runs].iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "u64 lengths, {n} keys");
        assert!(got[runs..].iter().all(|&g| g == 9), "the tail untouched");
    }

    // 8-byte keys (tiles of their own shape; most of them leave their runs to the second
    // kernel), their runs' keys, lengths and sums.
    let wide: Vec<u64> = keys.iter().map(|&k| (k as u64) << 32 | 5).collect();
    let (want_keys, lengths) = cpu::run_length_encode(&wide, Less);
    let runs = want_keys.len();
    let dw = gpu.upload(&wide).unwrap();
    let (mut out, mut l32, mut sums) = (gpu.alloc_zeros::<u64>(wide.len()).unwrap(), gpu.alloc_zeros::<u32>(wide.len()).unwrap(), gpu.alloc_zeros::<u64>(runs).unwrap());
    assert_eq!(mergepath::run_length_encode(gpu, &dw, &mut out, &mut l32, Less).unwrap(), runs);
    assert_eq!(&gpu.download(&out).unwrap()[..runs], &want_keys[..], "u64 keys");
    assert!(gpu.download(&l32).unwrap().iter().zip(&lengths).all(|(&g, &w)| g as usize == w), "u64 keys' lengths");
    assert_eq!(mergepath::reduce_by_key(gpu, &dw, &dv, &mut out, &mut sums, Sum, Less, Less).unwrap(), runs);
    assert_eq!(gpu.download(&sums).unwrap(), want_sums, "sums by u64 key");
}

/// Counts past 2^32 with `u64` indices: interval expand of 2^32 + 2^20 byte values over
/// segments whose boundaries straddle 2^32 (one longer than 2^32 items, empty ones beside
/// it), then the segmented maximum and minimum of the expanded bytes, which must give each
/// segment's value back (and `empty` for the empty ones), and the interval gather of the
/// items around 2^32.
#[test]
fn load_balancing_family_past_2_pow_32() {
    use mergepath::Reduction::{Max, Min};
    let Some(gpu) = gpu() else { return };
    let count = (1usize << 32) + (1 << 20);
    let lengths = [1000usize, (1 << 32) - 1500, 0, 700, 0, 1 << 19, count - (1 << 32) - (1 << 19) - 200];
    assert_eq!(lengths.iter().sum::<usize>(), count);
    let starts: Vec<u64> = lengths.iter().scan(0u64, |at, &l| Some(std::mem::replace(at, *at + l as u64))).collect();
    let values: Vec<u8> = (0..lengths.len()).map(|s| 10 + s as u8).collect();
    let (d_starts, d_values) = (gpu.upload(&starts).unwrap(), gpu.upload(&values).unwrap());
    let mut expanded = gpu.alloc_zeros::<u8>(count).unwrap();
    mergepath::interval_expand(gpu, count, &d_starts, &d_values, &mut expanded).unwrap();
    let got = gpu.download(&expanded).unwrap();
    let mut at = 0;
    for (s, &l) in lengths.iter().enumerate() {
        assert!(got[at..at + l].iter().all(|&v| v == values[s]), "segment {s} (items {at}..{})", at + l);
        at += l;
    }
    drop(got);
    for (reduction, empty) in [(Max, 0u8), (Min, 255u8)] {
        let mut out = gpu.alloc_zeros::<u8>(lengths.len()).unwrap();
        mergepath::segmented_reduce(gpu, &d_starts, &expanded, &mut out, reduction, empty, Less).unwrap();
        let want: Vec<u8> = lengths.iter().zip(&values).map(|(&l, &v)| if l == 0 { empty } else { v }).collect();
        assert_eq!(gpu.download(&out).unwrap(), want, "{reduction:?} of the expanded values");
    }
    // The 2^20 items from 2^32 - 2^19 gathered in two intervals, one ending at 2^32.
    let around = 1usize << 20;
    let (gather_starts, sources) = (gpu.upload(&[0u64, (around / 2) as u64]).unwrap(), gpu.upload(&[(1u64 << 32) - (around / 2) as u64, 1 << 32]).unwrap());
    let mut gathered = gpu.alloc_zeros::<u8>(around).unwrap();
    mergepath::interval_gather(gpu, around, &gather_starts, &sources, &expanded, &mut gathered).unwrap();
    let want: Vec<u8> = (0..around).map(|i| {
        let item = (1u64 << 32) - (around / 2) as u64 + i as u64;
        values[starts.iter().rposition(|&s| s <= item).unwrap()]
    }).collect();
    assert_eq!(gpu.download(&gathered).unwrap(), want, "gather around 2^32");
}

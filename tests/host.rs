//! The host backend (`mergepath::host`) against the sequential oracle (`mergepath::cpu`) and
//! `slice::sort_by`, run in CI without a GPU. A quarter of each property's cases run under 2
//! to 4 threads and a small grain (down to 1 item per worker), so small inputs take the
//! parallel paths: Merge Path spans, sort rounds with odd run counts, Balanced Path pieces,
//! segment groups; the rest on the calling thread.
//! Proptest cases: 10,000 for each of merge, sort, sorted search, multiset operations and
//! segmented sort (each case checks every function of its family), plus floats, a derived
//! key, unsorted inputs, large inputs on the default settings, and the error cases.

mod common;
#[path = "common/hit.rs"]
mod hit;
use hit::{hits, ByX, Hit};
use common::{assert_same, inputs, Dist, Rng, TestKey, DISTS};
use mergepath::{cpu, host, Bound, Comparator, Error, Greater, Key, Less, SetOperation};
use proptest::prelude::*;

/// Cases of each of the five operation families' properties.
const CASES: u32 = 10_000;

/// (threads, grain) for one case (0: the default): a quarter of the cases split small inputs
/// over 2 to 4 threads (thread starts dominate the suite's time, so not all of them).
fn settings() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        3 => Just((1usize, 0usize)),
        1 => (2usize..=4, prop_oneof![Just(1usize), Just(2), 3usize..40, Just(300)]),
    ]
}

/// Runs `f` under `settings`.
fn under<R>((threads, grain): (usize, usize), f: impl FnOnce() -> R) -> R {
    host::with_threads(threads, || host::with_grain(grain, f))
}

/// Keys with heavy duplicates (a tiny range) or few (a wide one); mostly short, some long.
fn keys() -> impl Strategy<Value = Vec<u32>> {
    (prop_oneof![Just(1u32), Just(3), Just(20), Just(u32::MAX)], prop_oneof![5 => 0usize..40, 1 => 0usize..1000])
        .prop_flat_map(|(range, len)| proptest::collection::vec(0..=range, len))
}

fn sorted_by<K: Key, C: Comparator<K>>(mut v: Vec<K>, comp: C) -> Vec<K> {
    v.sort_by(|x, y| cpu::ordering(&comp, x, y));
    v
}

/// Positions `start..start + n` as values, so the oracle's stable results check stability.
fn positions(start: usize, n: usize) -> Vec<u32> {
    (start as u32..(start + n) as u32).collect()
}

fn check_merge<K: Key + std::fmt::Debug, C: Comparator<K>>(a: &[K], b: &[K], comp: C) {
    let total = a.len() + b.len();
    let want = cpu::merge_keys(a, b, comp);
    // One item past the result: left as it is.
    let mut out = vec![a.first().or(b.first()).copied().unwrap_or_else(K::zeroed); total + 1];
    let spare = out[total];
    host::merge_keys(a, b, &mut out, comp).unwrap();
    assert_same(&out[..total], &want, "merge_keys");
    assert_same(&out[total..], &[spare], "merge_keys past the result");

    let (av, bv) = (positions(0, a.len()), positions(a.len(), b.len()));
    let (want_k, want_v) = cpu::merge_pairs(a, &av, b, &bv, comp);
    let (mut ok, mut ov) = (vec![K::zeroed(); total], vec![u32::MAX; total + 2]);
    host::merge_pairs(a, &av, b, &bv, &mut ok, &mut ov, comp).unwrap();
    assert_same(&ok, &want_k, "merge_pairs keys");
    assert_eq!(&ov[..total], &want_v[..], "merge_pairs values");
    assert_eq!(&ov[total..], &[u32::MAX; 2], "merge_pairs values past the result");
}

fn check_sort<K: Key + std::fmt::Debug, C: Comparator<K>>(keys: &[K], comp: C) {
    let n = keys.len();
    let want = sorted_by(keys.to_vec(), comp);
    let mut got = keys.to_vec();
    host::sort_keys(&mut got, comp).unwrap();
    assert_same(&got, &want, "sort_keys");

    let mut copy = vec![K::zeroed(); n + 1];
    host::sort_keys_copy(keys, &mut copy, comp).unwrap();
    assert_same(&copy[..n], &want, "sort_keys_copy");
    assert_same(&copy[n..], &[K::zeroed()], "sort_keys_copy past the result");

    let values = positions(0, n);
    let (want_k, want_v) = cpu::sort_pairs(keys, &values, comp);
    let (mut k, mut v) = (keys.to_vec(), values.clone());
    host::sort_pairs(&mut k, &mut v, comp).unwrap();
    assert_same(&k, &want_k, "sort_pairs keys");
    assert_eq!(v, want_v, "sort_pairs values (stability)");

    let (mut ko, mut vo) = (vec![K::zeroed(); n], vec![0u32; n + 3]);
    host::sort_pairs_copy(keys, &values, &mut ko, &mut vo, comp).unwrap();
    assert_same(&ko, &want_k, "sort_pairs_copy keys");
    assert_eq!(&vo[..n], &want_v[..], "sort_pairs_copy values");

    let (mut k32, mut i32s) = (keys.to_vec(), vec![0u32; n]);
    host::sort_indices(&mut k32, &mut i32s, comp).unwrap();
    assert_same(&k32, &want_k, "sort_indices keys");
    assert_eq!(i32s, want_v, "sort_indices u32");
    let (mut k64, mut i64s) = (keys.to_vec(), vec![0u64; n]);
    host::sort_indices(&mut k64, &mut i64s, comp).unwrap();
    assert_eq!(i64s, want_v.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(), "sort_indices u64");
}

fn check_search<K: Key, C: Comparator<K>>(needles: &[K], haystack: &[K], comp: C) {
    let n = needles.len();
    let lower = cpu::sorted_search(needles, haystack, Bound::Lower, comp);
    let upper = cpu::sorted_search(needles, haystack, Bound::Upper, comp);
    let as_u32 = |v: &[usize]| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
    for (bound, want) in [(Bound::Lower, &lower), (Bound::Upper, &upper)] {
        let mut out = vec![7u32; n + 1];
        host::sorted_search(needles, haystack, bound, &mut out, comp).unwrap();
        assert_eq!(&out[..n], &as_u32(want)[..], "sorted_search {bound:?}");
        assert_eq!(out[n], 7, "sorted_search past the result");
        let mut out64 = vec![0u64; n];
        host::sorted_search(needles, haystack, bound, &mut out64, comp).unwrap();
        assert_eq!(out64, want.iter().map(|&x| x as u64).collect::<Vec<_>>(), "sorted_search u64 {bound:?}");
    }
    let (mut lo, mut hi) = (vec![0u32; n], vec![0u32; n]);
    host::sorted_search_range(needles, haystack, &mut lo, &mut hi, comp).unwrap();
    assert_eq!((lo, hi), (as_u32(&lower), as_u32(&upper)), "sorted_search_range");
    let mut counts = vec![0u64; n];
    host::sorted_search_count(needles, haystack, &mut counts, comp).unwrap();
    let want_counts: Vec<u64> = lower.iter().zip(&upper).map(|(&l, &u)| (u - l) as u64).collect();
    assert_eq!(counts, want_counts, "sorted_search_count");
    let mut found = vec![9u8; n];
    host::sorted_search_contains(needles, haystack, &mut found, comp).unwrap();
    assert_eq!(found, want_counts.iter().map(|&c| u8::from(c > 0)).collect::<Vec<_>>(), "sorted_search_contains");
}

fn check_sets<K: Key + std::fmt::Debug, C: Comparator<K>>(a: &[K], b: &[K], short: usize, comp: C) {
    let (av, bv) = (positions(0, a.len()), positions(a.len(), b.len()));
    for op in SetOperation::ALL {
        let ctx = format!("{op:?}");
        let want = cpu::set_operation_keys(op, a, b, comp);
        let len = want.len();
        assert_eq!(host::set_operation_len(op, a, b, comp), Ok(len), "{ctx}: set_operation_len");
        let mut out = vec![K::zeroed(); op.max_len(a.len(), b.len()) + 1];
        assert_eq!(host::set_operation_keys(op, a, b, &mut out, comp), Ok(len), "{ctx}");
        assert_same(&out[..len], &want, &ctx);
        assert!(out[len..].iter().all(|k| bytemuck::bytes_of(k) == bytemuck::bytes_of(&K::zeroed())), "{ctx}: past the result");

        let (want_k, want_v) = cpu::set_operation_pairs(op, a, &av, b, &bv, comp);
        let (mut ok, mut ov) = (vec![K::zeroed(); len + 1], vec![0u32; len + 2]);
        assert_eq!(host::set_operation_pairs(op, a, &av, b, &bv, &mut ok, &mut ov, comp), Ok(len), "{ctx} pairs");
        assert_same(&ok[..len], &want_k, &ctx);
        assert_eq!(&ov[..len], &want_v[..], "{ctx}: pair values");

        // A shorter output (one operation per case): the first items and the full length in
        // the error.
        if op != SetOperation::ALL[short % 4] {
            continue;
        }
        let cap = short % (len + 1);
        let mut out = vec![K::zeroed(); cap];
        let res = host::set_operation_keys(op, a, b, &mut out, comp);
        let expect = if cap < len { Err(Error::OutputTooSmall { what: "set operation output", needed: len, got: cap }) } else { Ok(len) };
        assert_eq!(res, expect, "{ctx}: truncated");
        assert_same(&out, &want[..cap], &ctx);
        let (mut ok, mut ov) = (vec![K::zeroed(); cap + 1], vec![0u32; cap]);
        assert_eq!(host::set_operation_pairs(op, a, &av, b, &bv, &mut ok, &mut ov, comp), expect, "{ctx}: truncated pairs");
        assert_same(&ok[..cap], &want_k[..cap], &ctx);
        assert_eq!(ov, want_v[..cap], "{ctx}: truncated pair values");
    }
}

fn check_segments<K: Key + std::fmt::Debug, C: Comparator<K>>(keys: &[K], offsets: &[usize], comp: C) {
    let want = cpu::sort_segments_keys(keys, offsets, comp);
    let mut got = keys.to_vec();
    host::sort_segments_keys(&mut got, offsets, comp).unwrap();
    assert_same(&got, &want, "sort_segments_keys");
    let values = positions(0, keys.len());
    let (want_k, want_v) = cpu::sort_segments_pairs(keys, &values, offsets, comp);
    let (mut k, mut v) = (keys.to_vec(), values);
    host::sort_segments_pairs(&mut k, &mut v, offsets, comp).unwrap();
    assert_same(&k, &want_k, "sort_segments_pairs keys");
    assert_eq!(v, want_v, "sort_segments_pairs values");
}

/// Offsets from cut points: sorted, within `0..=n`.
fn offsets_from(mut cuts: Vec<usize>, n: usize) -> Vec<usize> {
    for c in &mut cuts {
        *c %= n + 1;
    }
    cuts.sort();
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn merge_equals_the_oracle(a in keys(), b in keys(), greater: bool, s in settings()) {
        under(s, || if greater {
            check_merge(&sorted_by(a, Greater), &sorted_by(b, Greater), Greater)
        } else {
            check_merge(&sorted_by(a, Less), &sorted_by(b, Less), Less)
        });
    }

    #[test]
    fn sort_equals_sort_by(keys in keys(), greater: bool, s in settings()) {
        under(s, || if greater { check_sort(&keys, Greater) } else { check_sort(&keys, Less) });
    }

    #[test]
    fn sorted_search_equals_the_oracle(needles in keys(), haystack in keys(), greater: bool, s in settings()) {
        under(s, || if greater {
            check_search(&sorted_by(needles, Greater), &sorted_by(haystack, Greater), Greater)
        } else {
            check_search(&sorted_by(needles, Less), &sorted_by(haystack, Less), Less)
        });
    }

    #[test]
    fn set_operations_equal_the_oracle(a in keys(), b in keys(), greater: bool, short: usize, s in settings()) {
        under(s, || if greater {
            check_sets(&sorted_by(a, Greater), &sorted_by(b, Greater), short, Greater)
        } else {
            check_sets(&sorted_by(a, Less), &sorted_by(b, Less), short, Less)
        });
    }

    #[test]
    fn segmented_sort_equals_the_oracle(keys in keys(), cuts in proptest::collection::vec(any::<usize>(), 0..12), greater: bool, s in settings()) {
        let offsets = offsets_from(cuts, keys.len());
        under(s, || if greater { check_segments(&keys, &offsets, Greater) } else { check_segments(&keys, &offsets, Less) });
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Unsorted inputs: never a panic; merges (two-way and multiway) keep the keys, indices stay
    /// in range.
    #[test]
    fn unsorted_inputs_never_panic(a in keys(), b in keys(), s in settings()) {
        under(s, || {
            let mut out = vec![0u32; a.len() + b.len()];
            host::merge_keys(&a, &b, &mut out, Less).unwrap();
            let mut want = [a.clone(), b.clone()].concat();
            want.sort();
            out.sort();
            assert_eq!(out, want);
            let mut idx = vec![0u32; a.len()];
            host::sorted_search(&a, &b, Bound::Upper, &mut idx, Less).unwrap();
            assert!(idx.iter().all(|&i| i as usize <= b.len()));
            host::sorted_search_count(&a, &b, &mut idx, Less).unwrap();
            for op in SetOperation::ALL {
                let mut out = vec![0u32; op.max_len(a.len(), b.len())];
                let len = host::set_operation_keys(op, &a, &b, &mut out, Less).unwrap();
                assert!(len <= out.len());
            }
            let inputs = [&a[..], &b[..], &a[a.len() / 2..]];
            let mut out = vec![0u32; a.len() + b.len() + (a.len() - a.len() / 2)];
            host::merge_multiway_keys(&inputs, &mut out, Less).unwrap();
            let mut want = inputs.concat();
            want.sort();
            out.sort();
            assert_eq!(out, want);
        });
    }
}

/// Floats with NaNs of both signs, infinities and signed zeros, in both orders; bitwise
/// comparisons (so -0.0 and +0.0 and NaN payloads must land where the oracle puts them).
#[test]
fn floats_with_specials() {
    fn run<K: TestKey>()
    where
        Less: Comparator<K>,
        Greater: Comparator<K>,
    {
        for seed in 0..40u64 {
            let mut rng = Rng(seed);
            let (la, lb) = (rng.below(300) as usize, rng.below(300) as usize);
            let s = (1 + seed as usize % 4, [1, 5, 0][seed as usize % 3]);
            let dists = if seed % 4 == 0 { &DISTS[..] } else { &DISTS[seed as usize % 5..][..1] };
            for &dist in dists {
                under(s, || {
                    let (a, b) = inputs::<K, _>(la, lb, dist, Less, seed);
                    check_merge(&a, &b, Less);
                    check_sort(&[a.clone(), b.clone()].concat(), Less);
                    check_search(&a, &b, Less);
                    check_sets(&a, &b, seed as usize, Less);
                    let (a, b) = inputs::<K, _>(la, lb, dist, Greater, seed);
                    check_merge(&a, &b, Greater);
                    check_sort(&[b.clone(), a.clone()].concat(), Greater);
                    check_segments(&[a, b].concat(), &[0, la / 2, la, la + lb / 3, la + lb], Greater);
                });
            }
        }
    }
    run::<f32>();
    run::<f64>();
}


#[test]
fn derived_keys() {
    fn run<C: Comparator<Hit>>(comp: C) {
        let mut rng = Rng(0xd3);
        for (i, n) in [0usize, 1, 2, 17, 300, 1000, 5000].into_iter().enumerate() {
            under((1 + i % 4, [1, 7, 0][i % 3]), || {
                let keys = hits(n, &mut rng);
                check_sort(&keys, comp);
                let (a, b) = (sorted_by(hits(n, &mut rng), comp), sorted_by(hits(n / 2, &mut rng), comp));
                check_merge(&a, &b, comp);
                check_search(&a, &b, comp);
                check_sets(&a, &b, n / 3, comp);
                check_segments(&keys, &[0, n / 5, n / 5, n / 2, n], comp);
            });
        }
    }
    run(Less);
    run(Greater);
    run(ByX);
}

/// Inputs large enough for the default settings' parallel paths (on a machine with more than
/// one core), with uniform and few-distinct keys, and segments of which one is longer than a
/// worker's share.
#[test]
fn large_inputs_on_default_settings() {
    let n = (1 << 18) + 3;
    for dist in [Dist::Uniform, Dist::FewDistinct] {
        let (a, b) = inputs::<u32, _>(n, n / 3, dist, Less, 5);
        check_merge(&a, &b, Less);
        check_search(&b, &a, Less);
        check_sets(&a, &b, n / 2, Less);
        let keys = [b.clone(), a.clone()].concat();
        let mut shuffled = keys.clone();
        let mut rng = Rng(9);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i as u64 + 1) as usize);
        }
        check_sort(&shuffled, Greater);
        let mut offsets = vec![3, 10, 10, 200_000];
        offsets.extend((200_000..shuffled.len() - 5).step_by(97));
        check_segments(&shuffled, &offsets, Less);
    }
}

#[test]
fn errors_not_panics() {
    let (a, b) = ([1u32, 2, 3], [2u32, 4]);
    let mut short = [0u32; 4];
    assert_eq!(host::merge_keys(&a, &b, &mut short, Less), Err(Error::OutputTooSmall { what: "out", needed: 5, got: 4 }));
    let (mut ok, mut ov) = ([0u32; 5], [0u32; 5]);
    assert_eq!(
        host::merge_pairs(&a, &[0u32; 2], &b, &[0u32; 2], &mut ok, &mut ov, Less),
        Err(Error::LengthMismatch { what: "a_values", expected: 3, got: 2 })
    );
    assert_eq!(
        host::merge_pairs(&a, &[0u32; 3], &b, &[0u32; 3], &mut ok, &mut ov, Less),
        Err(Error::LengthMismatch { what: "b_values", expected: 2, got: 3 })
    );
    assert_eq!(
        host::merge_pairs(&a, &[0u32; 3], &b, &[0u32; 2], &mut ok, &mut ov[..4], Less),
        Err(Error::OutputTooSmall { what: "out_values", needed: 5, got: 4 })
    );
    let mut keys = [3u32, 1, 2];
    assert_eq!(host::sort_pairs(&mut keys, &mut [0u64; 2], Less), Err(Error::LengthMismatch { what: "values", expected: 3, got: 2 }));
    assert_eq!(host::sort_indices(&mut keys, &mut [0u32; 4], Less), Err(Error::LengthMismatch { what: "indices", expected: 3, got: 4 }));
    assert_eq!(host::sort_keys_copy(&keys, &mut [0u32; 2], Less), Err(Error::OutputTooSmall { what: "output", needed: 3, got: 2 }));
    assert_eq!(
        host::sort_pairs_copy(&keys, &[0u8; 3], &mut [0u32; 3], &mut [0u8; 2], Less),
        Err(Error::OutputTooSmall { what: "values_out", needed: 3, got: 2 })
    );
    assert_eq!(keys, [3, 1, 2], "nothing sorted on error");
    assert_eq!(host::sorted_search(&a, &b, Bound::Lower, &mut [0u32; 2], Less), Err(Error::OutputTooSmall { what: "out", needed: 3, got: 2 }));
    assert_eq!(
        host::sorted_search_range(&a, &b, &mut [0u32; 3], &mut [0u32; 1], Less),
        Err(Error::OutputTooSmall { what: "upper", needed: 3, got: 1 })
    );
    assert_eq!(host::sorted_search_count(&a, &b, &mut [0u64; 0], Less), Err(Error::OutputTooSmall { what: "counts", needed: 3, got: 0 }));
    assert_eq!(host::sorted_search_contains(&a, &b, &mut [0u8; 1], Less), Err(Error::OutputTooSmall { what: "found", needed: 3, got: 1 }));
    assert_eq!(
        host::set_operation_pairs(SetOperation::Union, &a, &[0u32; 3], &b, &[0u32; 1], &mut [0u32; 9], &mut [0u32; 9], Less),
        Err(Error::LengthMismatch { what: "b_values", expected: 2, got: 1 })
    );
    let mut keys = [5u32, 4, 3, 2, 1];
    assert_eq!(
        host::sort_segments_keys(&mut keys, &[0, 3, 2], Less),
        Err(Error::InvalidArgument { argument: "offsets", reason: "must be non-decreasing: offsets[2] = 2 is below offsets[1] = 3".into() })
    );
    assert_eq!(
        host::sort_segments_keys(&mut keys, &[0, 6], Less),
        Err(Error::InvalidArgument { argument: "offsets", reason: "offsets[1] = 6 is past the end of the 5 keys".into() })
    );
    assert_eq!(
        host::sort_segments_pairs(&mut keys, &mut [0u32; 4], &[0, 5], Less),
        Err(Error::LengthMismatch { what: "values", expected: 5, got: 4 })
    );
    assert_eq!(keys, [5, 4, 3, 2, 1], "nothing sorted on error");
    // Fewer than two offsets, empty segments: nothing to do.
    host::sort_segments_keys(&mut keys, &[], Less).unwrap();
    host::sort_segments_keys(&mut keys, &[4], Less).unwrap();
    host::sort_segments_keys(&mut keys, &[1, 1, 1], Less).unwrap();
    assert_eq!(keys, [5, 4, 3, 2, 1]);
    host::sort_segments_keys(&mut keys, &[1, 4], Less).unwrap();
    assert_eq!(keys, [5, 2, 3, 4, 1]);
}

#[test]
fn threads_setting() {
    assert!(host::threads() >= 1);
    assert_eq!(host::with_threads(3, host::threads), 3);
    assert_eq!(host::with_threads(3, || host::with_threads(0, host::threads)), host::threads());
}

/// The load-balancing search's errors on the host backend, each leaving the outputs as they
/// were, and u64 indices with a tail of the output untouched.
#[test]
fn load_balancing_search_errors_and_u64() {
    let mut segments = [9u32; 4];
    let mut ranks = [9u32; 3];
    let cases: [(&[u32], usize); 3] = [(&[1, 2], 3), (&[0, 3, 2], 4), (&[0, 5], 4)];
    for (starts, count) in cases {
        let e = host::load_balancing_search(count, starts, &mut segments).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "{starts:?}: {e}");
    }
    let e = host::load_balancing_search(2, &[], &mut segments).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "{e}");
    let e = host::load_balancing_search_ranks(4, &[0, 2], &mut segments, &mut ranks).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "ranks", needed: 4, got: 3 }), "{e}");
    assert_eq!((segments, ranks), ([9; 4], [9; 3]), "errors write nothing");
    host::load_balancing_search(0, &[], &mut segments).unwrap();
    let (mut seg64, mut rank64) = ([7u64; 6], [7u64; 6]);
    host::load_balancing_search_ranks(5, &[0u64, 2, 2], &mut seg64, &mut rank64).unwrap();
    assert_eq!((seg64, rank64), ([0, 0, 2, 2, 2, 7], [0, 1, 0, 1, 2, 7]));
}

/// Interval expand on the host backend: 5-byte values repeated over their segments, and one
/// value per segment required.
#[test]
fn interval_expand_values_of_any_size() {
    let values = [[1u8; 5], [2; 5], [3; 5]];
    let mut out = [[0u8; 5]; 6];
    host::interval_expand(5, &[0u32, 2, 2], &values, &mut out).unwrap();
    assert_eq!(out, [[1; 5], [1; 5], [3; 5], [3; 5], [3; 5], [0; 5]]);
    let e = host::interval_expand(5, &[0u32, 2], &values, &mut out).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { what: "values", expected: 2, got: 3 }), "{e}");
}

/// Interval gather, scatter and move on the host backend: 5-byte values, an empty interval,
/// the output's other items untouched; and the errors, each leaving the output as it was:
/// intervals reaching past their array, a scatter's input shorter than the items, bad starts,
/// one index per interval, a gather's output too short.
#[test]
fn interval_moves_and_their_errors() {
    let input: Vec<[u8; 5]> = (0..8).map(|i| [i; 5]).collect();
    let (starts, count) = ([0u32, 2, 2], 5);
    let mut out = [[9u8; 5]; 6];
    host::interval_gather(count, &starts, &[5u32, 0, 1], &input, &mut out).unwrap();
    assert_eq!(out.map(|v| v[0]), [5, 6, 1, 2, 3, 9]);
    let mut out = [[9u8; 5]; 7];
    host::interval_scatter(count, &starts, &[3u32, 0, 0], &input, &mut out).unwrap();
    assert_eq!(out.map(|v| v[0]), [2, 3, 4, 0, 1, 9, 9]);
    let mut out = [[9u8; 5]; 7];
    host::interval_move(count, &starts, &[6u32, 0, 0], &[5u32, 7, 1], &input, &mut out).unwrap();
    assert_eq!(out.map(|v| v[0]), [9, 0, 1, 2, 9, 6, 7]);

    let mut out = [[9u8; 5]; 7];
    let invalid = |e: Error, what: &str| assert!(matches!(e, Error::InvalidArgument { argument, .. } if argument == what), "{what}: {e}");
    invalid(host::interval_gather(count, &starts, &[7u32, 0, 0], &input, &mut out).unwrap_err(), "sources");
    invalid(host::interval_scatter(count, &starts, &[6u32, 0, 0], &input, &mut out).unwrap_err(), "destinations");
    invalid(host::interval_move(count, &starts, &[0u32, 0, 0], &[0u32, 0, 5], &input, &mut out).unwrap_err(), "destinations");
    invalid(host::interval_scatter(count, &starts, &[0u32, 0, 0], &input[..4], &mut out).unwrap_err(), "input");
    invalid(host::interval_gather(count, &[0u32, 3, 2], &[0u32, 0, 0], &input, &mut out).unwrap_err(), "starts");
    let e = host::interval_gather(count, &starts, &[0u32, 0], &input, &mut out).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { what: "sources", expected: 3, got: 2 }), "{e}");
    let e = host::interval_gather(count, &starts, &[0u32, 0, 0], &input, &mut out[..4]).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "out", needed: 5, got: 4 }), "{e}");
    assert_eq!(out, [[9u8; 5]; 7], "errors write nothing");
}

/// Segmented reduction on the host backend: sums, minima and maxima with empty segments, the
/// errors (nothing written), and a sum of a key that is not a number refused.
#[test]
fn segmented_reduce_folds_each_segment() {
    use mergepath::Reduction::{Max, Min, Sum};
    let values = [5u64, 7, 1, 2, 3];
    let mut out = [9u64; 4];
    host::segmented_reduce(&[0u32, 2, 2], &values, &mut out, Sum, 0, Less).unwrap();
    assert_eq!(out, [12, 0, 6, 9]);
    host::segmented_reduce(&[0u64, 2, 2], &values, &mut out, Min, 100, Less).unwrap();
    assert_eq!(out, [5, 100, 1, 9]);
    host::segmented_reduce(&[0u32, 2, 2], &values, &mut out, Max, 100, Greater).unwrap();
    assert_eq!(out, [5, 100, 1, 9], "the greatest by Greater is the least");
    host::segmented_reduce(&[0u32, 0, 0], &[] as &[u64], &mut out, Max, 4, Less).unwrap();
    assert_eq!(out, [4, 4, 4, 9], "no values: every segment empty");
    let mut wrapping = [0u8];
    host::segmented_reduce(&[0u32], &[200u8, 100], &mut wrapping, Sum, 0, Less).unwrap();
    assert_eq!(wrapping, [44], "integer sums wrap");

    let mut out = [9u64; 2];
    let e = host::segmented_reduce(&[0u32, 2, 2], &values, &mut out, Sum, 0, Less).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "out", needed: 3, got: 2 }), "{e}");
    let e = host::segmented_reduce(&[0u32, 6], &values, &mut out, Sum, 0, Less).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "{e}");
    let e = host::segmented_reduce(&[] as &[u32], &values, &mut out, Sum, 0, Less).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { argument: "starts", .. }), "{e}");
    assert_eq!(out, [9, 9], "errors write nothing");
    let hit = hits(2, &mut Rng(7));
    let mut hit_out = [hit[0]];
    let e = host::segmented_reduce(&[0u32], &hit, &mut hit_out, Sum, hit[0], ByX).unwrap_err();
    assert!(matches!(e, Error::NotSupported { .. }), "{e}");
    host::segmented_reduce(&[0u32], &hit, &mut hit_out, Max, hit[0], ByX).unwrap();
    let greatest = if hit[0].x < hit[1].x { hit[1] } else { hit[0] };
    assert_eq!(bytemuck::bytes_of(&hit_out[0]), bytemuck::bytes_of(&greatest), "the first of the greatest by x");
}

/// Runs of equal keys on the host backend: unique, lengths and folds of unsorted keys, the
/// output room checked against the run count before anything is written.
#[test]
fn runs_of_equal_keys() {
    use mergepath::Reduction::{Max, Sum};
    let keys = [3u32, 3, 1, 1, 1, 3, 7];
    let values = [1u64, 2, 3, 4, 5, 6, 7];
    let (mut out, mut folds) = ([0u32; 8], [0u64; 4]);
    assert_eq!(host::unique(&keys, &mut out, Less).unwrap(), 4);
    assert_eq!(out[..5], [3, 1, 3, 7, 0]);
    let mut lengths64 = [0u64; 4];
    assert_eq!(host::run_length_encode(&keys, &mut out, &mut lengths64, Less).unwrap(), 4);
    assert_eq!(lengths64, [2, 3, 1, 1]);
    assert_eq!(host::reduce_by_key(&keys, &values, &mut out, &mut folds, Sum, Less, Less).unwrap(), 4);
    assert_eq!(folds, [3, 12, 6, 7]);
    assert_eq!(host::reduce_by_key(&keys, &values, &mut out, &mut folds, Max, Less, Greater).unwrap(), 4);
    assert_eq!(folds, [1, 3, 6, 7], "the greatest by Greater is the least");

    let mut short = [9u32; 3];
    let e = host::unique(&keys, &mut short, Less).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "out", needed: 4, got: 3 }), "{e}");
    let e = host::run_length_encode(&keys, &mut out, &mut [0u32; 3], Less).unwrap_err();
    assert!(matches!(e, Error::OutputTooSmall { what: "lengths", needed: 4, got: 3 }), "{e}");
    assert_eq!(short, [9; 3], "errors write nothing");
    let e = host::reduce_by_key(&keys, &values[..6], &mut out, &mut folds, Sum, Less, Less).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { what: "values", .. }), "{e}");
    let hit = hits(7, &mut Rng(3));
    let e = host::reduce_by_key(&keys, &hit, &mut out, &mut [hit[0]; 7], Sum, Less, ByX).unwrap_err();
    assert!(matches!(e, Error::NotSupported { .. }), "{e}");
    assert_eq!(host::unique(&[] as &[u32], &mut [], Less).unwrap(), 0);
}

//! Sorted search without a GPU: the oracle (a binary search per needle) against the identity the
//! GPU kernel uses — in the stable merge of needles and haystack (needles first for lower bounds,
//! haystack first for upper), a needle's bound is its merged position minus its own index; and
//! the one-pass equal counts: the run of equal haystack items after a needle's lower bound,
//! taken in its tile and finished beyond the tile's end, as the kernel cuts it.

use mergepath::partition::{merge_path_partitions_cpu, visit_merge_tiles_cpu, Source, TileShape};
use mergepath::{cpu, Bound, Less};
use proptest::prelude::*;

/// The device's `equal_run_end` (mergepath-build/kernels/mergepath/thread/search.cuh): the first i in
/// begin..end with keys[i] > key, by a galloping search from `begin` (keys[begin..end) >= key).
fn equal_run_end(keys: &[u8], begin: usize, end: usize, key: u8) -> usize {
    let (mut lo, mut step) = (begin, 1);
    while lo < end && keys[lo] <= key {
        let probe = if end - lo > step { lo + step } else { end };
        if probe == end || keys[probe] > key {
            return lo + 1 + keys[lo + 1..probe].partition_point(|&k| k <= key);
        }
        lo = probe + 1;
        step *= 2;
    }
    lo
}

/// Equal counts as `sorted_search_tile` finds them in one pass of the lower-bound merge: needle
/// i merged at `out` has lower bound out - i; its run of equal haystack items is searched in
/// its tile's haystack and, where it reaches the tile's end, in the haystack beyond it.
fn counts_by_tiles(needles: &[u8], haystack: &[u8], shape: TileShape) -> Vec<usize> {
    let parts = merge_path_partitions_cpu(needles, haystack, shape.tile(), |x, y| x < y);
    let total = needles.len() + haystack.len();
    let tile_b_end = |t: usize| ((t + 1) * shape.tile()).min(total) - parts[t + 1];
    let mut counts = vec![usize::MAX; needles.len()];
    visit_merge_tiles_cpu(needles, haystack, shape, |x, y| x < y, |out, source, i, _thread, tile| {
        if source == Source::A {
            let (lower, b_end) = (out - i, tile_b_end(tile));
            let mut end = equal_run_end(haystack, lower, b_end, needles[i]);
            if end == b_end {
                end = equal_run_end(haystack, b_end, haystack.len(), needles[i]);
            }
            counts[i] = end - lower;
        }
    });
    counts
}

/// Bounds from merging (key, is_needle, index) tuples, as the kernel does.
fn bounds_by_merge(needles: &[u8], haystack: &[u8], bound: Bound) -> Vec<usize> {
    let n: Vec<(u8, bool, usize)> = needles.iter().enumerate().map(|(i, &k)| (k, true, i)).collect();
    let h: Vec<(u8, bool, usize)> = haystack.iter().enumerate().map(|(i, &k)| (k, false, i)).collect();
    let (a, b) = if bound == Bound::Lower { (&n, &h) } else { (&h, &n) };
    let merged = cpu::merge_by(a, b, |x, y| x.0 < y.0);
    let mut out = vec![usize::MAX; needles.len()];
    for (p, &(_, is_needle, i)) in merged.iter().enumerate() {
        if is_needle {
            out[i] = p - i;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn merged_position_minus_index_is_the_bound(
        mut needles in proptest::collection::vec(0u8..12, 0..200),
        mut haystack in proptest::collection::vec(0u8..12, 0..200),
    ) {
        needles.sort_unstable();
        haystack.sort_unstable();
        for bound in [Bound::Lower, Bound::Upper] {
            let want = cpu::sorted_search(&needles, &haystack, bound, Less);
            prop_assert_eq!(bounds_by_merge(&needles, &haystack, bound), want.clone());
            for (&n, &i) in needles.iter().zip(&want) {
                let before = |h: u8| if bound == Bound::Lower { h < n } else { h <= n };
                prop_assert!(haystack[..i].iter().all(|&h| before(h)), "items before the bound go before the needle");
                prop_assert!(!haystack[i..].iter().any(|&h| before(h)), "items from the bound on do not");
            }
        }
    }

    #[test]
    fn one_pass_counts_are_upper_minus_lower(
        mut needles in proptest::collection::vec(0u8..5, 0..300),
        mut haystack in proptest::collection::vec(0u8..5, 0..300),
        threads in 1u32..5,
        items_per_thread in 1u32..6,
    ) {
        needles.sort_unstable();
        haystack.sort_unstable();
        let lower = cpu::sorted_search(&needles, &haystack, Bound::Lower, Less);
        let upper = cpu::sorted_search(&needles, &haystack, Bound::Upper, Less);
        let want: Vec<usize> = lower.iter().zip(&upper).map(|(l, u)| u - l).collect();
        prop_assert_eq!(counts_by_tiles(&needles, &haystack, TileShape { threads, items_per_thread }), want);
    }
}

#[test]
fn equal_run_end_gallops_over_long_runs() {
    let keys: Vec<u8> = [vec![3u8; 1000], vec![4u8; 5]].concat();
    for begin in [0, 1, 500, 999, 1000] {
        assert_eq!(equal_run_end(&keys, begin, keys.len(), 3), 1000);
        assert_eq!(equal_run_end(&keys, begin, 700.max(begin), 3), 700.max(begin));
    }
    assert_eq!(equal_run_end(&keys, 1000, keys.len(), 4), 1005);
    assert_eq!(equal_run_end(&keys, 1000, keys.len(), 3), 1000);
}

#[test]
fn oracle_edges() {
    let h = [1u32, 3, 3, 3, 7];
    assert_eq!(cpu::sorted_search(&[0, 3, 4, 7, 9], &h, Bound::Lower, Less), [0, 1, 4, 4, 5]);
    assert_eq!(cpu::sorted_search(&[0, 3, 4, 7, 9], &h, Bound::Upper, Less), [0, 4, 4, 5, 5]);
    assert_eq!(cpu::sorted_search(&[5u32], &[], Bound::Lower, Less), [0]);
    assert!(cpu::sorted_search(&[] as &[u32], &h, Bound::Upper, Less).is_empty());
}

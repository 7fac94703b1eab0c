//! Sorted search without a GPU: the oracle (a binary search per needle) against the identity the
//! GPU kernel uses — in the stable merge of needles and haystack (needles first for lower bounds,
//! haystack first for upper), a needle's bound is its merged position minus its own index.

use mergepath::{cpu, Bound, Less};
use proptest::prelude::*;

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
}

#[test]
fn oracle_edges() {
    let h = [1u32, 3, 3, 3, 7];
    assert_eq!(cpu::sorted_search(&[0, 3, 4, 7, 9], &h, Bound::Lower, Less), [0, 1, 4, 4, 5]);
    assert_eq!(cpu::sorted_search(&[0, 3, 4, 7, 9], &h, Bound::Upper, Less), [0, 4, 4, 5, 5]);
    assert_eq!(cpu::sorted_search(&[5u32], &[], Bound::Lower, Less), [0]);
    assert!(cpu::sorted_search(&[] as &[u32], &h, Bound::Upper, Less).is_empty());
}

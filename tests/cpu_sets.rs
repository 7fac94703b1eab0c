//! Multiset operations without a GPU: the oracle against C++'s multiset semantics by counting,
//! and the Balanced Path partition math (`mergepath::balanced_path`, the exact mirror of the
//! device search) — tiles and threads cut where the kernels cut them split every operation
//! exactly, and no thread needs more than VT steps.

use mergepath::cpu::{set_operation_by, SetSource};
use mergepath::{balanced_path, SetOperation};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Sorted keys from few distinct values, so runs of equal keys are long and common.
fn multiset(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    (1u8..8, proptest::collection::vec(any::<u8>(), 0..max_len)).prop_map(|(distinct, v)| {
        let mut v: Vec<u8> = v.into_iter().map(|x| x % distinct).collect();
        v.sort_unstable();
        v
    })
}

/// What `op` must output, by C++'s rules: per key (ascending), which copies of A's (index
/// range within A) and of B's.
fn expected_by_counting(op: SetOperation, a: &[u8], b: &[u8]) -> Vec<SetSource> {
    let mut runs: BTreeMap<u8, (usize, usize, usize, usize)> = BTreeMap::new(); // first a, count a, first b, count b
    for (i, &k) in a.iter().enumerate() {
        let e = runs.entry(k).or_insert((i, 0, 0, 0));
        e.1 += 1;
    }
    for (j, &k) in b.iter().enumerate() {
        let e = runs.entry(k).or_insert((0, 0, j, 0));
        if e.3 == 0 {
            e.2 = j;
        }
        e.3 += 1;
    }
    let mut out = Vec::new();
    for &(a0, i, b0, j) in runs.values() {
        let from_a = |first: usize, n: usize| (first..first + n).map(SetSource::A);
        let from_b = |first: usize, n: usize| (first..first + n).map(SetSource::B);
        match op {
            SetOperation::Intersection => out.extend(from_a(a0, i.min(j))),
            SetOperation::Union => {
                out.extend(from_a(a0, i));
                out.extend(from_b(b0 + i.min(j), j.saturating_sub(i)));
            }
            SetOperation::Difference => out.extend(from_a(a0 + j.min(i), i.saturating_sub(j))),
            SetOperation::SymmetricDifference => {
                out.extend(from_a(a0 + j.min(i), i.saturating_sub(j)));
                out.extend(from_b(b0 + i.min(j), j.saturating_sub(i)));
            }
        }
    }
    out
}

/// Steps of the serial set loop over a[..] and b[..] (one per unmatched item or matched pair).
fn steps(a: &[u8], b: &[u8]) -> usize {
    let matched = set_operation_by(SetOperation::Intersection, a, b, |x, y| x < y).len();
    a.len() + b.len() - matched
}

/// Shifts sources of a sub-range result to whole-input indices.
fn shifted(v: Vec<SetSource>, a0: usize, b0: usize) -> impl Iterator<Item = SetSource> {
    v.into_iter().map(move |s| match s {
        SetSource::A(i) => SetSource::A(a0 + i),
        SetSource::B(j) => SetSource::B(b0 + j),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn oracle_has_multiset_semantics(a in multiset(120), b in multiset(120)) {
        for op in SetOperation::ALL {
            let got = set_operation_by(op, &a, &b, |x, y| x < y);
            prop_assert_eq!(got.len(), op_len(op, &a, &b));
            prop_assert!(got.len() <= op.max_len(a.len(), b.len()));
            prop_assert_eq!(got, expected_by_counting(op, &a, &b), "{:?}", op);
        }
    }

    /// The kernels' decomposition: tile splits every `tile` diagonals of the whole inputs, then
    /// thread splits every `vt` diagonals of each tile's slices (clamped to the tile), each
    /// thread running the serial loop to the next split. Concatenated, they are the oracle.
    #[test]
    fn balanced_splits_decompose_every_operation(a in multiset(300), b in multiset(300), vt in 1usize..8, threads in 1usize..6) {
        let tile = vt * threads;
        let total = a.len() + b.len();
        let splits: Vec<(usize, usize)> = (0..=total.div_ceil(tile)).map(|p| balanced_path(&a, &b, (p * tile).min(total), |x, y| x < y)).collect();
        for (p, &(sa, sb)) in splits.iter().enumerate() {
            let diag = (p * tile).min(total);
            prop_assert!(sa + sb == diag || sa + sb == diag + 1, "split {} at {}: {:?}", p, diag, (sa, sb));
            prop_assert!(sa <= a.len() && sb <= b.len());
        }
        prop_assert_eq!(*splits.last().unwrap(), (a.len(), b.len()));
        for op in SetOperation::ALL {
            let mut joined = Vec::new();
            for w in splits.windows(2) {
                let ((a0, b0), (a1, b1)) = (w[0], w[1]);
                prop_assert!(a0 <= a1 && b0 <= b1, "splits are monotone");
                let (ta, tb) = (&a[a0..a1], &b[b0..b1]);
                let count = ta.len() + tb.len();
                prop_assert!(count <= tile + 1, "a tile holds at most tile + 1 items");
                let mut starts: Vec<(usize, usize)> = (0..threads).map(|t| balanced_path(ta, tb, (t * vt).min(count), |x, y| x < y)).collect();
                starts.push((ta.len(), tb.len()));
                for s in starts.windows(2) {
                    let ((x0, y0), (x1, y1)) = (s[0], s[1]);
                    prop_assert!(x0 <= x1 && y0 <= y1);
                    prop_assert!(steps(&ta[x0..x1], &tb[y0..y1]) <= vt, "a thread needs at most vt steps");
                    joined.extend(shifted(set_operation_by(op, &ta[x0..x1], &tb[y0..y1], |x, y| x < y), a0 + x0, b0 + y0));
                }
            }
            prop_assert_eq!(joined, set_operation_by(op, &a, &b, |x, y| x < y), "{:?}", op);
        }
    }
}

/// The result length by C++'s count rules.
fn op_len(op: SetOperation, a: &[u8], b: &[u8]) -> usize {
    (0..=u8::MAX)
        .map(|k| {
            let (i, j) = (a.iter().filter(|&&x| x == k).count(), b.iter().filter(|&&x| x == k).count());
            match op {
                SetOperation::Intersection => i.min(j),
                SetOperation::Union => i.max(j),
                SetOperation::Difference => i.saturating_sub(j),
                SetOperation::SymmetricDifference => i.abs_diff(j),
            }
        })
        .sum()
}

#[test]
fn balanced_path_edges() {
    let less = |x: &u8, y: &u8| x < y;
    // a = xxx, b = xx: the balanced merge is a0 b0 a1 b1 a2; diagonals inside a pair round up.
    let (a, b) = ([5u8; 3], [5u8; 2]);
    let got: Vec<(usize, usize)> = (0..=5).map(|d| balanced_path(&a, &b, d, less)).collect();
    assert_eq!(got, [(0, 0), (1, 1), (1, 1), (2, 2), (2, 2), (3, 2)]);
    // a = x, b = xxx: a0 b0 b1 b2.
    let got: Vec<(usize, usize)> = (0..=4).map(|d| balanced_path(&[5u8], &[5u8; 3], d, less)).collect();
    assert_eq!(got, [(0, 0), (1, 1), (1, 1), (1, 2), (1, 3)]);
    // No equal keys across the inputs: the merge path.
    assert_eq!(balanced_path(&[1u8, 3, 5], &[2u8, 4], 3, less), (2, 1));
    assert_eq!(balanced_path(&[] as &[u8], &[1u8, 1], 1, less), (0, 1));
    assert_eq!(SetOperation::Union.max_len(usize::MAX, 1), usize::MAX);
}

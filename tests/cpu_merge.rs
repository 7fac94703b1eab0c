//! CPU-side properties, run in CI without a GPU: the oracle, and a Rust model of the two-phase
//! merge (coarse partitions, per-thread partitions, the serial loop) checked against it.

use mergepath::partition::{co_rank, merge_path, merge_path_partitions_cpu, partition_count};
use mergepath::tuning::{select_shape, LaunchShape, TuningRow};
use mergepath::{cpu, Comparator, Greater, Less};
use proptest::prelude::*;

/// Sorted inputs with many duplicates (keys drawn from 0..range).
fn sorted_pair(max_len: usize) -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    (1u32..50, 0..max_len, 0..max_len).prop_flat_map(|(range, la, lb)| {
        (proptest::collection::vec(0..range, la), proptest::collection::vec(0..range, lb)).prop_map(|(mut a, mut b)| {
            a.sort();
            b.sort();
            (a, b)
        })
    })
}

/// The kernel's per-thread loop (`serial_merge` in kernels/mergepath/thread/serial.cuh), VT items
/// from (a, b); positions past both ends yield nothing, as the kernel stores nothing there.
fn serial_merge<T: Copy>(a: &[T], b: &[T], mut i: usize, mut j: usize, vt: usize, less: &impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut out = Vec::new();
    for _ in 0..vt {
        let take_a = j >= b.len() || (i < a.len() && !less(&b[j], &a[i]));
        if take_a && i < a.len() {
            out.push(a[i]);
            i += 1;
        } else if !take_a {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

/// The whole two-phase merge on the CPU: coarse partitions every `nt * vt`, then in each tile
/// one search per thread at diagonal `vt * t` and the serial loop.
fn two_phase_model<T: Copy>(a: &[T], b: &[T], nt: usize, vt: usize, less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let tile = nt * vt;
    let total = a.len() + b.len();
    let parts = merge_path_partitions_cpu(a, b, tile, &less);
    let mut out = Vec::with_capacity(total);
    for t in 0..parts.len() - 1 {
        let (d0, d1) = (t * tile, ((t + 1) * tile).min(total));
        let (ta, tb) = (&a[parts[t]..parts[t + 1]], &b[d0 - parts[t]..d1 - parts[t + 1]]);
        for thread in 0..nt {
            let diag = (vt * thread).min(ta.len() + tb.len());
            let i = merge_path(ta, tb, diag, &less);
            let items = serial_merge(ta, tb, i, diag - i, vt, &less);
            // A thread's items end where the next thread's start.
            let take = vt.min(ta.len() + tb.len() - diag);
            out.extend_from_slice(&items[..take]);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The book's co-rank search (the merge ladder's) finds the merge path at every rank.
    #[test]
    fn co_rank_is_the_merge_path(mut a in proptest::collection::vec(0u8..6, 0..80), mut b in proptest::collection::vec(0u8..6, 0..80)) {
        a.sort_unstable();
        b.sort_unstable();
        for k in 0..=a.len() + b.len() {
            prop_assert_eq!(co_rank(k, &a, &b, |x, y| x < y), merge_path(&a, &b, k, |x, y| x < y), "rank {}", k);
        }
    }

    /// The oracle equals a stable sort of A followed by B (A's equal keys first).
    #[test]
    fn oracle_is_a_stable_merge((a, b) in sorted_pair(300)) {
        let tagged = |v: &[u32], side: u32| v.iter().enumerate().map(|(i, &k)| (k, side, i)).collect::<Vec<_>>();
        let (ta, tb) = (tagged(&a, 0), tagged(&b, 1));
        let merged = cpu::merge_by(&ta, &tb, |x, y| x.0 < y.0);
        let mut sorted = ta.clone();
        sorted.extend_from_slice(&tb);
        sorted.sort_by_key(|x| x.0);
        prop_assert_eq!(merged, sorted);
    }

    /// Every coarse partition is a valid, balanced split: monotone in A and B, each tile holds
    /// exactly `spacing` items (the last the rest), and the split respects the order with ties
    /// going to A.
    #[test]
    fn partitions_are_valid_balanced_splits((a, b) in sorted_pair(400), spacing in 1usize..64) {
        let total = a.len() + b.len();
        let parts = merge_path_partitions_cpu(&a, &b, spacing, |x, y| x < y);
        prop_assert_eq!(parts.len(), partition_count(total, spacing));
        prop_assert_eq!(*parts.last().unwrap(), a.len());
        for (p, &i) in parts.iter().enumerate() {
            let diag = (p * spacing).min(total);
            let j = diag - i;
            prop_assert!(i <= a.len() && j <= b.len());
            // Everything taken from A goes before everything left in B, ties included ...
            prop_assert!(i == 0 || j == b.len() || a[i - 1] <= b[j]);
            // ... and everything taken from B is strictly before everything left in A.
            prop_assert!(j == 0 || i == a.len() || b[j - 1] < a[i]);
            if p > 0 {
                let (pi, pj) = (parts[p - 1], (p - 1) * spacing - parts[p - 1]);
                prop_assert!(pi <= i && pj <= j, "monotone");
                prop_assert_eq!((i - pi) + (j - pj), diag - (p - 1) * spacing, "tile size");
            }
        }
    }

    /// Concatenating the per-tile, per-thread serial merges gives the oracle, for tile shapes
    /// small enough that inputs span many tiles.
    #[test]
    fn two_phase_model_equals_oracle((a, b) in sorted_pair(500), nt in 1usize..9, vt in 1usize..8) {
        prop_assert_eq!(two_phase_model(&a, &b, nt, vt, |x, y| x < y), cpu::merge_by(&a, &b, |x, y| x < y));
    }

    /// Descending order through `Greater` behaves the same way.
    #[test]
    fn two_phase_model_descending((mut a, mut b) in sorted_pair(300), vt in 1usize..6) {
        a.reverse();
        b.reverse();
        let less = |x: &u32, y: &u32| Greater.is_less(x, y);
        prop_assert_eq!(two_phase_model(&a, &b, 4, vt, less), cpu::merge_keys(&a, &b, Greater));
    }

    /// Float keys: the order is `total_cmp`, so NaNs and signed zeros have fixed places.
    #[test]
    fn float_order_is_total(x in any::<u32>(), y in any::<u32>()) {
        let (x, y) = (f32::from_bits(x), f32::from_bits(y));
        prop_assert_eq!(Less.is_less(&x, &y), x.total_cmp(&y).is_lt());
        prop_assert_eq!(Greater.is_less(&x, &y), y.total_cmp(&x).is_lt());
    }
}

#[test]
fn float_specials_sort_deterministically() {
    let mut v = [f32::NAN, 1.0, -0.0, f32::NEG_INFINITY, 0.0, -f32::NAN, f32::INFINITY];
    v.sort_by(|x, y| if Less.is_less(x, y) { std::cmp::Ordering::Less } else if Less.is_less(y, x) { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal });
    let bits: Vec<u32> = v.iter().map(|x| x.to_bits()).collect();
    let want: Vec<u32> = [-f32::NAN, f32::NEG_INFINITY, -0.0, 0.0, 1.0, f32::INFINITY, f32::NAN].iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits, want);
}

#[test]
fn partition_search_edges() {
    let (a, b) = ([1, 2, 2, 3], [2, 2, 4]);
    let less = |x: &i32, y: &i32| x < y;
    // Ties go to A: the first 4 merged are 1, 2a, 2a, then 2a's run ends; 2b comes after.
    assert_eq!((0..=7).map(|d| merge_path(&a, &b, d, less)).collect::<Vec<_>>(), [0, 1, 2, 3, 3, 3, 4, 4]);
    assert_eq!(merge_path::<i32>(&[], &[], 0, less), 0);
    assert_eq!(partition_count(0, 5), 1);
    assert_eq!(partition_count(10, 5), 3);
    assert_eq!(partition_count(11, 5), 4);
}

#[test]
fn tuning_rule_picks_largest_arch_and_smallest_fitting_key_size() {
    let shape = |threads, vt| LaunchShape { threads, values_per_thread: vt, ways: 2 };
    let rows = [
        TuningRow { arch: 80, key_bytes: 4, shape: shape(128, 1) },
        TuningRow { arch: 80, key_bytes: 8, shape: shape(128, 2) },
        TuningRow { arch: 90, key_bytes: 4, shape: shape(256, 3) },
        TuningRow { arch: 90, key_bytes: 16, shape: shape(256, 4) },
    ];
    assert_eq!(select_shape(&rows, 90, 1), Some(shape(256, 3)));
    assert_eq!(select_shape(&rows, 120, 8), Some(shape(256, 4)));
    assert_eq!(select_shape(&rows, 89, 8), Some(shape(128, 2)));
    assert_eq!(select_shape(&rows, 90, 32), Some(shape(256, 4)), "larger than every row: the largest");
    assert_eq!(select_shape(&rows, 70, 4), Some(shape(128, 1)), "older than every row: the oldest");
    assert_eq!(select_shape(&[], 90, 4), None);
    // The shipped table has a merge row for every built-in key size on sm_80 and sm_90.
    for arch in [80, 86, 90, 100] {
        for bytes in [1, 2, 4, 8] {
            assert!(mergepath::tuning::merge_shape(arch, bytes).tile() > 0);
        }
    }
}

#[test]
fn no_gpu_is_an_error_not_a_panic() {
    // On CI there is no driver: a clean Err. On a GPU machine: Ok.
    match mergepath::Gpu::new(0) {
        Ok(_) => {}
        Err(e) => assert!(matches!(e, mergepath::Error::NoDriver | mergepath::Error::Driver(_)), "{e}"),
    }
}

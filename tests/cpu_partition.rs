//! CPU-side properties of the two-phase layer for users' kernels, run in CI without a GPU: the
//! tile loop's CPU mirror (`visit_merge_tiles_cpu`) against the oracle, and tile shapes' grids.

use mergepath::partition::{merge_path, merge_path_tie, visit_merge_tiles_cpu, Source, Tie, TileShape};
use mergepath::{cpu, Error};
use proptest::prelude::*;

/// One visited item: (output index, source, index in the source, thread, tile).
type Visit = (usize, Source, usize, usize, usize);

fn visits(a: &[u32], b: &[u32], shape: TileShape, is_less: impl Fn(&u32, &u32) -> bool) -> Vec<Visit> {
    let mut out = Vec::new();
    visit_merge_tiles_cpu(a, b, shape, is_less, |o, s, i, thread, tile| out.push((o, s, i, thread, tile)));
    out
}

/// Sorted inputs (ascending, or descending when `descending`) with many duplicates.
fn sorted_pair(max_len: usize) -> impl Strategy<Value = (Vec<u32>, Vec<u32>, bool)> {
    (1u32..40, proptest::collection::vec(0u32..40, 0..max_len), proptest::collection::vec(0u32..40, 0..max_len), any::<bool>()).prop_map(
        |(range, a, b, descending)| {
            let sorted = |v: Vec<u32>| {
                let mut v: Vec<u32> = v.into_iter().map(|x| x % range).collect();
                v.sort_unstable();
                if descending {
                    v.reverse();
                }
                v
            };
            (sorted(a), sorted(b), descending)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every item is visited exactly once, in the merged order (ties from A first), with the
    /// output index counting up and the thread and tile the output index falls in.
    #[test]
    fn tile_loop_visits_the_stable_merge((a, b, descending) in sorted_pair(300), threads in 1u32..9, vt in 1u32..8) {
        let is_less = move |x: &u32, y: &u32| if descending { x > y } else { x < y };
        let shape = TileShape { threads, items_per_thread: vt };
        let got = visits(&a, &b, shape, is_less);
        // The oracle merges (key, source, index) by key alone: its order is the stable merge.
        let tag = |v: &[u32], source: Source| v.iter().enumerate().map(|(i, &k)| (k, source, i)).collect::<Vec<_>>();
        let want = cpu::merge_by(&tag(&a, Source::A), &tag(&b, Source::B), |x, y| is_less(&x.0, &y.0));
        prop_assert_eq!(got.len(), a.len() + b.len());
        for (k, (&(out, source, index, thread, tile), &(_, want_source, want_index))) in got.iter().zip(&want).enumerate() {
            prop_assert_eq!(out, k);
            prop_assert_eq!((source, index), (want_source, want_index), "output {}", k);
            prop_assert_eq!(tile, k / shape.tile(), "output {}", k);
            prop_assert_eq!(thread, k % shape.tile() / vt as usize, "output {}", k);
        }
    }

    /// B first on ties is the A-first path of the swapped inputs, read from B's side; every
    /// split is a valid merge-path point of that order.
    #[test]
    fn b_first_merge_path_is_the_swapped_a_first_one((a, b, descending) in sorted_pair(200), diag_frac in 0.0f64..=1.0) {
        let is_less = move |x: &u32, y: &u32| if descending { x > y } else { x < y };
        let diag = ((a.len() + b.len()) as f64 * diag_frac) as usize;
        prop_assert_eq!(merge_path_tie(&a, &b, diag, Tie::AFirst, is_less), merge_path(&a, &b, diag, is_less));
        let i = merge_path_tie(&a, &b, diag, Tie::BFirst, is_less);
        prop_assert_eq!(i, diag - merge_path(&b, &a, diag, is_less));
        let j = diag - i;
        // Everything taken goes before or ties (B's side) everything left.
        if i > 0 && j < b.len() {
            prop_assert!(is_less(&a[i - 1], &b[j]));
        }
        if j > 0 && i < a.len() {
            prop_assert!(!is_less(&a[i], &b[j - 1]));
        }
    }
}

#[test]
fn tile_loop_of_empty_inputs_visits_nothing() {
    assert!(visits(&[], &[], TileShape { threads: 4, items_per_thread: 3 }, |x, y| x < y).is_empty());
}

#[test]
fn tile_shape_grids() {
    let shape = TileShape { threads: 128, items_per_thread: 11 };
    assert_eq!((shape.tile(), shape.tiles(0), shape.tiles(1), shape.tiles(1408), shape.tiles(1409)), (1408, 0, 1, 1, 2));
    let cfg = shape.launch_config(1409).unwrap();
    assert_eq!((cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes), ((2, 1, 1), (128, 1, 1), 0));
    assert!(matches!(shape.launch_config(0), Err(Error::InvalidArgument { .. })));
    assert!(matches!(TileShape { threads: 0, items_per_thread: 4 }.launch_config(10), Err(Error::InvalidArgument { .. })));
    let one = TileShape { threads: 1, items_per_thread: 1 };
    assert_eq!(one.launch_config(i32::MAX as usize).unwrap().grid_dim.0, i32::MAX as u32);
    assert!(matches!(one.launch_config(1 << 31), Err(Error::TooLarge { what: "tile grid" })));
}

#[test]
fn tile_shape_from_the_tuning_table() {
    let shape = mergepath::tuning::merge_shape(90, 4);
    let tile = TileShape::from(shape);
    assert_eq!((tile.threads, tile.items_per_thread, tile.tile()), (shape.threads, shape.values_per_thread, shape.tile()));
}

/// The split of a stable k-way merge at `rank` by brute force: the first `rank` items of a
/// stable sort of all items in input order, counted per input.
fn brute_multiway_split(inputs: &[Vec<i16>], rank: usize, descending: bool) -> Vec<usize> {
    let mut items: Vec<(i16, usize)> = inputs.iter().enumerate().flat_map(|(t, v)| v.iter().map(move |&x| (x, t))).collect();
    items.sort_by(|x, y| if descending { y.0.cmp(&x.0) } else { x.0.cmp(&y.0) });
    let mut counts = vec![0; inputs.len()];
    items[..rank].iter().for_each(|&(_, t)| counts[t] += 1);
    counts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Multiway Merge Path: the split at every rank is the stable merge's (brute force), the
    /// partitions' rows are those splits, and the testing kit's check accepts them.
    #[test]
    fn multiway_splits_are_the_stable_merges(
        inputs in mergepath::testing::sorted_inputs::<i16, _>(1usize..12, 0usize..400, mergepath::Less),
        descending in any::<bool>(),
        spacing in 1usize..90,
    ) {
        let inputs: Vec<Vec<i16>> = if descending { inputs.into_iter().map(|mut v| { v.reverse(); v }).collect() } else { inputs };
        let is_less = |x: &i16, y: &i16| if descending { x > y } else { x < y };
        let refs: Vec<&[i16]> = inputs.iter().map(|v| v.as_slice()).collect();
        let total: usize = refs.iter().map(|s| s.len()).sum();
        for rank in 0..=total {
            prop_assert_eq!(mergepath::partition::multiway_split(&refs, rank, is_less), brute_multiway_split(&inputs, rank, descending), "rank {}", rank);
        }
        let rows: Vec<i64> = mergepath::partition::multiway_partitions_cpu(&refs, spacing, is_less).into_iter().map(|s| s as i64).collect();
        mergepath::testing::check_multiway_partitions(&refs, spacing, &rows, is_less)?;
    }

    /// The sample boundaries that bracket the GPU's partition searches: their places (the
    /// kernel's formula) are their order in the merge, each row is the split at its rank, and
    /// consecutive rows hold at most `spacing` items of each input between them, bracketing
    /// every split at a rank in between.
    #[test]
    fn multiway_boundaries_bracket_every_split(
        inputs in mergepath::testing::sorted_inputs::<i16, _>(1usize..10, 0usize..300, mergepath::Less),
        descending in any::<bool>(),
        spacing in 1usize..40,
    ) {
        let inputs: Vec<Vec<i16>> = if descending { inputs.into_iter().map(|mut v| { v.reverse(); v }).collect() } else { inputs };
        let is_less = |x: &i16, y: &i16| if descending { x > y } else { x < y };
        let refs: Vec<&[i16]> = inputs.iter().map(|v| v.as_slice()).collect();
        let lengths: Vec<usize> = refs.iter().map(|s| s.len()).collect();
        let total: usize = lengths.iter().sum();
        let boundaries = mergepath::partition::multiway_boundaries_cpu(&refs, spacing, is_less);
        prop_assert_eq!(boundaries.len(), lengths.iter().map(|&n| n.saturating_sub(1) / spacing).sum::<usize>());
        let mut rows = vec![(0, vec![0; refs.len()])];
        rows.extend(boundaries);
        rows.push((total, lengths.clone()));
        for pair in rows.windows(2) {
            let ((r0, lo), (r1, hi)) = (&pair[0], &pair[1]);
            prop_assert!(r0 < r1 || (*r0 == 0 && *r1 == 0), "ranks in merge order: {} then {}", r0, r1);
            prop_assert_eq!(lo, &brute_multiway_split(&inputs, *r0, descending), "the split at rank {}", r0);
            for t in 0..refs.len() {
                prop_assert!(lo[t] <= hi[t] && hi[t] - lo[t] <= spacing, "input {}: {} .. {} (spacing {})", t, lo[t], hi[t], spacing);
            }
            for rank in *r0..=*r1 {
                let split = brute_multiway_split(&inputs, rank, descending);
                prop_assert!((0..refs.len()).all(|t| lo[t] <= split[t] && split[t] <= hi[t]), "rank {} outside its bracket", rank);
            }
        }
    }

    /// Unsorted inputs (or an order that is not strict) still give splits inside the inputs.
    #[test]
    fn multiway_splits_of_unsorted_inputs_stay_inside(inputs in proptest::collection::vec(proptest::collection::vec(0u8..8, 0..50), 1..8), rank in any::<prop::sample::Index>()) {
        let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
        let total: usize = refs.iter().map(|s| s.len()).sum();
        let rank = rank.index(total + 1);
        for is_less in [(|x: &u8, y: &u8| x < y) as fn(&u8, &u8) -> bool, |x, y| x <= y, |x, y| (x ^ y) & 1 == 1] {
            let split = mergepath::partition::multiway_split(&refs, rank, is_less);
            prop_assert!(split.iter().zip(&refs).all(|(&s, r)| s <= r.len()));
        }
    }
}

//! The load-balancing search's tiles on the CPU: the partitions, each tile's threads and their
//! serial walks, as the kernel will run them.

use crate::partition::plan::merge_path_tie;
use crate::types::Tie;

/// The segment and rank of every item (`offsets` as in the module's semantics), computed tile
/// by tile: tiles of `tile` merge outputs (items and boundaries), `vt` outputs per thread.
pub fn load_balancing_tiles(offsets: &[usize], tile: usize, vt: usize) -> (Vec<usize>, Vec<usize>) {
    assert!(tile > 0 && vt > 0 && tile.is_multiple_of(vt), "a tile is a whole number of threads' outputs");
    assert!(offsets.first() == Some(&0), "offsets start at 0");
    let n = *offsets.last().unwrap();
    // The merge's inputs: the counting sequence (materialized here; implicit on the device) and
    // the boundaries between segments. A boundary goes out before an item equal to it.
    let items: Vec<usize> = (0..n).collect();
    let boundaries = &offsets[1..offsets.len().max(2) - 1];
    let total = n + boundaries.len();
    let split = |diag: usize| merge_path_tie(&items, boundaries, diag, Tie::BFirst, |x, y| x < y);
    let (mut segments, mut ranks) = (vec![usize::MAX; n], vec![usize::MAX; n]);
    for tile_start in (0..total).step_by(tile) {
        let tile_end = (tile_start + tile).min(total);
        // The tile's slices of both inputs, from its two partitions.
        let (a0, a1) = (split(tile_start), split(tile_end));
        let (b0, b1) = (tile_start - a0, tile_end - a1);
        for thread_start in (tile_start..tile_end).step_by(vt) {
            // The thread's split, searched inside the tile's slices (shared memory).
            let local = merge_path_tie(&items[a0..a1], &boundaries[b0..b1], thread_start - tile_start, Tie::BFirst, |x, y| x < y);
            let (mut a, mut b) = (a0 + local, b0 + (thread_start - tile_start - local));
            for _ in thread_start..(thread_start + vt).min(tile_end) {
                if b < b1 && (a >= a1 || boundaries[b] <= items[a]) {
                    b += 1; // a boundary: the next segment begins
                } else {
                    segments[a] = b;
                    ranks[a] = a - offsets[b];
                    a += 1;
                }
            }
        }
    }
    (segments, ranks)
}

/// Interval expand on the tiles: `values[s]` repeated for each item of segment `s` (a value
/// per segment, `offsets` as for the search).
pub fn interval_expand_tiles<T: Copy>(values: &[T], offsets: &[usize], tile: usize, vt: usize) -> Vec<T> {
    assert_eq!(values.len() + 1, offsets.len(), "a value per segment");
    load_balancing_tiles(offsets, tile, vt).0.into_iter().map(|s| values[s]).collect()
}

/// Segmented reduction in tiles of `tile` items: each tile folds the runs of its items that
/// share a segment (the segment of each item from the search), and a segment that crosses tile
/// starts is finished by folding its tiles' partial results in order, so `op` need only be
/// associative. Empty segments get `identity`.
pub fn segmented_reduce_tiles<T: Copy>(values: &[T], offsets: &[usize], tile: usize, identity: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    assert_eq!(offsets.last().copied(), Some(values.len()), "offsets end at the item count");
    let segment_of = load_balancing_tiles(offsets, 1, 1).0;
    // Per tile, in order: (segment, fold of the tile's items of it).
    let mut partials: Vec<(usize, T)> = Vec::new();
    for start in (0..values.len()).step_by(tile.max(1)) {
        let end = (start + tile).min(values.len());
        let mut i = start;
        while i < end {
            let s = segment_of[i];
            let mut acc = values[i];
            i += 1;
            while i < end && segment_of[i] == s {
                acc = op(acc, values[i]);
                i += 1;
            }
            partials.push((s, acc));
        }
    }
    // The partials of a segment are consecutive: fold them in order.
    let mut out = vec![identity; offsets.len() - 1];
    let mut k = 0;
    while k < partials.len() {
        let (s, mut acc) = partials[k];
        k += 1;
        while k < partials.len() && partials[k].0 == s {
            acc = op(acc, partials[k].1);
            k += 1;
        }
        out[s] = acc;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Offsets from segment lengths.
    fn offsets(lengths: &[usize]) -> Vec<usize> {
        std::iter::once(0).chain(lengths.iter().scan(0, |end, &l| {
            *end += l;
            Some(*end)
        })).collect()
    }

    #[test]
    fn empty_segments_own_no_items() {
        let o = offsets(&[2, 0, 0, 3, 0, 1]);
        let (segments, ranks) = load_balancing_tiles(&o, 4, 2);
        assert_eq!(segments, [0, 0, 3, 3, 3, 5]);
        assert_eq!(ranks, [0, 1, 0, 1, 2, 0]);
        assert_eq!((segments, ranks), crate::cpu::load_balancing_search(&o));
        assert_eq!(load_balancing_tiles(&[0], 4, 2), (vec![], vec![]));
        assert_eq!(load_balancing_tiles(&[0, 0, 0], 4, 2), (vec![], vec![]));
    }

    /// An associative operation that is not commutative: composition of affine maps
    /// `x -> a x + b` (wrapping), the first applied first.
    fn compose(f: (u64, u64), g: (u64, u64)) -> (u64, u64) {
        (g.0.wrapping_mul(f.0), g.0.wrapping_mul(f.1).wrapping_add(g.1))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn reduce_and_expand_tiles_equal_the_oracles(
            lengths in proptest::collection::vec(prop_oneof![3 => 0usize..4, 1 => 0usize..200], 0..40),
            tile in 1usize..40,
            seed in any::<u64>(),
        ) {
            let o = offsets(&lengths);
            let n = *o.last().unwrap();
            let values: Vec<(u64, u64)> = (0..n as u64).map(|i| (seed.rotate_left(i as u32) | 1, i ^ seed)).collect();
            prop_assert_eq!(segmented_reduce_tiles(&values, &o, tile, (1, 0), compose), crate::cpu::segmented_reduce(&values, &o, (1, 0), compose));
            let per_segment: Vec<u32> = (0..lengths.len() as u32).map(|s| s.wrapping_mul(2654435761)).collect();
            prop_assert_eq!(interval_expand_tiles(&per_segment, &o, tile, 1), crate::cpu::interval_expand(&per_segment, &o));
        }

        #[test]
        fn tiles_equal_the_oracle(
            lengths in proptest::collection::vec(prop_oneof![3 => 0usize..4, 1 => 0usize..200], 0..60),
            vt in 1usize..6,
            threads in 1usize..5,
        ) {
            let o = offsets(&lengths);
            prop_assert_eq!(load_balancing_tiles(&o, vt * threads, vt), crate::cpu::load_balancing_search(&o));
        }
    }
}

//! The load-balancing search's tiles on the CPU: the partitions, each tile's threads and their
//! serial walks, as the kernel will run them.

use crate::partition::merge_path_tie;
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
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

//! Host-side mergesort math, without a GPU: the pass count, the frames, the tiles' input ranges
//! of a merge pass (each input item in exactly one tile, inside its frame), and a CPU model of
//! the whole pass structure (blocksort, then merge passes over the tiles' ranges) against
//! `slice::sort_by`.

use mergepath::cpu;
use mergepath::sort::{mergesort_frame, mergesort_passes, mergesort_tile_ranges};
use proptest::prelude::*;

/// Keys with a small domain (many ties) tagged with their input position, compared by key only.
fn tagged(keys: &[u8]) -> Vec<(u8, usize)> {
    keys.iter().copied().zip(0..).collect()
}
fn by_key(x: &(u8, usize), y: &(u8, usize)) -> bool {
    x.0 < y.0
}

/// What the GPU does, pass by pass, on the CPU: stable-sort each tile, then for each merge pass
/// merge every output tile's (A, B) ranges, in tile order.
fn mergesort_model<T: Copy>(keys: &[T], tile: usize, less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut cur: Vec<T> = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(tile) {
        let mut c = chunk.to_vec();
        c.sort_by(|x, y| if less(x, y) { std::cmp::Ordering::Less } else if less(y, x) { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal });
        cur.extend(c);
    }
    for pass in 0..mergesort_passes(keys.len(), tile) {
        let run = tile << pass;
        let mut next = Vec::with_capacity(cur.len());
        for (a, b) in mergesort_tile_ranges(&cur, run, tile, &less) {
            next.extend(cpu::merge_by(&cur[a], &cur[b], &less));
        }
        cur = next;
    }
    cur
}

/// Input whose runs of `run` items are each sorted (the state before a merge pass).
fn sorted_runs(mut keys: Vec<u8>, run: usize) -> Vec<(u8, usize)> {
    for c in keys.chunks_mut(run) {
        c.sort_unstable();
    }
    tagged(&keys)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn tiles_cover_every_input_once_inside_their_frame(
        keys in proptest::collection::vec(0u8..6, 0..600), tile in 1usize..40, log_runs in 0u32..5,
    ) {
        let run = tile << log_runs;
        let input = sorted_runs(keys, run);
        let n = input.len();
        let ranges = mergesort_tile_ranges(&input, run, tile, by_key);
        prop_assert_eq!(ranges.len(), n.div_ceil(tile));
        let mut seen = vec![0u32; n];
        for (t, (a, b)) in ranges.iter().enumerate() {
            let f = mergesort_frame(n, run, t * tile);
            prop_assert!(a.start <= a.end && b.start <= b.end);
            prop_assert!(f.begin <= a.start && a.end <= f.begin + f.a_count, "A range outside its run");
            prop_assert!(f.begin + f.a_count <= b.start && b.end <= f.begin + f.a_count + f.b_count, "B range outside its run");
            prop_assert_eq!(a.len() + b.len(), tile.min(n - t * tile), "tile size");
            for i in a.clone().chain(b.clone()) {
                seen[i] += 1;
            }
        }
        prop_assert!(seen.iter().all(|&c| c == 1), "every input item in exactly one tile");
    }

    #[test]
    fn pass_model_equals_stable_sort(keys in proptest::collection::vec(0u8..8, 0..700), tile in 1usize..50) {
        let input = tagged(&keys);
        let mut want = input.clone();
        want.sort_by_key(|x| x.0);
        prop_assert_eq!(mergesort_model(&input, tile, by_key), want);
    }

    #[test]
    fn pass_model_descending(keys in proptest::collection::vec(0u8..8, 0..400), tile in 1usize..20) {
        let input = tagged(&keys);
        let mut want = input.clone();
        want.sort_by_key(|x| std::cmp::Reverse(x.0));
        prop_assert_eq!(mergesort_model(&input, tile, |x: &(u8, usize), y: &(u8, usize)| x.0 > y.0), want);
    }
}

#[test]
fn pass_counts() {
    assert_eq!(mergesort_passes(0, 100), 0);
    assert_eq!(mergesort_passes(1, 100), 0);
    assert_eq!(mergesort_passes(100, 100), 0);
    assert_eq!(mergesort_passes(101, 100), 1);
    assert_eq!(mergesort_passes(200, 100), 1);
    assert_eq!(mergesort_passes(201, 100), 2);
    assert_eq!(mergesort_passes(400, 100), 2);
    assert_eq!(mergesort_passes(401, 100), 3);
    // 2^26 u32 keys in 2944-key tiles: 22,796 tiles, 15 passes.
    assert_eq!(mergesort_passes(1 << 26, 2944), 15);
    assert_eq!(mergesort_passes(usize::MAX, 1), usize::BITS);
}

#[test]
fn frames_at_the_end() {
    // 10 items, runs of 3: frames [0,6) and [6,10) = A [6,9) + B [9,10).
    assert_eq!(mergesort_frame(10, 3, 7), mergepath::sort::MergesortFrame { begin: 6, a_count: 3, b_count: 1 });
    // A lone last run: nothing to merge it with.
    assert_eq!(mergesort_frame(8, 3, 6), mergepath::sort::MergesortFrame { begin: 6, a_count: 2, b_count: 0 });
    assert_eq!(mergesort_frame(12, 3, 12), mergepath::sort::MergesortFrame { begin: 12, a_count: 0, b_count: 0 });
}

#[test]
fn cpu_oracle_sort_is_stable_and_total_for_floats() {
    let keys = [2.0f32, f32::NAN, -0.0, 0.0, -f32::NAN, 1.0, 0.0];
    let got = cpu::sort_keys(&keys, mergepath::Less);
    let want = [-f32::NAN, -0.0, 0.0, 0.0, 1.0, 2.0, f32::NAN];
    assert_eq!(bytemuck::cast_slice::<f32, u32>(&got), bytemuck::cast_slice::<f32, u32>(&want));
    let (k, v) = cpu::sort_pairs(&[3u32, 1, 3, 1], &[0u32, 1, 2, 3], mergepath::Greater);
    assert_eq!((k, v), (vec![3, 3, 1, 1], vec![0, 2, 1, 3]));
}

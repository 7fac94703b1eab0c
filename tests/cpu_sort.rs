//! Host-side mergesort math, without a GPU: the pass plan, the frames, the tiles' input ranges
//! of two-way and four-way passes (each input item in exactly one tile, inside its frame, every
//! tile but a frame's last full), and a CPU model of the whole pass structure (blocksort, then
//! merge passes over those ranges) against `slice::sort_by`.

use mergepath::cpu;
use mergepath::sort::{
    mergesort4_boundary_count, mergesort4_tile_count, mergesort4_tiles, mergesort_block, mergesort_frame,
    mergesort_levels, mergesort_plan, mergesort_tile_ranges, MergesortPass,
};
use proptest::prelude::*;

/// Keys with a small domain (many ties) tagged with their input position, compared by key only.
fn tagged(keys: &[u8]) -> Vec<(u8, usize)> {
    keys.iter().copied().zip(0..).collect()
}
fn by_key(x: &(u8, usize), y: &(u8, usize)) -> bool {
    x.0 < y.0
}

/// What the GPU does, pass by pass, on the CPU: stable-sort each block, then for each merge pass
/// of the plan merge every output tile's (A, B) ranges (two-way) or every segment's (A, B, C, D)
/// ranges as (A + B) + (C + D) (four-way), in tile order.
fn mergesort_model<T: Copy>(keys: &[T], tile: usize, block: usize, four_way: bool, less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut cur: Vec<T> = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(block) {
        let mut c = chunk.to_vec();
        c.sort_by(|x, y| mergepath::cpu::ordering_by(&less, x, y));
        cur.extend(c);
    }
    for pass in mergesort_plan(keys.len(), block, four_way) {
        let mut next = Vec::with_capacity(cur.len());
        if pass.ways == 2 {
            for (a, b) in mergesort_tile_ranges(&cur, pass.run, tile, &less) {
                next.extend(cpu::merge_by(&cur[a], &cur[b], &less));
            }
        } else {
            for [a, b, c, d] in mergesort4_tiles(&cur, pass.run, tile, 4, &less) {
                let ab = cpu::merge_by(&cur[a], &cur[b], &less);
                let cd = cpu::merge_by(&cur[c], &cur[d], &less);
                next.extend(cpu::merge_by(&ab, &cd, &less));
            }
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

/// Whether the ranges cover 0..n exactly once between them.
fn cover_each_once(n: usize, ranges: impl IntoIterator<Item = std::ops::Range<usize>>) -> bool {
    let mut seen = vec![0u32; n];
    for i in ranges.into_iter().flatten() {
        seen[i] += 1;
    }
    seen.iter().all(|&c| c == 1)
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
        for (t, (a, b)) in ranges.iter().enumerate() {
            let f = mergesort_frame(n, run, t * tile);
            prop_assert!(a.start <= a.end && b.start <= b.end);
            prop_assert!(f.begin <= a.start && a.end <= f.begin + f.a_count, "A range outside its run");
            prop_assert!(f.begin + f.a_count <= b.start && b.end <= f.begin + f.a_count + f.b_count, "B range outside its run");
            prop_assert_eq!(a.len() + b.len(), tile.min(n - t * tile), "tile size");
        }
        prop_assert!(cover_each_once(n, ranges.into_iter().flat_map(|(a, b)| [a, b])), "every input item in exactly one tile");
    }

    #[test]
    fn four_way_tiles_cover_every_input_once_inside_their_frame(
        keys in proptest::collection::vec(0u8..6, 0..900), tile in 1usize..30, log_runs in 0u32..4,
        lanes in proptest::sample::select(vec![1usize, 2, 4, 8, 16, 32]),
    ) {
        let run = tile << log_runs;
        let input = sorted_runs(keys, run);
        let n = input.len();
        let tiles = mergesort4_tiles(&input, run, tile, lanes, by_key);
        prop_assert_eq!(tiles.len(), mergesort4_tile_count(n, run, tile));
        let mut out = 0;
        for t in &tiles {
            let frame = out / (4 * run) * (4 * run);
            for (r, range) in t.iter().enumerate() {
                let (lo, hi) = ((frame + r * run).min(n), (frame + (r + 1) * run).min(n));
                prop_assert!(lo <= range.start && range.start <= range.end && range.end <= hi, "range outside its run");
            }
            // Full tiles of one CTA's capacity, except at the end of a frame.
            let len: usize = t.iter().map(|r| r.len()).sum();
            let frame_end = (frame + 4 * run).min(n);
            prop_assert_eq!(len, (2 * tile).min(frame_end - out), "tile size");
            out += len;
        }
        prop_assert_eq!(out, n);
        prop_assert!(cover_each_once(n, tiles.into_iter().flatten()), "every input item in exactly one tile");
    }

    #[test]
    fn pass_model_equals_stable_sort(
        keys in proptest::collection::vec(0u8..8, 0..1500), tile in 1usize..30, blocks_per_tile in 1usize..4,
        four_way in any::<bool>(),
    ) {
        let input = tagged(&keys);
        let mut want = input.clone();
        want.sort_by_key(|x| x.0);
        prop_assert_eq!(mergesort_model(&input, tile, tile * blocks_per_tile, four_way, by_key), want);
    }

    #[test]
    fn pass_model_descending(keys in proptest::collection::vec(0u8..8, 0..600), tile in 1usize..20) {
        let input = tagged(&keys);
        let mut want = input.clone();
        want.sort_by_key(|x| std::cmp::Reverse(x.0));
        prop_assert_eq!(mergesort_model(&input, tile, 2 * tile, true, |x: &(u8, usize), y: &(u8, usize)| x.0 > y.0), want);
    }
}

#[test]
fn pass_plans() {
    let plan = |n, block| mergesort_plan(n, block, true).iter().map(|p: &MergesortPass| (p.run, p.ways)).collect::<Vec<_>>();
    assert_eq!(plan(0, 100), []);
    assert_eq!(plan(100, 100), []);
    assert_eq!(plan(101, 100), [(100, 2)]);
    assert_eq!(plan(201, 100), [(100, 4)]);
    assert_eq!(plan(401, 100), [(100, 2), (200, 4)]);
    assert_eq!(plan(1601, 100), [(100, 2), (200, 4), (800, 4)]);
    // 2^26 u32 keys in 5,888-key blocks: 11,398 blocks, 14 levels in 7 four-way passes.
    assert_eq!(plan(1 << 26, 5888).len(), 7);
    assert!(plan(1 << 26, 5888).iter().all(|&(_, ways)| ways == 4));
    // 2^20: 179 blocks, 8 levels in 4 passes.
    assert_eq!(plan(1 << 20, 5888).len(), 4);
    assert_eq!(mergesort_plan(usize::MAX, 1, true).len(), usize::BITS as usize / 2);
    // Odd levels of a four-way key sort start from doubled blocks: 2^26 8-byte keys in blocks
    // of 3,840 would need 15 levels (a two-way pass and seven four-way), in 7,680 they need 14.
    assert_eq!(mergesort_block(1 << 26, 3840, true, false, true), 7680);
    assert_eq!(plan(1 << 26, 7680), (0..7).map(|k| (7680 << (2 * k), 4)).collect::<Vec<_>>());
    assert_eq!(mergesort_block(1 << 26, 3840, true, false, false), 3840, "pairs keep the block");
    assert_eq!(mergesort_block(1 << 26, 3840, false, false, true), 3840, "two-way sorts with partition kernels keep the block");
    assert_eq!(mergesort_block(1 << 26, 5888, true, false, true), 5888, "even levels keep the block");
    assert_eq!(mergesort_block(5000, 3840, true, false, true), 3840, "one level: a two-way pass");
    assert_eq!(mergesort_levels(1 << 26, 3840), 15);
    // Small key sorts (two-way passes searching inside the merge CTAs) start from doubled
    // blocks: one pass fewer. 2^20 4-byte keys: 179 blocks of 5,888, 8 levels; 90 of 11,776, 7.
    assert_eq!(mergesort_block(1 << 20, 5888, false, true, true), 11776);
    assert_eq!(mergesort_levels(1 << 20, 11776), 7);
    assert_eq!(mergesort_block(1 << 20, 5888, false, true, false), 5888, "small pair sorts keep the block");
    assert_eq!(mergesort_block(6000, 5888, false, true, true), 5888, "one level: the blocksort is never the whole sort on doubled blocks");
    // Two-way only: one pass per level, runs doubling.
    let two = mergesort_plan(1601, 100, false);
    assert_eq!(two.iter().map(|p| (p.run, p.ways)).collect::<Vec<_>>(), [(100, 2), (200, 2), (400, 2), (800, 2), (1600, 2)]);
}

#[test]
fn four_way_counts() {
    // Full frames: 4 * run / tile coarse boundaries and 2 * run / tile tiles each; the last
    // frame's boundaries rounded up per pair, its tiles of 2 * tile rounded up.
    assert_eq!(mergesort4_boundary_count(0, 10, 5), 0);
    assert_eq!(mergesort4_boundary_count(40, 10, 5), 8);
    assert_eq!(mergesort4_boundary_count(41, 10, 5), 9);
    assert_eq!(mergesort4_boundary_count(66, 10, 5), 8 + 4 + 2);
    assert_eq!(mergesort4_tile_count(0, 10, 5), 0);
    assert_eq!(mergesort4_tile_count(40, 10, 5), 4);
    assert_eq!(mergesort4_tile_count(41, 10, 5), 5);
    assert_eq!(mergesort4_tile_count(66, 10, 5), 4 + 3);
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

#[test]
fn segment_offsets_are_validated() {
    use mergepath::segmented::validate_segment_offsets;
    assert_eq!(validate_segment_offsets(&[], 0), Ok(()));
    assert_eq!(validate_segment_offsets(&[3, 3, 9], 9), Ok(()));
    assert!(validate_segment_offsets(&[3, 2], 9).is_err());
    assert!(validate_segment_offsets(&[0, 10], 9).is_err());
    // The oracle leaves what is outside the segments alone.
    assert_eq!(mergepath::cpu::sort_segments_keys(&[9u32, 3, 2, 1, 0], &[1, 3, 4], mergepath::Less), [9, 2, 3, 1, 0]);
}

proptest! {
    /// The segmented sort's plan, run on the CPU exactly as the kernels cut it (tiles from
    /// `segmented_tile_start`, each segment's piece in each tile sorted, then each level's
    /// merges per tile from `segment_level_merge`, ping-pong, odd-level segments copied back),
    /// sorts every segment like the oracle; every tile holds at most stride + small items and
    /// every merge writes inside its tile.
    #[test]
    fn segmented_sort_plan_sorts_every_segment(
        lens in proptest::collection::vec(prop_oneof![0usize..6, 0usize..40, 30usize..200], 0..40),
        start in 0usize..5,
        tail in 0usize..5,
        stride in 1usize..24,
        small_pick in any::<usize>(),
        seed in any::<u64>(),
    ) {
        use mergepath::segmented::{segment_level_merge, segment_levels, segmented_tile_start};
        let small = 1 + small_pick % stride;
        let mut offsets = vec![start];
        for l in &lens {
            offsets.push(offsets.last().unwrap() + l);
        }
        let n = offsets.last().unwrap() + tail;
        let mut state = seed;
        let keys: Vec<(u32, usize)> = (0..n)
            .map(|i| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((state >> 60) as u32, i)
            })
            .collect();
        let segments: Vec<(usize, usize)> = offsets.windows(2).map(|w| (w[0], w[1])).collect();
        let tiles = n.div_ceil(stride);
        let bounds: Vec<usize> = (0..=tiles).map(|t| segmented_tile_start(&offsets, t, stride, small)).collect();
        prop_assert_eq!(bounds[0], offsets[0]);
        prop_assert_eq!(bounds[tiles], *offsets.last().unwrap());
        for w in bounds.windows(2) {
            prop_assert!(w[0] <= w[1] && w[1] - w[0] <= stride + small, "tile {:?}", w);
        }
        // Tiles: each segment's piece in each tile sorted (stable, by key only).
        let mut buf = [keys.clone(), keys.clone()];
        for w in bounds.windows(2) {
            for &(b, e) in &segments {
                let (p, q) = (b.max(w[0]), e.min(w[1]));
                if p < q {
                    buf[0][p..q].sort_by_key(|x| x.0);
                }
            }
        }
        let levels = segments.iter().map(|&(b, e)| segment_levels(b, e, stride, small)).max().unwrap_or(0);
        for level in 0..levels {
            let (src, dst) = if level % 2 == 0 { (0, 1) } else { (1, 0) };
            for &(b, e) in &segments {
                for t in b / stride..tiles {
                    let Some((ra, rb, out)) = segment_level_merge(b, e, stride, small, t, level) else { continue };
                    prop_assert!(out.start >= b && out.end <= e);
                    prop_assert!(out.start >= bounds[t] && out.end <= bounds[t + 1], "merge output in tile {}", t);
                    let (a, bb) = (&buf[src][ra.clone()], &buf[src][rb.clone()]);
                    let less = |x: &(u32, usize), y: &(u32, usize)| x.0 < y.0;
                    let (d0, d1) = (out.start - ra.start, out.end - ra.start);
                    let (a0, a1) = (mergepath::merge_path(a, bb, d0, less), mergepath::merge_path(a, bb, d1, less));
                    let merged = mergepath::cpu::merge_by(&a[a0..a1], &bb[d0 - a0..d1 - a1], less);
                    let [b0, b1] = &mut buf;
                    let dst_buf = if dst == 0 { b0 } else { b1 };
                    dst_buf[out].copy_from_slice(&merged);
                }
            }
        }
        let mut got = buf[0].clone();
        for &(b, e) in &segments {
            if segment_levels(b, e, stride, small) % 2 == 1 {
                got[b..e].copy_from_slice(&buf[1][b..e]);
            }
        }
        let mut want = keys.clone();
        for &(b, e) in &segments {
            want[b..e].sort_by_key(|x| x.0);
        }
        prop_assert_eq!(got, want);
    }
}

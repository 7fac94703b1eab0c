//! CPU models of the merge passes' tiling (which input ranges each output tile merges, as the
//! kernels compute them), for the tests.

use super::plan::{mergesort4_frame, mergesort4_pair_boundaries, mergesort_frame};
use crate::partition::plan::merge_path;
use std::ops::Range;

/// The input ranges (A run slice, B run slice) each output tile of a merge pass merges, as the
/// device computes them (`mergesort_partition` and `mergesort_range`). `keys`
/// holds sorted runs of `run` items; `run` must be a multiple of `tile`.
pub fn mergesort_tile_ranges<T>(keys: &[T], run: usize, tile: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<(Range<usize>, Range<usize>)> {
    assert!(tile > 0 && run.is_multiple_of(tile), "runs must be whole tiles");
    let n = keys.len();
    let partition = |diag: usize| {
        let f = mergesort_frame(n, run, diag);
        let a = &keys[f.begin..f.begin + f.a_count];
        let b = &keys[f.begin + f.a_count..f.begin + f.a_count + f.b_count];
        merge_path(a, b, diag - f.begin, &is_less)
    };
    (0..n.div_ceil(tile))
        .map(|t| {
            let (d0, d1) = (t * tile, ((t + 1) * tile).min(n));
            let f = mergesort_frame(n, run, d0);
            let end_local = d1 - f.begin;
            let a0 = partition(d0);
            let a1 = if end_local == f.a_count + f.b_count { f.a_count } else { partition(d1) };
            let b_base = f.begin + f.a_count;
            (f.begin + a0..f.begin + a1, b_base + (d0 - f.begin - a0)..b_base + (end_local - a1))
        })
        .collect()
}

/// The input ranges of the four runs (A, B, C, D, global indices) each output tile of a
/// four-way pass merges, in tile (CTA) order, as the device computes them
/// (`mergesort4_boundaries_body`, `mergesort4_tile_splits_body` and `mergesort4_pass_tile`):
/// every tile but a frame's last merges exactly `2 * tile` items. `keys` holds sorted runs of
/// `run` items; `run` must be a multiple of `tile`; `lanes` threads search each tile's split.
pub fn mergesort4_tiles<T>(keys: &[T], run: usize, tile: usize, lanes: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<[Range<usize>; 4]> {
    assert!(tile > 0 && run.is_multiple_of(tile), "runs must be whole tiles");
    let n = keys.len();
    let mut tiles = Vec::new();
    for frame in 0..n.div_ceil(4 * run) {
        let (begin, c) = mergesort4_frame(n, run, frame);
        let mut starts = [0; 4];
        for r in 1..4 {
            starts[r] = starts[r - 1] + c[r - 1];
        }
        let lists: [&[T]; 4] = [0, 1, 2, 3].map(|r| &keys[begin + starts[r]..begin + starts[r] + c[r]]);
        // A coarse boundary of pair p (runs 2p, 2p + 1): the element at position j * tile of
        // the pair's merge, its split of all four runs, and its place among the frame's
        // boundaries.
        let boundary = |p: usize, j: usize| -> (usize, [usize; 4]) {
            let (p0, p1, q0, q1) = (lists[2 * p], lists[2 * p + 1], lists[2 - 2 * p], lists[3 - 2 * p]);
            let a = merge_path(p0, p1, j * tile, &is_less);
            let b = j * tile - a;
            let x = merge_item_at(p0, p1, [a, b], &is_less);
            // Q after P: Q's items strictly before x; Q before P: those not after x.
            let before = |q: &[T]| q.partition_point(|y| if p == 0 { is_less(y, x) } else { !is_less(x, y) });
            let (c0, c1) = (before(q0), before(q1));
            let split = if p == 0 { [a, b, c0, c1] } else { [c0, c1, a, b] };
            (j + (c0 + c1).div_ceil(tile), split)
        };
        let (ab, cd) = mergesort4_pair_boundaries(&c, tile);
        let mut bounds = vec![[0; 4]; ab + cd];
        for j in 0..ab + cd {
            let (slot, split) = if j < ab { boundary(0, j) } else { boundary(1, j - ab) };
            bounds[slot] = split;
        }
        // Each tile start's split: a boundary's slot is ceil(its rank / tile), so boundaries
        // 2 t and 2 t + 1 (or the frame's end) bracket tile t's first output, in which
        // mergesort4_tile_split searches it.
        let total: usize = c.iter().sum();
        let mut splits: Vec<[usize; 4]> = (0..total.div_ceil(2 * tile))
            .map(|t| {
                let (lo, hi) = (bounds[2 * t], bounds.get(2 * t + 1).copied().unwrap_or(c));
                mergesort4_tile_split(&lists, lo, hi, t * 2 * tile, lanes, &is_less)
            })
            .collect();
        splits.push(c);
        for w in splits.windows(2) {
            tiles.push([0, 1, 2, 3].map(|r| begin + starts[r] + w[0][r]..begin + starts[r] + w[1][r]));
        }
    }
    tiles
}

/// The point at diagonal `diag` of the merge path of `x` and `y` (the counts of each before
/// it), searched between known points `lo` and `hi` of the path, as the device's
/// `merge_path_between2` does.
fn merge_path_between<T>(x: &[T], y: &[T], lo: [usize; 2], hi: [usize; 2], diag: usize, is_less: impl Fn(&T, &T) -> bool) -> [usize; 2] {
    let a = lo[0] + merge_path(&x[lo[0]..hi[0]], &y[lo[1]..hi[1]], diag - lo[0] - lo[1], is_less);
    [a, diag - a]
}

/// The item the merge of `x` and `y` puts out at path point `p` (not the end).
fn merge_item_at<'a, T>(x: &'a [T], y: &'a [T], p: [usize; 2], is_less: impl Fn(&T, &T) -> bool) -> &'a T {
    if p[1] >= y.len() || (p[0] < x.len() && !is_less(&y[p[1]], &x[p[0]])) {
        &x[p[0]]
    } else {
        &y[p[1]]
    }
}

/// The split of a four-way frame's runs at output position `rank`, as the device's
/// `mergesort4_tile_splits_body` searches it inside the bracket of coarse boundaries `lo` and
/// `hi`: k (the items of A + B before `rank`) is the merge path of the pairs' merges at
/// `rank`, searched with `lanes` probes a round, each probe a merge-path search in
/// each pair, all bounded by the path points of the probes that bracket the answer so far.
fn mergesort4_tile_split<T>(lists: &[&[T]; 4], lo: [usize; 4], hi: [usize; 4], rank: usize, lanes: usize, is_less: &impl Fn(&T, &T) -> bool) -> [usize; 4] {
    let (mut below, mut above) = ([[lo[0], lo[1]], [lo[2], lo[3]]], [[hi[0], hi[1]], [hi[2], hi[3]]]);
    let mut begin = (lo[0] + lo[1]).max(rank.saturating_sub(hi[2] + hi[3]));
    let mut end = (hi[0] + hi[1]).min(rank - (lo[2] + lo[3]));
    while begin < end {
        let len = end - begin;
        // The device's lane_group::probe: len * (l + 1) / (lanes + 1) in floating point.
        let (first, probe) = (begin, |l: usize| (((len as f64) * ((l + 1) as f64 / (lanes + 1) as f64)) as usize).min(len - 1));
        // Each lane's path points in both pairs, and whether its probe takes from A + B.
        let probes: Vec<([usize; 2], [usize; 2], bool)> = (0..lanes)
            .map(|l| {
                let m = first + probe(l);
                let ab = merge_path_between(lists[0], lists[1], below[0], above[0], m, is_less);
                let cd = merge_path_between(lists[2], lists[3], below[1], above[1], rank - 1 - m, is_less);
                let takes = !is_less(merge_item_at(lists[2], lists[3], cd, is_less), merge_item_at(lists[0], lists[1], ab, is_less));
                (ab, cd, takes)
            })
            .collect();
        let f = probes.iter().position(|p| !p.2).unwrap_or(lanes);
        if f > 0 {
            begin = first + probe(f - 1) + 1;
            (below[0], above[1]) = (probes[f - 1].0, probes[f - 1].1);
        }
        if f < lanes {
            end = first + probe(f);
            (above[0], below[1]) = (probes[f].0, probes[f].1);
        }
    }
    let ab = merge_path_between(lists[0], lists[1], below[0], above[0], begin, is_less);
    let cd = merge_path_between(lists[2], lists[3], below[1], above[1], rank - begin, is_less);
    [ab[0], ab[1], cd[0], cd[1]]
}

//! Multiway Merge Path: the exact split of k sorted sequences at an output rank, the k-way
//! generalisation of [`merge_path`](super::merge_path). The search of the
//! `mergepath_multiway_partitions` kernel (`cta_multiway_narrow` in
//! `mergepath-build/kernels/mergepath/cta/multiway.cuh`) on the CPU. The kernel starts each
//! search from narrower ranges, the bracket of two consecutive sample boundaries (every s-th
//! item of every input, ranked exactly), and once the ranges hold at most a tile it merges
//! them in shared memory and counts; the CPU searches from whole inputs to the end. For sorted
//! inputs the split is unique, so the two agree.

use crate::device::contract::MULTIWAY_SEARCH_ROUNDS;

/// Where the stable k-way merge of `inputs` (each sorted by `is_less`) crosses output rank
/// `rank` (at most the total length): `split[t]` items of input `t` come before it, the splits
/// summing to `rank`. Stable: of equal items, those of a lower input go first, each input's in
/// its own order, so the split is unique.
///
/// The search keeps a range `[lo_t, hi_t]` holding each input's split and, each round, takes
/// the middle item of every non-empty range, weighted by its range's length; the weighted
/// median of those items (in the merge's order) is the pivot. Counting the items before the
/// pivot in every input (binary searches inside the ranges) says whether it is among the first `rank` items,
/// which moves either every `lo` up to the pivot's counts or every `hi` down to them, removing
/// at least a quarter of the total range width: O(log n) rounds of k binary searches. Inputs
/// that are not sorted (or a comparator that is not a strict weak order) give splits inside the
/// inputs that need not sum to `rank`, after at most `MULTIWAY_SEARCH_ROUNDS` rounds.
///
/// ```
/// use mergepath::partition::multiway_split;
/// let inputs: [&[u32]; 3] = [&[1, 4, 7], &[2, 4], &[4, 9]];
/// // Merged: 1 2 4(a) 4(b) 4(c) 7 9; the first 4 items take 2 of a, 2 of b, none of c.
/// assert_eq!(multiway_split(&inputs, 4, |x, y| x < y), [2, 2, 0]);
/// ```
pub fn multiway_split<T>(inputs: &[&[T]], rank: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<usize> {
    let total: usize = inputs.iter().map(|s| s.len()).sum();
    assert!(rank <= total, "output rank past the end of the merge");
    let mut lo: Vec<usize> = inputs.iter().map(|s| rank.saturating_sub(total - s.len())).collect();
    let mut hi: Vec<usize> = inputs.iter().map(|s| s.len().min(rank)).collect();
    // Candidate t goes before candidate d in the merge's order.
    let before = |t: usize, mt: usize, d: usize, md: usize| {
        let (x, y) = (&inputs[t][mt], &inputs[d][md]);
        is_less(x, y) || (!is_less(y, x) && t < d)
    };
    for _ in 0..MULTIWAY_SEARCH_ROUNDS {
        let mid = |t: usize| lo[t] + (hi[t] - lo[t]) / 2;
        let width: usize = (0..inputs.len()).map(|t| hi[t] - lo[t]).sum();
        if width == 0 {
            break;
        }
        // The weighted median: the first candidate with at most half the width before it
        // and more than half up to its end; the first candidate where none is (a comparator
        // that is not a strict weak order).
        let live = |t: &usize| hi[*t] > lo[*t];
        let pivot = (0..inputs.len())
            .filter(live)
            .find(|&t| {
                let ahead: usize = (0..inputs.len()).filter(live).filter(|&d| d != t && before(d, mid(d), t, mid(t))).map(|d| hi[d] - lo[d]).sum();
                2 * ahead <= width && width < 2 * (ahead + hi[t] - lo[t])
            })
            .or_else(|| (0..inputs.len()).find(live))
            .expect("a non-empty range");
        let (m, x) = (mid(pivot), &inputs[pivot][mid(pivot)]);
        // Items of each input before the pivot (equal ones of lower inputs go first), clamped to
        // the input's range: searched inside it. The clamped counts sum below `rank` exactly
        // when the true ones do (each split lies in its range), so they decide the same.
        let counts: Vec<usize> = (0..inputs.len())
            .map(|u| if u == pivot { m } else { lo[u] + items_before(&inputs[u][lo[u]..hi[u]], u, x, pivot, &is_less) })
            .collect();
        let in_prefix = counts.iter().sum::<usize>() < rank;
        for u in 0..inputs.len() {
            if in_prefix {
                let c = if u == pivot { m + 1 } else { counts[u] };
                lo[u] = c.clamp(lo[u], hi[u]);
            } else {
                hi[u] = counts[u].clamp(lo[u], hi[u]);
            }
        }
    }
    lo
}

/// Items of `items` (a sorted part of input `input`) that go before `x` of input `x_input` (not
/// `input`) in the stable merge: equal items of a lower input go first, of a higher one after.
pub(crate) fn items_before<T>(items: &[T], input: usize, x: &T, x_input: usize, is_less: impl Fn(&T, &T) -> bool) -> usize {
    if input < x_input {
        items.partition_point(|y| !is_less(x, y))
    } else {
        items.partition_point(|y| is_less(y, x))
    }
}

/// The multiway partitions [`multiway_partitions`](super::multiway_partitions) computes, on the
/// CPU: for each of the [`partition_count`](super::partition_count)`(total, spacing)` ranks
/// `min(p * spacing, total)`, the [`multiway_split`] there; row-major, `k` entries per rank.
pub fn multiway_partitions_cpu<T>(inputs: &[&[T]], spacing: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<usize> {
    assert!(spacing > 0, "spacing must be positive");
    let total: usize = inputs.iter().map(|s| s.len()).sum();
    (0..super::plan::partition_count(total, spacing))
        .flat_map(|p| multiway_split(inputs, p.saturating_mul(spacing).min(total), &is_less))
        .collect()
}

/// The sample boundaries the `mergepath_multiway_boundaries` kernel computes, on the CPU: the
/// item at every `spacing`-th position of every input (positions `j * spacing`, `0 < j *
/// spacing < len`), in the order of the inputs' stable merge, each as its rank there and its
/// split (the items of every input before it: `inputs.len()` entries). Its place among all
/// boundaries is the kernel's formula, the sum over inputs of their boundaries below the
/// split, `(split - 1) / spacing` each. Between two consecutive boundaries (and before the
/// first, after the last) lie at most `spacing` items of each input, so two consecutive rows
/// bracket every split in between: the partition kernel's searches start there.
///
/// ```
/// use mergepath::partition::multiway_boundaries_cpu;
/// let inputs: [&[u32]; 2] = [&[1, 3, 5, 7], &[2, 4, 6]];
/// // Boundaries every 2: 5 (input 0, position 2) and 6 (input 1, position 2).
/// let boundaries = multiway_boundaries_cpu(&inputs, 2, |x, y| x < y);
/// assert_eq!(boundaries, [(4, vec![2, 2]), (5, vec![3, 2])]);
/// ```
pub fn multiway_boundaries_cpu<T>(inputs: &[&[T]], spacing: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<(usize, Vec<usize>)> {
    assert!(spacing > 0, "spacing must be positive");
    let mut boundaries: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (m, input) in inputs.iter().enumerate() {
        for position in (1..).map(|j| j * spacing).take_while(|&p| p < input.len()) {
            let x = &input[position];
            let split: Vec<usize> = inputs
                .iter()
                .enumerate()
                .map(|(t, other)| if t == m { position } else { items_before(other, t, x, m, &is_less) })
                .collect();
            let slot = split.iter().map(|&c| c.saturating_sub(1) / spacing).sum();
            boundaries.push((slot, split.iter().sum(), split));
        }
    }
    boundaries.sort_by_key(|b| b.0);
    boundaries.into_iter().map(|(_, rank, split)| (rank, split)).collect()
}

/// Multiway splits of the runs (lengths `lengths`) at ascending output ranks `ranks` (the
/// first 0, the last the total), one row per rank, made safe: inside the runs, each row taking
/// at least what the row before took from every run and exactly its rank in all. The splits of
/// sorted runs under a strict weak order are left as they are.
pub(crate) fn clamp_multiway_splits(rows: &mut [Vec<usize>], ranks: &[usize], lengths: &[usize]) {
    let ways = lengths.len();
    let mut prev = vec![0usize; ways];
    for (row, &rank) in rows.iter_mut().zip(ranks) {
        row.resize(ways, 0);
        for t in 0..ways {
            row[t] = row[t].clamp(prev[t], lengths[t]);
        }
        // Too many: give back from the last runs, not below the row before; too few: take
        // more from the first runs, up to their lengths. The runs hold every rank, so both
        // end at exactly `rank` items.
        let mut sum: usize = row.iter().sum();
        for t in (0..ways).rev() {
            let back = (sum.saturating_sub(rank)).min(row[t] - prev[t]);
            row[t] -= back;
            sum -= back;
        }
        for t in 0..ways {
            let more = (rank.saturating_sub(sum)).min(lengths[t] - row[t]);
            row[t] += more;
            sum += more;
        }
        prev.clone_from(row);
    }
}

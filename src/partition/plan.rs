//! The pure Merge Path math: partition counts and the searches of the partition kernels,
//! mirrored exactly on the CPU. Shared by the launch code, the host backend and the tests.

use crate::types::Tie;

/// How many partitions split `total` merged items every `spacing`: one per tile boundary,
/// `ceil(total / spacing) + 1` (the last is the end of both inputs).
pub fn partition_count(total: usize, spacing: usize) -> usize {
    total.div_ceil(spacing) + 1
}

/// Where the merge path of `a` and `b` crosses cross-diagonal `diag` (0 <= diag <= a.len() +
/// b.len()): the number of the first `diag` merged items that come from `a`. Ties go to `a`,
/// as in the stable merge. `is_less(x, y)` answers "x goes strictly before y".
pub fn merge_path<T>(a: &[T], b: &[T], diag: usize, is_less: impl Fn(&T, &T) -> bool) -> usize {
    merge_path_tie(a, b, diag, Tie::AFirst, is_less)
}

/// [`merge_path`] with equal items of A and B ordered as `tie` says (`merge_path<PROBES, Tie>`
/// in `mergepath-build/kernels/mergepath/thread/search.cuh`, mirrored exactly). With
/// [`Tie::BFirst`] it is `diag - merge_path(b, a, diag)`.
pub fn merge_path_tie<T>(a: &[T], b: &[T], diag: usize, tie: Tie, is_less: impl Fn(&T, &T) -> bool) -> usize {
    assert!(diag <= a.len() + b.len(), "diagonal past the end of the merge");
    let (mut begin, mut end) = (diag.saturating_sub(b.len()), diag.min(a.len()));
    while begin < end {
        let mid = begin + (end - begin) / 2;
        let (x, y) = (&a[mid], &b[diag - 1 - mid]);
        // a[mid] goes first unless y is strictly smaller (A first), or if it is strictly
        // smaller than y (B first).
        let a_first = match tie {
            Tie::AFirst => !is_less(y, x),
            Tie::BFirst => is_less(x, y),
        };
        if a_first {
            begin = mid + 1;
        } else {
            end = mid;
        }
    }
    begin
}

/// Where the Balanced Path of `a` and `b` crosses cross-diagonal `diag` (`balanced_path` in
/// `mergepath-build/kernels/mergepath/thread/search.cuh`, mirrored exactly): `(a_split, b_split)` with
/// `a_split + b_split` equal to `diag`, or `diag + 1` where `diag` would separate a pair. The
/// k-th key equal to x in `a` and the k-th equal to x in `b` are a pair, adjacent in the
/// balanced merge (a's first); at a split, every key before it on one side has its partner
/// (if any) before it on the other. The partitions of [`crate::sets`].
pub fn balanced_path<T>(a: &[T], b: &[T], diag: usize, is_less: impl Fn(&T, &T) -> bool) -> (usize, usize) {
    let ai = merge_path(a, b, diag, &is_less);
    let bi = diag - ai;
    let Some(x) = b.get(bi) else { return (ai, bi) };
    // The merge path took keys equal to x only if the last taken one of a or b equals x.
    let a_tail = ai > 0 && !is_less(&a[ai - 1], x);
    let b_tail = bi > 0 && !is_less(&b[bi - 1], x);
    if !a_tail && !b_tail {
        return (ai, bi);
    }
    let a_start = a[..ai].partition_point(|k| is_less(k, x));
    let b_start = b[..bi].partition_point(|k| is_less(k, x));
    let (a_run, b_run) = (ai - a_start, bi - b_start);
    let t = a_run + b_run;
    // a's keys equal to x (only "at least t" matters when b has taken none), b's capped at t.
    let i = if b_run > 0 { a_run } else { t };
    let j = b_run + b[bi..(b_start + t).min(b.len())].partition_point(|k| !is_less(x, k));
    let half = t.div_ceil(2);
    // Clamped as the kernels clamp it: inside the inputs even where unsorted ones make the run
    // counts meaningless.
    ((a_start + t.saturating_sub(j).max(i.min(half))).min(a.len()), (b_start + t.saturating_sub(i).max(j.min(half))).min(b.len()))
}

/// Kirk & Hwu's co-rank (`co_rank` in `mergepath-build/kernels/mergepath/thread/search.cuh`, mirrored exactly): the
/// same answer as [`merge_path`]`(a, b, k)` by the book's halving-step search, which the merge
/// ladder ([`crate::MergeStrategy`]) uses.
pub fn co_rank<T>(k: usize, a: &[T], b: &[T], is_less: impl Fn(&T, &T) -> bool) -> usize {
    assert!(k <= a.len() + b.len(), "output rank past the end of the merge");
    let (m, n) = (a.len(), b.len());
    let mut i = k.min(m);
    let mut j = k - i;
    let mut i_low = k.saturating_sub(n);
    let mut j_low = k.saturating_sub(m);
    loop {
        if i > 0 && j < n && is_less(&b[j], &a[i - 1]) {
            let delta = (i - i_low).div_ceil(2);
            j_low = j;
            j += delta;
            i -= delta;
        } else if j > 0 && i < m && !is_less(&b[j - 1], &a[i]) {
            let delta = (j - j_low).div_ceil(2);
            i_low = i;
            i += delta;
            j -= delta;
        } else {
            return i;
        }
    }
}

/// The partitions [`merge_path_partitions`](super::merge_path_partitions) computes, on the CPU.
pub fn merge_path_partitions_cpu<T>(a: &[T], b: &[T], spacing: usize, is_less: impl Fn(&T, &T) -> bool) -> Vec<usize> {
    assert!(spacing > 0, "spacing must be positive");
    let total = a.len() + b.len();
    (0..partition_count(total, spacing))
        .map(|p| merge_path(a, b, p.saturating_mul(spacing).min(total), &is_less))
        .collect()
}

//! Joins on CPU threads (re-exported from [`crate::host`]).

use super::{check_join, JoinKind, NO_ROW};
use crate::error::Result;
use crate::host::parallel::search_each;
use crate::key::{Comparator, Key};

/// A join on host slices: the pairs of rows of `a` and `b` (each sorted by `comp`) with equal
/// keys as two columns, as [`crate::join()`] writes them (same order, same unmatched rows, same
/// errors). Each row's range of equal rows comes from the host sorted search's walk (spans of
/// rows in parallel); the pairs are written in one pass.
pub fn join<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> Result<(Vec<i64>, Vec<i64>)> {
    check_join(a.len(), b.len())?;
    let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
    for (i, matches) in ranges(a, b, comp).enumerate() {
        if matches.is_empty() && kind.keeps_unmatched_a() {
            rows_a.push(i as i64);
            rows_b.push(NO_ROW);
        }
        rows_a.extend(std::iter::repeat_n(i as i64, matches.len()));
        rows_b.extend(matches.map(|j| j as i64));
    }
    if kind.keeps_unmatched_b() {
        for (j, _) in ranges(b, a, comp).enumerate().filter(|(_, m)| m.is_empty()) {
            rows_a.push(NO_ROW);
            rows_b.push(j as i64);
        }
    }
    Ok((rows_a, rows_b))
}

/// Each row's range of equal rows of `other` (on unsorted inputs some range within `other`).
fn ranges<K: Key, C: Comparator<K>>(rows: &[K], other: &[K], comp: C) -> impl Iterator<Item = std::ops::Range<usize>> {
    let mut bounds = vec![(0, 0); rows.len()];
    search_each(rows, other, &mut bounds, true, true, comp, |lower, upper| (lower, upper));
    bounds.into_iter().map(|(lower, upper)| lower..upper)
}

/// The number of pairs [`join`] outputs, without writing them, as [`crate::join_len`] counts
/// them (same errors).
pub fn join_len<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> Result<usize> {
    check_join(a.len(), b.len())?;
    let from_a: usize = ranges(a, b, comp).map(|m| if m.is_empty() && kind.keeps_unmatched_a() { 1 } else { m.len() }).sum();
    let from_b = if kind.keeps_unmatched_b() { ranges(b, a, comp).filter(|m| m.is_empty()).count() } else { 0 };
    Ok(from_a + from_b)
}

//! Joins on CPU threads (re-exported from [`crate::host`]).

use super::{check_join, JoinKind, NO_ROW};
use crate::error::Result;
use crate::host::sorted_search_range;
use crate::key::{Comparator, Key};

/// A join on host slices: the pairs of rows of `a` and `b` (each sorted by `comp`) with equal
/// keys as two columns, as [`crate::join`] writes them (same order, same unmatched rows, same
/// errors). Each row's range of equal rows comes from the threaded [`sorted_search_range`];
/// the pairs are written in one pass.
pub fn join<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> Result<(Vec<i64>, Vec<i64>)> {
    check_join(a.len(), b.len())?;
    let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
    for (i, matches) in ranges(a, b, comp)?.enumerate() {
        if matches.is_empty() && kind.keeps_unmatched_a() {
            rows_a.push(i as i64);
            rows_b.push(NO_ROW);
        }
        rows_a.extend(std::iter::repeat_n(i as i64, matches.len()));
        rows_b.extend(matches.map(|j| j as i64));
    }
    if kind.keeps_unmatched_b() {
        for (j, _) in ranges(b, a, comp)?.enumerate().filter(|(_, m)| m.is_empty()) {
            rows_a.push(NO_ROW);
            rows_b.push(j as i64);
        }
    }
    Ok((rows_a, rows_b))
}

/// Each row's range of equal rows of `other` (empty where the bounds are not a range: unsorted
/// inputs).
fn ranges<K: Key, C: Comparator<K>>(rows: &[K], other: &[K], comp: C) -> Result<impl Iterator<Item = std::ops::Range<usize>>> {
    let (mut lower, mut upper) = (vec![0u64; rows.len()], vec![0u64; rows.len()]);
    sorted_search_range(rows, other, &mut lower, &mut upper, comp)?;
    Ok(lower.into_iter().zip(upper).map(|(lo, hi)| lo as usize..(hi as usize).max(lo as usize)))
}

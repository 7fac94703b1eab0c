//! The sequential oracle of joins (re-exported from [`crate::cpu`]).

use super::{JoinKind, NO_ROW};
use crate::key::{Comparator, Key};

/// The pairs of rows of `a` and `b` (each sorted by `comp`) with equal keys, in `a`'s order
/// and then `b`'s, plus the unmatched rows `kind` keeps, as two columns ([`NO_ROW`] for no
/// row): the oracle of [`crate::join()`], by walking both columns in step.
pub fn join<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> (Vec<i64>, Vec<i64>) {
    let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
    for (i, matches) in equal_runs(a, b, comp).into_iter().enumerate() {
        if matches.is_empty() && kind.keeps_unmatched_a() {
            rows_a.push(i as i64);
            rows_b.push(NO_ROW);
        }
        for j in matches {
            rows_a.push(i as i64);
            rows_b.push(j as i64);
        }
    }
    if kind.keeps_unmatched_b() {
        for (j, _) in equal_runs(b, a, comp).into_iter().enumerate().filter(|(_, m)| m.is_empty()) {
            rows_a.push(NO_ROW);
            rows_b.push(j as i64);
        }
    }
    (rows_a, rows_b)
}

/// Each row's run of equal rows of `other`, both sorted: one walk of `other` beside `rows`.
fn equal_runs<K: Key, C: Comparator<K>>(rows: &[K], other: &[K], comp: C) -> Vec<std::ops::Range<usize>> {
    let mut start = 0;
    rows.iter()
        .map(|row| {
            while start < other.len() && comp.is_less(&other[start], row) {
                start += 1;
            }
            let end = start + other[start..].iter().take_while(|y| !comp.is_less(row, y)).count();
            start..end
        })
        .collect()
}

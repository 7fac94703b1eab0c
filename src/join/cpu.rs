//! The sequential oracle of joins (re-exported from [`crate::cpu`]).

use super::{JoinKind, NO_ROW};
use crate::key::{Comparator, Key};

/// The pairs of rows of `a` and `b` (each sorted by `comp`) with equal keys, in `a`'s order
/// and then `b`'s, plus the unmatched rows `kind` keeps, as two columns ([`NO_ROW`] for no
/// row): the oracle of [`crate::join`], by two binary searches per row.
pub fn join<K: Key, C: Comparator<K>>(a: &[K], b: &[K], kind: JoinKind, comp: C) -> (Vec<i64>, Vec<i64>) {
    let equal_rows = |x: &K, rows: &[K]| rows.partition_point(|y| comp.is_less(y, x))..rows.partition_point(|y| !comp.is_less(x, y));
    let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
    for (i, x) in a.iter().enumerate() {
        let matches = equal_rows(x, b);
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
        for (j, _) in b.iter().enumerate().filter(|(_, y)| equal_rows(y, a).is_empty()) {
            rows_a.push(NO_ROW);
            rows_b.push(j as i64);
        }
    }
    (rows_a, rows_b)
}

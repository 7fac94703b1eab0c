//! Bulk insert and remove on CPU threads (re-exported from [`crate::host`]).

use super::{check_index_room, check_insert, check_positions};
use crate::checks::check_output;
use crate::error::Result;
use crate::types::SortIndex;
use crate::key::Value;

/// Bulk insert on host slices: `out` holds `array` with `values[j]` before
/// `array[positions[j]]`, as [`crate::bulk_insert`]; the rest of `out` is left as it is.
/// Positions that are not sorted or past `array.len()` are [`crate::Error::InvalidArgument`].
/// The array's items between two positions move as one copy.
pub fn bulk_insert<I: SortIndex, V: Value>(array: &[V], positions: &[I], values: &[V], out: &mut [V]) -> Result<()> {
    let total = check_insert::<I>(array.len(), positions.len(), values.len(), out.len())?;
    check_positions(positions, array.len(), true)?;
    let (mut from, mut at) = (0, 0);
    for (&p, &value) in positions.iter().zip(values) {
        let p = p.value() as usize;
        out[at..at + p - from].copy_from_slice(&array[from..p]);
        at += p - from;
        out[at] = value;
        (from, at) = (p, at + 1);
    }
    out[at..total].copy_from_slice(&array[from..]);
    Ok(())
}

/// Bulk remove on host slices: `out` holds the items of `array` not at `positions`, in order,
/// and the call returns their count, as [`crate::bulk_remove`]; the rest of `out` is left as
/// it is. Positions that are not sorted or not below `array.len()` are
/// [`crate::Error::InvalidArgument`]; an `out` too short for the kept items is
/// [`crate::Error::OutputTooSmall`], nothing written.
pub fn bulk_remove<I: SortIndex, V: Value>(array: &[V], positions: &[I], out: &mut [V]) -> Result<usize> {
    check_index_room::<I>(array.len())?;
    check_positions(positions, array.len(), false)?;
    let mut distinct = positions.to_vec();
    distinct.dedup_by_key(|p| p.value());
    let kept = array.len() - distinct.len();
    check_output("out", out.len(), kept)?;
    let (mut from, mut at) = (0, 0);
    for p in distinct.iter().map(|p| p.value() as usize).chain([array.len()]) {
        out[at..at + p - from].copy_from_slice(&array[from..p]);
        (from, at) = (p + 1, at + p - from);
    }
    Ok(kept)
}

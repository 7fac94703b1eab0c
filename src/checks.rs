//! The argument checks every front end (device buffers, host slices, the host backend) makes
//! alike, so each returns the same `Err` for the same bad input.

use crate::error::{Error, Result};

/// `OutputTooSmall` unless `out` holds `needed` items.
pub(crate) fn check_output(what: &'static str, len: usize, needed: usize) -> Result<()> {
    if len < needed {
        return Err(Error::OutputTooSmall { what, needed, got: len });
    }
    Ok(())
}

/// `LengthMismatch` unless the values (`what`) have their keys' length.
pub(crate) fn check_values(what: &'static str, keys: usize, values: usize) -> Result<()> {
    if values != keys {
        return Err(Error::LengthMismatch { what, expected: keys, got: values });
    }
    Ok(())
}

/// The checks of a merge of pairs: each value slice its keys' length, both outputs holding the
/// merge. Returns the merge's length.
pub(crate) fn check_merge_pairs(a: (usize, usize), b: (usize, usize), out_keys: usize, out_values: usize) -> Result<usize> {
    check_pair_inputs(a, b)?;
    let total = a.0 + b.0;
    check_output("out_keys", out_keys, total)?;
    check_output("out_values", out_values, total)?;
    Ok(total)
}

/// The checks of a two-input operation on pairs (a set operation, a merge): each value slice
/// (`a_values`, `b_values`) its keys' length; `a` and `b` are (keys, values) lengths.
pub(crate) fn check_pair_inputs(a: (usize, usize), b: (usize, usize)) -> Result<()> {
    check_values("a_values", a.0, a.1)?;
    check_values("b_values", b.0, b.1)
}

/// The checks of a sort that writes `indices` of `max_count` range (`SortIndex::MAX_COUNT`):
/// one per key, and no more keys than the index type counts.
pub(crate) fn check_indices(keys: usize, indices: usize, max_count: usize) -> Result<()> {
    check_values("indices", keys, indices)?;
    if keys > max_count {
        return Err(Error::TooLarge { what: "u32 indices (more than 2^32 keys)" });
    }
    Ok(())
}

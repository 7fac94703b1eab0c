//! The argument checks every front end (device buffers, host slices, the host backend) makes
//! alike, so each returns the same `Err` for the same bad input.

use crate::error::{Error, Result};
use crate::types::SortIndex;

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

/// The checks of a multiway merge of pairs: as many value inputs as key inputs, each its keys'
/// length, and both outputs the total's length (returned); `keys` and `values` are the inputs'
/// lengths.
pub(crate) fn check_multiway_pairs(keys: &[usize], values: &[usize], out_keys: usize, out_values: usize) -> Result<usize> {
    check_values("values (inputs)", keys.len(), values.len())?;
    for (&k, &v) in keys.iter().zip(values) {
        check_values("values", k, v)?;
    }
    let total = keys.iter().sum();
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

/// A load-balancing search of `count` items over `segments` segments (the starts' length) with
/// indices that hold `max_count` positions, writing `outputs` (name, length): each output must
/// hold the items (`OutputTooSmall`), the indices must hold the items and segments
/// (`TooLarge`), and items need a segment (`InvalidArgument` for items with no starts).
pub(crate) fn check_load_balancing(count: usize, segments: usize, max_count: usize, outputs: &[(&'static str, usize)]) -> Result<()> {
    for &(what, len) in outputs {
        check_output(what, len, count)?;
    }
    if count > max_count || segments > max_count {
        return Err(Error::TooLarge { what: "load-balancing search: u32 indices hold at most 2^32 items and segments" });
    }
    if count > 0 && segments == 0 {
        return Err(Error::invalid("starts", "the items need a segment: starts is empty"));
    }
    Ok(())
}

/// Host starts of a load-balancing search of `count` items: non-decreasing from 0 and at most
/// `count` (`InvalidArgument` otherwise; device starts are not checked, which would wait for
/// the GPU).
pub(crate) fn check_starts<I: SortIndex>(starts: &[I], count: usize) -> Result<()> {
    let value = |i: I| i.value();
    let bad = |reason: String| Err(Error::invalid("starts", reason));
    match starts.first().map(|&s| value(s)) {
        Some(first) if first != 0 => return bad(format!("the first segment starts at {first}, not 0")),
        _ => {}
    }
    if let Some(i) = starts.windows(2).position(|w| value(w[1]) < value(w[0])) {
        return bad(format!("starts decrease at {}", i + 1));
    }
    match starts.last().map(|&s| value(s)) {
        Some(last) if last > count as u64 => bad(format!("a segment starts at {last}, past the {count} items")),
        _ => Ok(()),
    }
}

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

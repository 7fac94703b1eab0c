//! The property of joins (re-exported from [`crate::testing`]): each front end against the
//! sequential oracle ([`crate::cpu::join`]), pair for pair.

use super::JoinKind;
use crate::cpu;
use crate::key::Comparator;
use crate::testing::properties::{on_gpu, op_error, Backend, PropertyResult};
use crate::testing::keys::TestKey;
use proptest::test_runner::TestCaseError;

/// [`crate::join()`] of `a` and `b` (each sorted by `comp`) of every [`JoinKind`] (on the GPU
/// the device call and the host-slice method, or the host backend's) equals the sequential
/// join: the same pairs in the same order; [`crate::join_len`] (each front end's) counts them.
pub fn join<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, a: &[K], b: &[K], comp: C) -> PropertyResult {
    for kind in JoinKind::ALL {
        let want = cpu::join(a, b, kind, comp);
        let name = format!("join {kind:?}");
        let (got, lens) = match backend {
            Backend::Host => {
                let err = |e| op_error(&name, backend, e);
                (vec![crate::host::join(a, b, kind, comp).map_err(err)?], vec![crate::host::join_len(a, b, kind, comp).map_err(err)?])
            }
            Backend::Gpu(gpu) => on_gpu(&name, backend, || {
                let (da, db) = (gpu.upload(a)?, gpu.upload(b)?);
                let device = crate::join(gpu, &da, &db, kind, comp)?.download(gpu)?;
                let lens = vec![crate::join_len(gpu, &da, &db, kind, comp)?, gpu.join_len(a, b, kind, comp)?];
                Ok((vec![device, gpu.join(a, b, kind, comp)?], lens))
            })?,
        };
        if let Some(len) = lens.iter().find(|&&len| len != want.0.len()) {
            return Err(TestCaseError::fail(format!("{name}_len of {} and {} rows on {}: {len}, {} expected", a.len(), b.len(), backend.name(), want.0.len())));
        }
        for (variant, pairs) in got.iter().enumerate() {
            if *pairs != want {
                let first = (0..want.0.len().max(pairs.0.len())).find(|&k| want.0.get(k) != pairs.0.get(k) || want.1.get(k) != pairs.1.get(k));
                return Err(TestCaseError::fail(format!(
                    "{name} of {} and {} rows on {} (variant {variant}): {} pairs, {} expected; first difference at {first:?}",
                    a.len(),
                    b.len(),
                    backend.name(),
                    pairs.0.len(),
                    want.0.len()
                )));
            }
        }
    }
    Ok(())
}

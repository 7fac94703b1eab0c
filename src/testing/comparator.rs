//! [`check_comparator`]: a comparator is a strict weak order, and its CUDA functor answers as its
//! Rust twin.

use super::keys::TestKey;
use super::properties::{Backend, PropertyResult};
use crate::device::contract::CompareAllParams;
use crate::device::Gpu;
use crate::gather::copy_device;
use crate::key::{Comparator, RecordOrder};
use crate::sort::order_keys::with_order_keys;
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// The most keys [`check_comparator`] takes (it compares every ordered pair and triple).
pub const MAX_COMPARATOR_KEYS: usize = 64;

/// Keys for [`check_comparator`]: 1 to 24 keys, often with equal ones.
pub fn comparator_keys<K: TestKey>() -> BoxedStrategy<Vec<K>> {
    let key = K::key_strategy();
    prop_oneof![
        proptest::collection::vec(key.clone(), 1..=24),
        // Copies of a few keys: equal and incomparable pairs.
        (proptest::collection::vec(key, 1..=4), proptest::collection::vec(any::<proptest::sample::Index>(), 1..=24))
            .prop_map(|(pool, picks)| picks.iter().map(|i| pool[i.index(pool.len())]).collect()),
    ]
    .boxed()
}

/// Checks that `comp` is a strict weak order on `keys` (at most [`MAX_COMPARATOR_KEYS`]), as
/// every algorithm of the crate needs: irreflexive (not `a < a`), asymmetric (not both `a < b`
/// and `b < a`), transitive (`a < b < c` gives `a < c`), and incomparability transitive (`a ~ b`
/// and `b ~ c` give `a ~ c`, where `x ~ y` is neither `x < y` nor `y < x`). On
/// [`Backend::Gpu`] it also runs the comparator's CUDA functor on every ordered pair of `keys`
/// and checks that it answers as [`Comparator::is_less`] (a derived comparator's two twins);
/// for records (derived keys over 16 bytes), which the kernels order by `u64` keys, it checks
/// the order keys the device computes for them instead (their packed order, or their ranks;
/// under a custom comparator found by its CUDA functor).
/// Fails with the keys that break the rule.
pub fn check_comparator<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, keys: &[K], comp: C) -> PropertyResult {
    if keys.len() > MAX_COMPARATOR_KEYS {
        return Err(TestCaseError::reject(format!("check_comparator takes at most {MAX_COMPARATOR_KEYS} keys")));
    }
    let n = keys.len();
    let less: Vec<bool> = (0..n * n).map(|t| comp.is_less(&keys[t / n], &keys[t % n])).collect();
    let lt = |i: usize, j: usize| less[i * n + j];
    let name = C::NAME;
    for i in 0..n {
        if lt(i, i) {
            return Err(TestCaseError::fail(format!("comparator {name} is not irreflexive: {:?} < itself", keys[i])));
        }
        for j in 0..n {
            if lt(i, j) && lt(j, i) {
                return Err(TestCaseError::fail(format!("comparator {name} is not asymmetric: {:?} < {:?} and {:?} < {:?}", keys[i], keys[j], keys[j], keys[i])));
            }
        }
    }
    let equiv = |i: usize, j: usize| !lt(i, j) && !lt(j, i);
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                if lt(i, j) && lt(j, k) && !lt(i, k) {
                    return Err(TestCaseError::fail(format!(
                        "comparator {name} is not transitive: {:?} < {:?} < {:?} but not {:?} < {:?}",
                        keys[i], keys[j], keys[k], keys[i], keys[k]
                    )));
                }
                if equiv(i, j) && equiv(j, k) && !equiv(i, k) {
                    return Err(TestCaseError::fail(format!(
                        "comparator {name}: incomparability is not transitive: {:?} ~ {:?} ~ {:?} but {:?} and {:?} are ordered",
                        keys[i], keys[j], keys[k], keys[i], keys[k]
                    )));
                }
            }
        }
    }
    if let Backend::Gpu(gpu) = backend {
        let device = compare_all::<K, C>(gpu, keys).map_err(|e| TestCaseError::fail(format!("comparator {name} on the GPU: {e}")))?;
        if let Some(t) = (0..n * n).find(|&t| (device[t] != 0) != less[t]) {
            let (a, b) = (&keys[t / n], &keys[t % n]);
            return Err(TestCaseError::fail(format!(
                "comparator {name}: the CUDA functor ({}) says {a:?} < {b:?} is {}, the Rust twin says {}",
                C::CUDA_FUNCTOR,
                device[t] != 0,
                less[t]
            )));
        }
    }
    Ok(())
}

/// `comp`'s CUDA functor on every ordered pair of `keys`, row-major (`out[i * n + j]`: does
/// `keys[i]` go before `keys[j]`), by the `mergepath_compare_all` kernel.
fn compare_all<K: TestKey, C: Comparator<K>>(gpu: &Gpu, keys: &[K]) -> crate::Result<Vec<u8>> {
    let n = keys.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    if let Some(order) = &C::RECORD {
        return record_compare_all(gpu, order, keys);
    }
    let kernels = gpu.kernels::<K, C>()?;
    let func = kernels.compare_all()?;
    let dkeys = gpu.upload(keys)?;
    let mut out = gpu.alloc_zeros::<u8>(n * n)?;
    let keys_buf = gpu.input("keys", &dkeys, K::DEVICE_ALIGN)?;
    let out_ptr = gpu.output("out", &mut out, 1, n * n, &[&keys_buf])?.ptr;
    let params = CompareAllParams { keys: keys_buf.ptr, count: n as i64, out: out_ptr };
    let pairs = (n * n) as u32; // at most MAX_COMPARATOR_KEYS^2
    let cfg = LaunchConfig { grid_dim: (pairs.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: `CompareAllParams` is `mergepath_compare_all`'s parameter struct; `keys` holds n
    // keys and `out` n * n bytes (checked above), and the kernel's grid-stride loop stays
    // below n * n.
    unsafe { gpu.launch(&func, cfg, &params) }?;
    gpu.download(&out)
}

/// [`compare_all`] of records, which have no functor of their own in the kernels: each
/// record's `u64` order key as the device computes it (its packed word, or its rank: under a
/// custom comparator found by the comparator's kernels), compared for every ordered pair.
fn record_compare_all<K: TestKey>(gpu: &Gpu, order: &RecordOrder, keys: &[K]) -> crate::Result<Vec<u8>> {
    let n = keys.len();
    let records = gpu.upload(keys)?;
    let mut order_keys = gpu.alloc_zeros::<u64>(n)?;
    let descending = {
        let (from, _read) = records.device_ptr(gpu.stream());
        let (to, _write) = order_keys.device_ptr_mut(gpu.stream());
        with_order_keys::<K, _>(gpu, order, &[(from, n)], |keys, descending| copy_device(gpu, to, keys, n * 8).map(|()| descending))?
    };
    let order_keys = gpu.download(&order_keys)?;
    let before = |a: u64, b: u64| if descending { b < a } else { a < b };
    Ok((0..n * n).map(|t| before(order_keys[t / n], order_keys[t % n]) as u8).collect())
}

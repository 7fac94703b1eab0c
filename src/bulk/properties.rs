//! The properties of bulk insert and bulk remove (re-exported from [`crate::testing`]): each
//! front end against the sequential oracle ([`crate::cpu::bulk_insert`],
//! [`crate::cpu::bulk_remove`]), bit for bit.

use crate::cpu;
use crate::testing::properties::{assert_same_bits, item12, item8, on_gpu, op_error, upload_padded, Backend, PropertyResult};
use std::fmt::Debug;

/// [`crate::bulk_insert`] (on the GPU with `u32` and `u64` positions and the host-slice
/// method, or the host backend's) of a value at each of `positions` (sorted, each at most `n`)
/// into an array of `n` items equals the sequential insert, for 12-byte values (carried by
/// position) and 8-byte ones (as words).
pub fn bulk_insert(backend: Backend<'_>, n: usize, positions: &[usize]) -> PropertyResult {
    bulk_insert_of(backend, n, positions, item12)?;
    bulk_insert_of(backend, n, positions, item8)
}

fn bulk_insert_of<V: bytemuck::Pod + Debug + cudarc::driver::DeviceRepr + Send + Sync>(backend: Backend<'_>, n: usize, positions: &[usize], item: impl Fn(usize) -> V) -> PropertyResult {
    let array: Vec<V> = (0..n).map(&item).collect();
    let values: Vec<V> = (n..n + positions.len()).map(&item).collect();
    let want = cpu::bulk_insert(&array, positions, &values);
    let (p32, p64): (Vec<u32>, Vec<u64>) = (positions.iter().map(|&p| p as u32).collect(), positions.iter().map(|&p| p as u64).collect());
    let total = want.len();
    let got: Vec<Vec<V>> = match backend {
        Backend::Host => {
            let mut out = vec![V::zeroed(); total];
            crate::host::bulk_insert(&array, &p64, &values, &mut out).map_err(|e| op_error("bulk_insert", backend, e))?;
            vec![out]
        }
        Backend::Gpu(gpu) => on_gpu("bulk_insert", backend, || {
            let (a, v) = (upload_padded(gpu, &array)?, upload_padded(gpu, &values)?);
            let (d32, d64) = (upload_padded(gpu, &p32)?, upload_padded(gpu, &p64)?);
            let mut out = upload_padded(gpu, &vec![V::zeroed(); total])?;
            crate::bulk_insert(gpu, &a.slice(..n), &d32.slice(..p32.len()), &v.slice(..values.len()), &mut out)?;
            let by_u32 = gpu.download(&out)?[..total].to_vec();
            crate::bulk_insert(gpu, &a.slice(..n), &d64.slice(..p64.len()), &v.slice(..values.len()), &mut out)?;
            let by_u64 = gpu.download(&out)?[..total].to_vec();
            let mut host_slices = vec![V::zeroed(); total];
            gpu.bulk_insert(&array, &p64, &values, &mut host_slices)?;
            Ok(vec![by_u32, by_u64, host_slices])
        })?,
    };
    for (variant, out) in got.iter().enumerate() {
        assert_same_bits(&format!("bulk_insert of {}-byte values on {} (variant {variant})", std::mem::size_of::<V>(), backend.name()), out, &want)?;
    }
    Ok(())
}

/// [`crate::bulk_remove`] (on the GPU with `u32` and `u64` positions and the host-slice
/// method, or the host backend's) of the items at `positions` (sorted, each below `n`,
/// repeats allowed) from an array of `n` items equals the sequential remove, for 12-byte
/// values and 8-byte ones.
pub fn bulk_remove(backend: Backend<'_>, n: usize, positions: &[usize]) -> PropertyResult {
    bulk_remove_of(backend, n, positions, item12)?;
    bulk_remove_of(backend, n, positions, item8)
}

fn bulk_remove_of<V: bytemuck::Pod + Debug + cudarc::driver::DeviceRepr + Send + Sync>(backend: Backend<'_>, n: usize, positions: &[usize], item: impl Fn(usize) -> V) -> PropertyResult {
    let array: Vec<V> = (0..n).map(&item).collect();
    let want = cpu::bulk_remove(&array, positions);
    let (p32, p64): (Vec<u32>, Vec<u64>) = (positions.iter().map(|&p| p as u32).collect(), positions.iter().map(|&p| p as u64).collect());
    let kept = |out: Vec<V>, count: usize| out[..count.min(out.len())].to_vec();
    let got: Vec<Vec<V>> = match backend {
        Backend::Host => {
            let mut out = vec![V::zeroed(); n];
            let count = crate::host::bulk_remove(&array, &p64, &mut out).map_err(|e| op_error("bulk_remove", backend, e))?;
            vec![kept(out, count)]
        }
        Backend::Gpu(gpu) => on_gpu("bulk_remove", backend, || {
            let a = upload_padded(gpu, &array)?;
            let (d32, d64) = (upload_padded(gpu, &p32)?, upload_padded(gpu, &p64)?);
            let mut out = upload_padded(gpu, &vec![V::zeroed(); n])?;
            let count = crate::bulk_remove(gpu, &a.slice(..n), &d32.slice(..p32.len()), &mut out)?;
            let by_u32 = kept(gpu.download(&out)?, count);
            let count = crate::bulk_remove(gpu, &a.slice(..n), &d64.slice(..p64.len()), &mut out)?;
            let by_u64 = kept(gpu.download(&out)?, count);
            let mut host_slices = vec![V::zeroed(); n];
            let count = gpu.bulk_remove(&array, &p64, &mut host_slices)?;
            Ok(vec![by_u32, by_u64, kept(host_slices, count)])
        })?,
    };
    for (variant, out) in got.iter().enumerate() {
        assert_same_bits(&format!("bulk_remove of {}-byte values on {} (variant {variant})", std::mem::size_of::<V>(), backend.name()), out, &want)?;
    }
    Ok(())
}

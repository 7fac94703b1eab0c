//! Values of any size in host-slice calls: where a value is not a word the kernels move, the
//! GPU sorts or merges the keys with their positions (`u32`, `u64` past 2^32 items), and host
//! threads gather the values by those positions once the keys are in place.

use crate::error::{Error, Result};
use crate::threads::{run, threads};

/// An empty host vector with room for `len` items, or [`Error::HostOutOfMemory`].
pub(super) fn try_with_capacity<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::HostOutOfMemory { bytes: len.saturating_mul(std::mem::size_of::<T>()) })?;
    Ok(v)
}

/// A host vector of `len` items from `item(i)`, or [`Error::HostOutOfMemory`].
pub(super) fn try_collect<T>(len: usize, item: impl Fn(usize) -> T) -> Result<Vec<T>> {
    let mut v = try_with_capacity(len)?;
    v.extend((0..len).map(item));
    Ok(v)
}

/// The positions `0..total` as `P` (the caller picks a `P` that holds them) and a zeroed
/// buffer as long for the order a sort or merge leaves them in, or [`Error::HostOutOfMemory`].
pub(super) fn counting_and_order<P: bytemuck::Zeroable + TryFrom<usize>>(total: usize) -> Result<(Vec<P>, Vec<P>)> {
    let counting = try_collect(total, |i| P::try_from(i).unwrap_or_else(|_| P::zeroed()))?;
    Ok((counting, try_collect(total, |_| P::zeroed())?))
}

/// A host copy of `values`, or [`Error::HostOutOfMemory`].
pub(super) fn try_copy<V: Copy>(values: &[V]) -> Result<Vec<V>> {
    let mut v = try_with_capacity(values.len())?;
    v.extend_from_slice(values);
    Ok(v)
}

/// `f(&mut out[i], &inputs[i])` for every i, on host threads.
pub(super) fn par_zip<T: Send, S: Sync>(out: &mut [T], inputs: &[S], f: impl Fn(&mut T, &S) + Sync) {
    const GRAIN: usize = 1 << 16;
    let workers = threads();
    let chunk = out.len().div_ceil(workers).max(GRAIN);
    let tasks: Vec<_> = out.chunks_mut(chunk).zip(inputs.chunks(chunk)).collect();
    run(workers, tasks, |(out, inputs)| out.iter_mut().zip(inputs).for_each(|(o, i)| f(o, i)));
}

/// `out[i]` = item `positions[i]` of `a`, or item `positions[i] - a.len()` of `b`, on host
/// threads. Every position is below `a.len() + b.len()` (they come from the GPU's sort or merge
/// of `0..a.len() + b.len()`).
pub(super) fn gather<V: Copy + Send + Sync, P: Copy + Into<u64> + Sync>(a: &[V], b: &[V], positions: &[P], out: &mut [V]) {
    par_zip(out, positions, |o, &p| {
        let p = p.into() as usize;
        *o = if p < a.len() { a[p] } else { b[p - a.len()] };
    });
}

/// [`gather`] of items of `word` bytes (4, 8 or 16: the words the kernels move) held as bytes,
/// by positions of `position_word` bytes (4 or 8) held as bytes.
pub(super) fn gather_words(src: &[u8], positions: &[u8], position_word: usize, out: &mut [u8], word: usize) {
    fn by<P: bytemuck::Pod + Into<u64> + Sync>(src: &[u8], positions: &[P], out: &mut [u8], word: usize) {
        match word {
            4 => gather::<[u8; 4], P>(bytemuck::cast_slice(src), &[], positions, bytemuck::cast_slice_mut(out)),
            8 => gather::<[u8; 8], P>(bytemuck::cast_slice(src), &[], positions, bytemuck::cast_slice_mut(out)),
            _ => gather::<[u8; 16], P>(bytemuck::cast_slice(src), &[], positions, bytemuck::cast_slice_mut(out)),
        }
    }
    // The positions were typed `u32`/`u64` slices (aligned), or this module's own vectors.
    match position_word {
        4 => by::<u32>(src, bytemuck::cast_slice(positions), out, word),
        _ => by::<u64>(src, bytemuck::cast_slice(positions), out, word),
    }
}

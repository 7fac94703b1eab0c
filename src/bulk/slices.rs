//! Bulk insert and remove as [`Gpu`] methods on host slices: the inputs uploaded, the device
//! call's launches, the result downloaded.

use super::{check_index_room, check_insert, check_positions, launch_insert, launch_remove};
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Value;
use crate::types::SortIndex;

impl Gpu {
    /// Bulk insert on the GPU (host slices): `out` holds `array` with `values[j]` before
    /// `array[positions[j]]`, as [`crate::bulk_insert`], the positions checked as
    /// [`crate::host::bulk_insert`] checks them. The inputs and the result must fit the device
    /// together.
    pub fn bulk_insert<I: SortIndex, V: Value>(&self, array: &[V], positions: &[I], values: &[V], out: &mut [V]) -> Result<()> {
        let total = check_insert::<I>(array.len(), positions.len(), values.len(), out.len())?;
        check_positions(positions, array.len(), true)?;
        if total == 0 {
            return Ok(());
        }
        let (array_d, positions_d, values_d) = (self.upload_bytes(array)?, self.upload_bytes(positions)?, self.upload_bytes(values)?);
        let mut out_d = self.alloc_zeros::<u8>(std::mem::size_of_val(&out[..total]))?;
        {
            // Fresh allocations: aligned for any word, and apart from each other.
            let (a, p, v) = (self.input("array", &array_d, 1)?, self.input("positions", &positions_d, 1)?, self.input("values", &values_d, 1)?);
            let o = self.output("out", &mut out_d, 1, 0, &[&a, &p, &v])?;
            let (value, index) = (size_of::<V>(), size_of::<I>());
            launch_insert::<I, V>(self, &CheckedBuffer::raw(a.ptr, array.len(), value), &CheckedBuffer::raw(p.ptr, positions.len(), index), &CheckedBuffer::raw(v.ptr, values.len(), value), &CheckedBuffer::raw(o.ptr, total, value))?;
        }
        self.download_into(&out_d, bytemuck::cast_slice_mut(&mut out[..total]))
    }

    /// Bulk remove on the GPU (host slices): `out` holds the items of `array` not at
    /// `positions`, in order, and the call returns their count, as [`crate::bulk_remove`], the
    /// positions checked as [`crate::host::bulk_remove`] checks them (an `out` too short for
    /// the kept items is [`crate::Error::OutputTooSmall`], nothing written).
    pub fn bulk_remove<I: SortIndex, V: Value>(&self, array: &[V], positions: &[I], out: &mut [V]) -> Result<usize> {
        check_index_room::<I>(array.len())?;
        check_positions(positions, array.len(), false)?;
        if array.is_empty() {
            return Ok(0);
        }
        let (array_d, positions_d) = (self.upload_bytes(array)?, self.upload_bytes(positions)?);
        let mut out_d = self.alloc_zeros::<u8>(std::mem::size_of_val(array))?;
        let kept = {
            let (a, p) = (self.input("array", &array_d, 1)?, self.input("positions", &positions_d, 1)?);
            let o = self.output("out", &mut out_d, 1, 0, &[&a, &p])?;
            let (value, index) = (size_of::<V>(), size_of::<I>());
            launch_remove::<I, V>(self, &CheckedBuffer::raw(a.ptr, array.len(), value), &CheckedBuffer::raw(p.ptr, positions.len(), index), &CheckedBuffer::raw(o.ptr, array.len(), value))?
        };
        crate::checks::check_output("out", out.len(), kept)?;
        self.download_into(&out_d.slice(..kept * size_of::<V>()), bytemuck::cast_slice_mut(&mut out[..kept]))?;
        Ok(kept)
    }
}

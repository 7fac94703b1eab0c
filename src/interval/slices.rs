//! Interval moves as [`Gpu`] methods on host slices: the arrays uploaded, the device move, the
//! output downloaded.

use super::{launch_interval_move, HostIntervals};
use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Value;
use crate::types::SortIndex;

impl Gpu {
    /// Interval gather on the GPU (host slices): `out[starts[s] + r] = input[sources[s] + r]`,
    /// as [`crate::interval_gather`], checked as [`crate::host::interval_gather`]. The arrays
    /// must fit the device together.
    pub fn interval_gather<I: SortIndex, V: Value>(&self, count: usize, starts: &[I], sources: &[I], input: &[V], out: &mut [V]) -> Result<()> {
        self.move_intervals(HostIntervals { count, starts, sources: Some(sources), destinations: None }, input, out)
    }

    /// Interval scatter on the GPU (host slices): `out[destinations[s] + r] = input[starts[s] +
    /// r]`, as [`crate::interval_scatter`], checked as [`crate::host::interval_scatter`]. `out`
    /// goes to the device and back, its other items as they were.
    pub fn interval_scatter<I: SortIndex, V: Value>(&self, count: usize, starts: &[I], destinations: &[I], input: &[V], out: &mut [V]) -> Result<()> {
        self.move_intervals(HostIntervals { count, starts, sources: None, destinations: Some(destinations) }, input, out)
    }

    /// Interval move on the GPU (host slices): `out[destinations[s] + r] = input[sources[s] +
    /// r]`, as [`crate::interval_move`], checked as [`crate::host::interval_move`]; `out` as
    /// [`Gpu::interval_scatter`]'s.
    pub fn interval_move<I: SortIndex, V: Value>(&self, count: usize, starts: &[I], sources: &[I], destinations: &[I], input: &[V], out: &mut [V]) -> Result<()> {
        self.move_intervals(HostIntervals { count, starts, sources: Some(sources), destinations: Some(destinations) }, input, out)
    }

    fn move_intervals<I: SortIndex, V: Value>(&self, m: HostIntervals<'_, I>, input: &[V], out: &mut [V]) -> Result<()> {
        m.check(input.len(), out.len())?;
        if m.count == 0 || size_of::<V>() == 0 {
            return Ok(());
        }
        let written = m.written(out.len());
        let out = &mut out[..written];
        let (starts_d, input_d) = (self.upload_bytes(m.starts)?, self.upload_bytes(input)?);
        let sources_d = m.sources.map(|f| self.upload_bytes(f)).transpose()?;
        let destinations_d = m.destinations.map(|d| self.upload_bytes(d)).transpose()?;
        let mut out_d = match m.destinations {
            Some(_) => self.upload_bytes(out)?,
            None => self.alloc_zeros::<u8>(size_of_val(out))?,
        };
        {
            // Fresh allocations: aligned for any word, and apart from each other.
            let starts_in = self.input("starts", &starts_d, 1)?;
            let sources_in = sources_d.as_ref().map(|d| self.input("sources", d, 1)).transpose()?;
            let destinations_in = destinations_d.as_ref().map(|d| self.input("destinations", d, 1)).transpose()?;
            let input_in = self.input("input", &input_d, 1)?;
            let out_in = self.output("out", &mut out_d, 1, 0, &[&input_in])?;
            let indices = |b: &CheckedBuffer<'_>| CheckedBuffer::raw(b.ptr, m.starts.len(), size_of::<I>());
            let (sources_in, destinations_in) = (sources_in.as_ref().map(indices), destinations_in.as_ref().map(indices));
            let values = |b: &CheckedBuffer<'_>, len| CheckedBuffer::raw(b.ptr, len, size_of::<V>());
            launch_interval_move::<I, V>(self, m.count, &indices(&starts_in), sources_in.as_ref(), destinations_in.as_ref(), &values(&input_in, input.len()), &values(&out_in, out.len()))?;
        }
        self.download_into(&out_d.slice(..size_of_val(out)), bytemuck::cast_slice_mut::<V, u8>(out))
    }
}

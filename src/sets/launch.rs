//! The launches of a multiset operation: the Balanced Path partitions and the set kernel.

use super::plan::SetGrid;
use crate::device::buffers::CheckedBuffer;
use crate::device::kernels::Kernels;
use crate::device::contract::{SetCountParams, SetKeysParams, SetPairsParams, SetPartitionsParams};
use crate::device::Gpu;
use crate::error::Result;
use crate::key::Key;
use crate::partition::launch::partition_launch_config;
use crate::types::SetOperation;
use cudarc::driver::{CudaSlice, DevicePtrMut, LaunchConfig};

/// What a set kernel writes.
pub(crate) enum Output<'a, 'b> {
    LenOnly,
    Keys(&'a CheckedBuffer<'b>),
    Pairs { keys: &'a CheckedBuffer<'b>, a_values: &'a CheckedBuffer<'b>, b_values: &'a CheckedBuffer<'b>, values: &'a CheckedBuffer<'b>, word: usize },
}

impl Output<'_, '_> {
    /// The most items the output holds (any number for `LenOnly`).
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Output::LenOnly => usize::MAX,
            Output::Keys(keys) => keys.len,
            Output::Pairs { keys, values, .. } => keys.len.min(values.len),
        }
    }
}

/// Enqueues the Balanced Path partitions and the set kernel for `output` on validated buffers;
/// returns the result's length (in device memory, written by the kernels).
pub(crate) fn launch_set_op<K: Key>(gpu: &Gpu, kernels: &Kernels, op: SetOperation, a: &CheckedBuffer<'_>, b: &CheckedBuffer<'_>, output: Output<'_, '_>) -> Result<CudaSlice<u64>> {
    let capacity = output.capacity();
    let mut len = gpu.alloc_zeros::<u64>(1)?;
    let total = a.len + b.len;
    if total == 0 {
        return Ok(len);
    }
    let grid = SetGrid::new(kernels.arch, std::mem::size_of::<K>(), total)?;
    let (shape, tiles, num_splits) = (grid.shape, grid.tiles, grid.splits);
    let (temp_bytes, splits_at, states_at) = grid.temp_layout();
    let mut temp = gpu.temp(temp_bytes)?;
    let (base, _temp_guard) = temp.device_ptr_mut();
    let (splits, states) = (base + splits_at as u64, base + states_at as u64);
    let (len_ptr, _len_guard) = len.device_ptr_mut(gpu.stream());

    let params = SetPartitionsParams {
        a: a.ptr,
        a_count: a.len as i64,
        b: b.ptr,
        b_count: b.len as i64,
        spacing: shape.tile() as i64,
        num_splits: num_splits as i64,
        splits,
        tile_states: states,
    };
    let func = kernels.set_partitions()?;
    // SAFETY: `SetPartitionsParams` is `mergepath_set_partitions`'s parameter struct; a and b
    // are valid for their lengths, the temp buffer holds num_splits splits and num_splits
    // states of 8 bytes (its layout), and the grid covers num_splits threads.
    unsafe { gpu.launch(&func, partition_launch_config(num_splits)?, &params) }?;

    // The set kernels are launched as programmatic dependents of the partitions, the launch
    // just before; set_op_tile and set_count_tile wait for them before reading the splits.
    let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let (emit, num_tiles) = (op.emit(), i64::from(tiles));
    let capacity = i64::try_from(capacity).unwrap_or(i64::MAX);
    match output {
        Output::LenOnly => {
            let params = SetCountParams { a: a.ptr, b: b.ptr, splits, emit, out_count: len_ptr };
            let func = kernels.set_count()?;
            // SAFETY: `SetCountParams` is `mergepath_set_count`'s parameter struct; the kernel's tile is `shape`
            // (same table row), the grid has one CTA per tile, the splits (tiles + 1) were just
            // computed with that spacing, and `len` is one zeroed u64 the tiles add to.
            unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }?;
        }
        Output::Keys(out) => {
            let params = SetKeysParams { a: a.ptr, b: b.ptr, splits, num_tiles, emit, tile_states: states, out: out.ptr, capacity, out_count: len_ptr };
            let func = kernels.set_keys()?;
            // SAFETY: as above for `mergepath_set_keys` (`SetKeysParams`); the tile states (tiles + 1, zeroed by
            // the partition kernel) hold the scan and the ticket counter, and the kernel writes
            // only the first `capacity` (out's length) outputs.
            unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }?;
        }
        Output::Pairs { keys, a_values, b_values, values, word } => {
            let params = SetPairsParams {
                a: a.ptr,
                a_vals: a_values.ptr,
                b: b.ptr,
                b_vals: b_values.ptr,
                splits,
                num_tiles,
                emit,
                tile_states: states,
                out: keys.ptr,
                out_vals: values.ptr,
                capacity,
                out_count: len_ptr,
            };
            let func = kernels.set_pairs(word)?;
            // SAFETY: as above for `mergepath_set_pairs_{4,8,16}` (`SetPairsParams`); the value buffers have
            // their keys' lengths and the word alignment, and `capacity` is the shorter output.
            unsafe { gpu.launch_dependent(&func, cfg, &params, kernels.arch) }?;
        }
    }
    drop(_len_guard);
    Ok(len)
}

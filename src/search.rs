//! Vectorized sorted search: for each of many sorted needles, its lower or upper bound in a
//! sorted haystack, in O(needles + haystack) work.
//!
//! The needles and the haystack are merged virtually with the two-phase layer of
//! [`crate::partition`] (coarse partitions, then tiles in shared memory with a serial merge per
//! thread, as Modern GPU's SortedSearch), and each needle's bound is the number of haystack items
//! merged before it. Nothing is merged into memory and no needle does a binary search of its
//! own. Lower bounds merge the needles first (a needle goes before the haystack items equal to
//! it), upper bounds the haystack first.

use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelArg};
use crate::key::{Comparator, Key};
use crate::partition::{launch_partitions, partition_count};
use crate::sort::SortIndex;
use crate::tuning::merge_shape;
use cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};

/// Which bound [`sorted_search`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The first haystack position whose item does not go before the needle: the number of
    /// haystack items strictly before it (`partition_point(|h| comp(h, needle))`).
    Lower,
    /// The first haystack position whose item goes after the needle: the number of haystack
    /// items not after it (`partition_point(|h| !comp(needle, h))`).
    Upper,
}

/// Writes to `out[j]` the `bound` of `needles[j]` in `haystack`, for every needle; both must be
/// sorted by `comp`. `out` may be longer (the rest is left as it is) and must not overlap the
/// inputs; indices are `u32` (haystacks of up to 2^32 - 1 items, [`Error::TooLarge`] past that)
/// or `u64`. Any lengths, including 0 and more than 2^31. Returns without waiting for the GPU.
///
/// Unsorted needles or haystack give unspecified indices in `0..=haystack.len()`, never an
/// out-of-bounds access.
pub fn sorted_search<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    bound: Bound,
    out: &mut impl DevicePtrMut<I>,
    _comp: C,
) -> Result<()> {
    let align = std::mem::align_of::<K>();
    let needles = gpu.input("needles", needles, align)?;
    let haystack = gpu.input("haystack", haystack, align)?;
    if haystack.len >= I::MAX_COUNT {
        return Err(Error::TooLarge { what: "u32 indices (a haystack of 2^32 items or more)" });
    }
    let word = std::mem::size_of::<I>();
    let out = gpu.output("out", out, word, needles.len, &[&needles, &haystack])?;
    if needles.len == 0 {
        return Ok(());
    }
    let kernels = gpu.kernels::<K, C>()?;
    let shape = merge_shape(kernels.arch, std::mem::size_of::<K>());
    let tile = shape.tile();
    let total = needles.len + haystack.len;
    let tiles = u32::try_from(total.div_ceil(tile)).ok().filter(|&t| t <= i32::MAX as u32).ok_or(Error::TooLarge { what: "search grid" })?;
    let (a, b) = match bound {
        Bound::Lower => (&needles, &haystack),
        Bound::Upper => (&haystack, &needles),
    };
    let parts = partition_count(total, tile);
    let mut temp = gpu.temp(parts * 8)?;
    let (parts_ptr, _parts_guard) = temp.device_ptr_mut();
    launch_partitions(gpu, &kernels, a, b, tile, parts_ptr, parts)?;

    let cfg = LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (shape.threads, 1, 1), shared_mem_bytes: 0 };
    let args = [
        KernelArg::Ptr(needles.ptr),
        KernelArg::I64(needles.len as i64),
        KernelArg::Ptr(haystack.ptr),
        KernelArg::I64(haystack.len as i64),
        KernelArg::Ptr(parts_ptr),
        KernelArg::Ptr(out.ptr),
    ];
    let slot = usize::from(word == 8) + 2 * usize::from(bound == Bound::Upper);
    // SAFETY: matches `mergepath_sorted_search_{lower,upper}_{4,8}`; the kernel's tile is the
    // merge shape (same table row), the grid covers ceil(total / tile) tiles, the partitions
    // (tiles + 1 entries) were computed over (A, B) in the order the bound's kernel merges them,
    // and `out` holds at least needles.len indices of `word` bytes.
    unsafe { gpu.launch(&kernels.sorted_search[slot], cfg, &args) }
}

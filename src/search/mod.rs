//! Vectorized sorted search: for each of many sorted needles, its lower or upper bound in a
//! sorted haystack, in O(needles + haystack) work.
//!
//! The needles and the haystack are merged virtually with the two-phase layer of
//! [`crate::partition`] (coarse partitions, then tiles in shared memory with a serial merge per
//! thread, as Modern GPU's SortedSearch), and each needle's bound is the number of haystack items
//! merged before it. Nothing is merged into memory and no needle does a binary search of its
//! own. Lower bounds merge the needles first (a needle goes before the haystack items equal to
//! it), upper bounds the haystack first. Ranges, counts and match flags are one pass of the
//! lower-bound merge: a needle's equal haystack items are the run after its lower bound, read
//! in the tile and, where the run reaches the tile's end, in the haystack beyond it (a galloping
//! search that reads only the run).

mod launch;
mod plan;

use crate::device::buffers::CheckedBuffer;
use crate::device::Gpu;
use crate::error::Result;
use crate::key::{Comparator, Key};
pub(crate) use launch::{launch_key_bounds, launch_search};
pub(crate) use plan::{check_search, SearchOutput};
pub use crate::types::Bound;
use crate::types::SortIndex;
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// Writes to `out[j]` the `bound` of `needles[j]` in `haystack`, for every needle; both must be
/// sorted by `comp`. `out` may be longer (the rest is left as it is) and must not overlap the
/// inputs; indices are `u32` (haystacks of up to 2^32 - 1 items,
/// [`Error::TooLarge`](crate::Error::TooLarge) past that) or `u64`. Any lengths, including 0
/// and more than 2^31. Returns without waiting for the GPU.
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
    let (needles, haystack) = search_inputs::<K, I>(gpu, needles, haystack)?;
    let out = gpu.output("out", out, std::mem::size_of::<I>(), needles.len, &[&needles, &haystack])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Bound(bound, std::mem::size_of::<I>()), &[out.ptr])
}

/// Both bounds of every needle: `lower[j]..upper[j]` is the range of haystack items equal to
/// `needles[j]` (empty where there is none). One search writes both; otherwise as
/// [`sorted_search`].
pub fn sorted_search_range<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    lower: &mut impl DevicePtrMut<I>,
    upper: &mut impl DevicePtrMut<I>,
    _comp: C,
) -> Result<()> {
    let (needles, haystack) = search_inputs::<K, I>(gpu, needles, haystack)?;
    let word = std::mem::size_of::<I>();
    let lo = gpu.output("lower", lower, word, needles.len, &[&needles, &haystack])?;
    let up = gpu.output("upper", upper, word, needles.len, &[&needles, &haystack, &lo])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Range(word), &[lo.ptr, up.ptr])
}

/// Writes to `counts[j]` how many haystack items are equal to `needles[j]` (neither goes
/// before the other), as Modern GPU's SortedEqualityCount but in one pass: the lower-bound
/// merge, and the run of equal haystack items after each needle's bound. Otherwise as
/// [`sorted_search`].
pub fn sorted_search_count<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    counts: &mut impl DevicePtrMut<I>,
    _comp: C,
) -> Result<()> {
    let (needles, haystack) = search_inputs::<K, I>(gpu, needles, haystack)?;
    let out = gpu.output("counts", counts, std::mem::size_of::<I>(), needles.len, &[&needles, &haystack])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Count(std::mem::size_of::<I>()), &[out.ptr])
}

/// Writes to `found[j]` 1 if `haystack` holds an item equal to `needles[j]`, else 0: the
/// one-pass search of [`sorted_search_count`], writing whether the count is not 0. Otherwise
/// as [`sorted_search`] (any haystack length).
pub fn sorted_search_contains<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    needles: &impl DevicePtr<K>,
    haystack: &impl DevicePtr<K>,
    found: &mut impl DevicePtrMut<u8>,
    _comp: C,
) -> Result<()> {
    let (needles, haystack) = search_inputs::<K, u64>(gpu, needles, haystack)?;
    let out = gpu.output("found", found, 1, needles.len, &[&needles, &haystack])?;
    launch_search::<K, C>(gpu, &needles, &haystack, SearchOutput::Contains, &[out.ptr])
}

/// Validated needle and haystack buffers; a haystack too long for `I` is an error.
fn search_inputs<'a, K: Key, I: SortIndex>(
    gpu: &'a Gpu,
    needles: &'a impl DevicePtr<K>,
    haystack: &'a impl DevicePtr<K>,
) -> Result<(CheckedBuffer<'a>, CheckedBuffer<'a>)> {
    let align = K::DEVICE_ALIGN;
    let needles = gpu.input("needles", needles, align)?;
    let haystack = gpu.input("haystack", haystack, align)?;
    check_search::<I>(needles.len, haystack.len, &[])?;
    Ok((needles, haystack))
}

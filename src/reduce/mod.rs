//! Segmented reduction (Modern GPU's segreduce): each segment's values folded into one by a
//! built-in associative operation, on the load-balancing search's tiles.
//!
//! ```no_run
//! use mergepath::{Less, Reduction};
//! # fn main() -> Result<(), mergepath::Error> {
//! let gpu = mergepath::Gpu::new(0)?;
//! // Three segments of 2, 0 and 3 values: their starts are the exclusive scan of the lengths.
//! let starts = gpu.upload(&[0u32, 2, 2])?;
//! let values = gpu.upload(&[5u64, 7, 1, 2, 3])?;
//! let mut sums = gpu.alloc_zeros::<u64>(3)?;
//! mergepath::segmented_reduce(&gpu, &starts, &values, &mut sums, Reduction::Sum, 0, Less)?;
//! assert_eq!(gpu.download(&sums)?, [12, 0, 6]);
//! # Ok(())
//! # }
//! ```
//!
//! Semantics: the values are the items of a load-balancing search
//! ([`crate::load_balancing`]), `starts` the segments' first items (non-decreasing from 0);
//! `out[s]` is the fold of `values[starts[s] .. starts[s + 1]]` (the last segment to the end)
//! in order, and `empty` for a segment with no values. Every operation is associative, so the
//! GPU folds pieces of a segment in any grouping; integer sums wrap, and float sums may differ
//! from a sequential sum in the last bits (the grouping changes the rounding).
//!
//! The two-phase schedule: the search's tiles of segment boundaries and items (bounded work
//! whatever the lengths); each tile folds its items segment by segment and writes the segments
//! that begin and end inside it; then the spine scans the tiles' partial folds in order and
//! writes the segments that cross a tile's edge (a CTA for each 2,048 tiles, each taking the
//! fold carried into its tiles from the CTAs before it by a decoupled look-back).

mod launch;

use crate::checks::{check_load_balancing, check_output};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{Comparator, Key};
use crate::types::SortIndex;
use cudarc::driver::{DevicePtr, DevicePtrMut};
pub(crate) use launch::{launch_segmented_reduce, Segments};
use std::any::TypeId;
pub use crate::types::Reduction;

/// Writes to `out[s]` the fold of segment `s`'s values by `reduction` (`empty` where the
/// segment has none): the segments given by their first items `starts` (device memory, as
/// [`crate::load_balancing_search`]'s, over the `values.len()` items), `out` holding at least
/// one value per segment ([`Error::OutputTooSmall`]; the rest is
/// left as it is) apart from the inputs. `comp` orders `Min` and `Max`; records (derived keys
/// over 16 bytes) fold by a stable sort of the values with their positions (`docs/guide.md`).
/// Indices `u32` (up to 2^32 values and segments, [`Error::TooLarge`] past that) or `u64`.
/// Values with no segment (`starts` empty) are [`Error::InvalidArgument`]. O(values +
/// segments) work, and a sort for records. Returns without waiting for the GPU.
///
/// Device `starts` are not checked (that would wait for the GPU): starts that are not
/// non-decreasing from 0 give unspecified results, never an access out of bounds. The
/// host-slice and host-backend calls check theirs.
pub fn segmented_reduce<K: Key, I: SortIndex, C: Comparator<K>>(
    gpu: &Gpu,
    starts: &impl DevicePtr<I>,
    values: &impl DevicePtr<K>,
    out: &mut impl DevicePtrMut<K>,
    reduction: Reduction,
    empty: K,
    comp: C,
) -> Result<()> {
    let _ = comp;
    let word = std::mem::size_of::<I>();
    let starts = gpu.input("starts", starts, word)?;
    let values = gpu.input("values", values, K::DEVICE_ALIGN)?;
    let out = gpu.output("out", out, K::DEVICE_ALIGN, 0, &[&starts, &values])?;
    check_reduce::<K>(values.len, starts.len, out.len, I::MAX_COUNT, reduction)?;
    launch_segmented_reduce::<K, C>(gpu, word, Segments::Starts(&starts), values.ptr, values.len, out.ptr, reduction, empty)
}

/// The checks every front end makes of a segmented reduction of `count` values in `segments`
/// segments into `out_len` outputs, indices holding `max_count`: the search's, an output per
/// segment, and [`check_reduction`].
pub(crate) fn check_reduce<K: Key>(count: usize, segments: usize, out_len: usize, max_count: usize, reduction: Reduction) -> Result<()> {
    check_load_balancing(count, segments, max_count, &[])?;
    check_output("out", out_len, segments)?;
    check_reduction::<K>(reduction)
}

/// `reduction` of keys of `K`: a sum only of built-in numbers.
pub(crate) fn check_reduction<K: Key>(reduction: Reduction) -> Result<()> {
    if reduction == Reduction::Sum && builtin_sum::<K>().is_none() {
        return Err(Error::NotSupported { key: std::any::type_name::<K>(), operation: "Reduction::Sum (built-in number keys only; Min and Max take any key)".into() });
    }
    Ok(())
}

/// The fold of two values by `reduction` (checked by [`check_reduce`]: a sum is of built-in
/// numbers), on the host.
pub(crate) fn fold_op<K: Key, C: Comparator<K>>(reduction: Reduction, comp: C) -> impl Fn(K, K) -> K + Copy + Sync {
    let sum = builtin_sum::<K>();
    move |a: K, b: K| match reduction {
        Reduction::Sum => sum.expect("check_reduce refuses sums of other keys")(a, b),
        Reduction::Min => if comp.is_less(&b, &a) { b } else { a },
        Reduction::Max => if comp.is_less(&a, &b) { b } else { a },
    }
}

/// The sum of two built-in numbers of type `K` (wrapping for integers), or `None` for any other
/// key type.
fn builtin_sum<K: Key>() -> Option<fn(K, K) -> K> {
    macro_rules! sums {
        ($($t:ty => $add:expr),*) => {$(
            if TypeId::of::<K>() == TypeId::of::<$t>() {
                return Some(|a: K, b: K| bytemuck::cast::<$t, K>($add(bytemuck::cast::<K, $t>(a), bytemuck::cast::<K, $t>(b))));
            }
        )*};
    }
    sums!(u8 => u8::wrapping_add, u16 => u16::wrapping_add, u32 => u32::wrapping_add, u64 => u64::wrapping_add,
          i8 => i8::wrapping_add, i16 => i16::wrapping_add, i32 => i32::wrapping_add, i64 => i64::wrapping_add,
          f32 => |x: f32, y: f32| x + y, f64 => |x: f64, y: f64| x + y);
    None
}

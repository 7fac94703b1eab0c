//! Key types, comparators and values.

use bytemuck::Pod;
use std::cmp::Ordering;

/// A type the kernels can compare: plain old data with a CUDA twin.
///
/// Implemented for the built-in integers and floats; user structs get it from
/// `#[derive(Key)]`. Floating-point keys are ordered by the IEEE total order (see [`Less`]).
pub trait Key: Pod + Send + Sync + 'static {
    /// The CUDA C++ type the kernels see (`uint32_t`, `float`, a generated struct, ...).
    const CUDA_TYPE: &'static str;
}

/// A strict weak order on `K` with kernels compiled for it.
///
/// The GPU kernels use the CUDA functor compiled at build time; [`Comparator::is_less`] is its
/// Rust twin, used by the CPU oracle. Both must answer "does `a` go strictly before `b`".
pub trait Comparator<K: Key>: Copy + Send + Sync + 'static {
    /// A short name (`"less"`, `"greater"`, a derived comparator's name).
    const NAME: &'static str;
    /// The CUDA C++ functor the kernels compare with (`mergepath::less_t<uint32_t>` for the
    /// built-ins, `mergepath_user::Name_less` for a derived key's), so a user's kernel can be
    /// instantiated for this (key, comparator) pair as the library's are.
    const CUDA_FUNCTOR: &'static str;
    /// The fatbin holding this (key, comparator) pair's kernels.
    const KERNELS: &'static [u8];
    /// Does `a` go strictly before `b`?
    fn is_less(&self, a: &K, b: &K) -> bool;
    /// `Some(descending)` where this order is the ascending (`false`) or descending (`true`)
    /// order of a bijective packing of the 8-byte key into a `u64` (`#[derive(Key)]` field
    /// orders that cover every field): key sorts then run the `u64` sort, with the first pass
    /// reading the keys packed and the last writing them unpacked (the `mergepath_blocksort_pack`
    /// and `_unpack` kernels in [`Comparator::KERNELS`]).
    #[doc(hidden)]
    const PACKED_U64: Option<bool> = None;
}

/// Ascending order. Floats use the IEEE total order of `f32::total_cmp`:
/// -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (NaNs ordered by sign and payload).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Less;

/// Descending order: the exact reverse of [`Less`] (so +NaN first, then +inf, ..., -NaN last).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Greater;

/// Total order used by the built-in comparators (equal to `Ord` for integers).
pub trait TotalOrd {
    /// Compares like `Ord::cmp`, or `total_cmp` for floats.
    fn total_order(&self, other: &Self) -> Ordering;
}

macro_rules! builtin_keys {
    ($($t:ident => $cuda:literal, $cmp:expr;)*) => {$(
        impl Key for $t {
            const CUDA_TYPE: &'static str = $cuda;
        }
        impl TotalOrd for $t {
            #[inline]
            fn total_order(&self, other: &Self) -> Ordering {
                let cmp: fn(&$t, &$t) -> Ordering = $cmp;
                cmp(self, other)
            }
        }
        paste::paste! {
            impl Comparator<$t> for Less {
                const NAME: &'static str = "less";
                const CUDA_FUNCTOR: &'static str = concat!("mergepath::less_t<", $cuda, ">");
                const KERNELS: &'static [u8] = crate::fatbins::[<FATBIN_ $t:upper _LESS>];
                #[inline]
                fn is_less(&self, a: &$t, b: &$t) -> bool {
                    a.total_order(b) == Ordering::Less
                }
            }
            impl Comparator<$t> for Greater {
                const NAME: &'static str = "greater";
                const CUDA_FUNCTOR: &'static str = concat!("mergepath::greater_t<", $cuda, ">");
                const KERNELS: &'static [u8] = crate::fatbins::[<FATBIN_ $t:upper _GREATER>];
                #[inline]
                fn is_less(&self, a: &$t, b: &$t) -> bool {
                    b.total_order(a) == Ordering::Less
                }
            }
        }
    )*};
}

// `builtin_keys! { u8 => "uint8_t", Ord::cmp; ... }`, from mergepath_build::BUILTIN_KEYS.
include!(concat!(env!("OUT_DIR"), "/builtin_keys.rs"));

/// A value carried along with its key: any `Pod` type.
///
/// Values of 4, 8 or 16 bytes move through the kernels as opaque words (no kernel is compiled
/// per value type); their device addresses must be multiples of that size (always true for
/// cudarc allocations and their views; [`Error::Misaligned`](crate::Error::Misaligned)
/// otherwise). Values of any other size (a 12-byte payload, a 3-byte tag, a 256-byte row) are
/// carried by position: sorts, segmented sorts and merges move a 4-byte position with each key
/// (8 bytes past 2^32 items) and gather the values once at the end (device addresses multiples
/// of the value's alignment).
///
/// Multiway merges and set operations take 4-, 8- and 16-byte values only; other sizes are a
/// compile error there (carry a `u32` index and gather):
///
/// ```compile_fail
/// # use mergepath::{Gpu, Less, SetOperation};
/// # fn main() -> Result<(), mergepath::Error> {
/// let gpu = Gpu::new(0)?;
/// let keys = gpu.upload(&[1u32, 2])?;
/// let values = gpu.upload(&[[0u8; 12]; 2])?; // 12 bytes: not a word the set kernels move
/// let (mut out_keys, mut out_values) = (gpu.upload(&[0u32; 4])?, gpu.upload(&[[0u8; 12]; 4])?);
/// mergepath::set_operation_pairs(&gpu, SetOperation::Union, &keys, &values, &keys, &values, &mut out_keys, &mut out_values, Less)?;
/// # Ok(()) }
/// ```
pub trait Value: Pod + Send + Sync + 'static {}
impl<V: Pod + Send + Sync + 'static> Value for V {}

/// How an algorithm carries values of `V`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueCarry {
    /// Through the kernels, as words of this many bytes (4, 8 or 16).
    Words(usize),
    /// By position, then one gather of values of this many bytes ([`crate::gather`]).
    Positions(usize),
}

/// How `V` is carried: as words where it is one, else by position.
pub(crate) const fn value_carry<V: Value>() -> ValueCarry {
    match std::mem::size_of::<V>() {
        size @ (4 | 8 | 16) => ValueCarry::Words(size),
        size => ValueCarry::Positions(size),
    }
}

/// The alignment the algorithms require of `V`'s device addresses: its word, or its own
/// alignment where it is carried by position.
pub(crate) const fn value_align<V: Value>() -> usize {
    match value_carry::<V>() {
        ValueCarry::Words(size) => size,
        ValueCarry::Positions(_) => std::mem::align_of::<V>(),
    }
}

/// The word the value kernels move `V` as, for the algorithms that take words only (multiway
/// merges, set operations); a compile error for other sizes.
pub(crate) const fn value_word<V: Value>() -> usize {
    match value_carry::<V>() {
        ValueCarry::Words(size) => size,
        ValueCarry::Positions(_) => panic!("mergepath: multiway merges and set operations take values of 4, 8 or 16 bytes"),
    }
}

//! Types several algorithms and both backends (GPU and host) share.

use crate::device::contract::{SET_A_ONLY, SET_B_ONLY, SET_MATCHED};
use crate::key::Value;

/// Which bound [`sorted_search`](crate::sorted_search) finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The first haystack position whose item does not go before the needle: the number of
    /// haystack items strictly before it (`partition_point(|h| comp(h, needle))`).
    Lower,
    /// The first haystack position whose item goes after the needle: the number of haystack
    /// items not after it (`partition_point(|h| !comp(needle, h))`).
    Upper,
}

/// Which input's item goes first where an item of A and one of B are equal (neither goes before
/// the other) in a merge path: the device's `mergepath::tie`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Tie {
    /// A's first: the stable merge of A then B, as every merge of the library.
    #[default]
    AFirst,
    /// B's first: the merge path of a kernel whose tiles merge with `tie::b_first`, without
    /// swapping its inputs.
    BFirst,
}

/// A multiset operation on sorted inputs A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetOperation {
    /// Keys in both: `min(i, j)` copies, A's first ones.
    Intersection,
    /// Keys in either: `max(i, j)` copies, all of A's, then B's last `max(j - i, 0)`.
    Union,
    /// A - B: `max(i - j, 0)` copies, A's last ones.
    Difference,
    /// Keys in one but not the other: `|i - j|` copies, the last ones of the side with more.
    SymmetricDifference,
}

impl SetOperation {
    /// All four operations.
    pub const ALL: [SetOperation; 4] = [Self::Intersection, Self::Union, Self::Difference, Self::SymmetricDifference];

    /// The longest result the operation can have on inputs of `a_len` and `b_len` items: an
    /// output buffer this long never truncates.
    pub fn max_len(self, a_len: usize, b_len: usize) -> usize {
        match self {
            Self::Intersection => a_len.min(b_len),
            Self::Union | Self::SymmetricDifference => a_len.saturating_add(b_len),
            Self::Difference => a_len,
        }
    }

    /// Which steps of the balanced merge go out, as `mergepath::set_emit` flags.
    pub(crate) fn emit(self) -> i32 {
        match self {
            Self::Intersection => SET_MATCHED,
            Self::Union => SET_A_ONLY | SET_B_ONLY | SET_MATCHED,
            Self::Difference => SET_A_ONLY,
            Self::SymmetricDifference => SET_A_ONLY | SET_B_ONLY,
        }
    }
}

/// Index types [`sort_indices`](crate::sort_indices) can write: `u32` (up to 2^32 keys) and `u64`.
pub trait SortIndex: Value + private::Sealed {
    /// The largest key count whose positions this type holds.
    const MAX_COUNT: usize;
    /// The index's value.
    #[doc(hidden)]
    fn value(self) -> u64;
}
impl SortIndex for u32 {
    const MAX_COUNT: usize = u32::MAX as usize + 1;
    fn value(self) -> u64 {
        self as u64
    }
}
impl SortIndex for u64 {
    const MAX_COUNT: usize = usize::MAX;
    fn value(self) -> u64 {
        self
    }
}
mod private {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// The built-in operations of [`crate::segmented_reduce`] and [`crate::reduce_by_key`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// The sum: `+`, wrapping for integers. Built-in number keys only (`u8` … `u64`, `i8` …
    /// `i64`, `f32`, `f64`); other keys are
    /// [`Error::NotSupported`](crate::Error::NotSupported).
    Sum,
    /// The least value by the comparator; of equal least values, the first.
    Min,
    /// The greatest value by the comparator; of equal greatest values, the first.
    Max,
}

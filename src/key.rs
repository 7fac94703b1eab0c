//! Key types, comparators and values.

use bytemuck::Pod;
use std::cmp::Ordering;

/// A type the kernels can compare: plain old data with a CUDA twin.
///
/// Implemented for the built-in integers and floats; user structs get it from
/// `#[derive(Key)]`. Floating-point keys are ordered by the IEEE total order (see [`Less`]).
pub trait Key: Pod + Send + Sync + 'static {
    /// The CUDA C++ type the kernels see (`uint32_t`, `float`, a generated struct, ...). A
    /// derived key's (`mergepath_user::Name`) is declared in the header
    /// `<mergepath_user/Name.cuh>` that `mergepath_build::Kernels::keys` writes for a build
    /// script's own kernels.
    const CUDA_TYPE: &'static str;
    /// The alignment of the CUDA type, which device addresses of keys must have
    /// ([`Error::Misaligned`](crate::Error::Misaligned) otherwise; views of cudarc allocations
    /// always have it): Rust's for the built-in types; for derived keys the largest power of two
    /// dividing their size, at most 16, so a `[u8; 16]` key loads as one 16-byte word rather
    /// than sixteen bytes.
    const DEVICE_ALIGN: usize = std::mem::align_of::<Self>();
}

/// A strict weak order on `K` with kernels compiled for it.
///
/// The GPU kernels use the CUDA functor compiled at build time; [`Comparator::is_less`] is its
/// Rust twin, used by the CPU oracle. Both must answer "does `a` go strictly before `b`".
pub trait Comparator<K: Key>: Copy + Send + Sync + 'static {
    /// A short name (`"less"`, `"greater"`, a derived comparator's name).
    const NAME: &'static str;
    /// The CUDA C++ functor the kernels compare with (`mergepath::less_t<uint32_t>` for the
    /// built-ins, `mergepath_user::Name_less` for a derived key's, defined in the key's header
    /// `<mergepath_user/Name.cuh>` from `mergepath_build::Kernels::keys`), so a user's kernel
    /// can be instantiated for this (key, comparator) pair as the library's are.
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
    /// `Some` for the orders of records wider than the kernels' key tiles (`#[derive(Key)]` on
    /// structs over 16 bytes): the order fields packed into `u64` words, so sorts sort (packed
    /// order, position) pairs and gather each record once ([`RecordOrder`]), and the other
    /// algorithms run on one `u64` key per record (`sort::order_keys`): its packed word, or its
    /// device address where the order has a module on addresses (`RecordOrder::by_address`:
    /// custom comparators, whose sorts sort the addresses too, and orders of several words).
    /// Of such a comparator's [`Comparator::KERNELS`] (the `u64` ones, or the custom
    /// comparator's address module) a record may use only the key-independent kernels.
    #[doc(hidden)]
    const RECORD: Option<RecordOrder> = None;
    /// `Some` where device sorts go by the order packed into `u64` words instead of moving the
    /// keys through every pass: records ([`Comparator::RECORD`]), and derived keys of 9 to 16
    /// bytes in their field order (`Less`, `Greater`). The sort sorts (first word, position)
    /// pairs, then each later word only inside the runs of items tied on the words before it
    /// (a segmented sort over runs found on the device, so nothing waits for the GPU), and
    /// gathers each key once.
    #[doc(hidden)]
    const SORT_BY_WORDS: Option<RecordOrder> = Self::RECORD;
    /// `true` for the built-in comparators on keys of at most 4 bytes: sorts with 4-byte values
    /// (or positions) zip each key's order bits and its value into one `u64` and run the passes
    /// of a `u64` sort by the high halves (the `mergepath_blocksort_zip` and `_unzip` kernels
    /// in [`Comparator::KERNELS`] read and write the pairs), moving each pair as one word.
    #[doc(hidden)]
    const ZIPPED_PAIRS: bool = false;
}

/// One element of a record's packed order: a scalar field or an array element of a built-in
/// numeric type, its bits (complemented where descending) placed at `shift` in word `word` of
/// the packed order (word 0 the most significant).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordField {
    /// Byte offset in the record.
    pub offset: u32,
    /// Size in bytes: 1, 2, 4 or 8.
    pub bytes: u8,
    pub signed: bool,
    pub float: bool,
    /// Which `u64` word of the packed order holds it.
    pub word: u8,
    /// Where its bits go in that word.
    pub shift: u8,
    pub descending: bool,
}

/// The order of a record wider than the kernels' key tiles: its elements, first (highest bits
/// of the first word) to last, and whether the comparator is the packed words' descending order
/// (`Greater`). Records compare as their packed words do, lexicographically; or, under a
/// custom comparator, as it compares them (`by_address`).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordOrder {
    pub fields: &'static [RecordField],
    pub descending: bool,
    /// The module of the order's kernels on the records' device addresses, `u64` keys that
    /// compare as the records they point to (`mergepath::by_address`; the addresses' bit
    /// `RECORD_ADDRESS_REVERSED_BIT` reverses it): a custom comparator's (`fields` empty),
    /// whose sorts sort the addresses with the positions, and a field order's of several
    /// words (`Greater` has `Less`'s). Merges and searches run on the addresses.
    pub by_address: Option<&'static [u8]>,
}

impl RecordField {
    /// The element's word for the `mergepath_record_order` kernels (the contract's `RECORD_`
    /// constants).
    pub(crate) fn encoded(&self) -> i64 {
        use crate::device::contract::{RECORD_FIELD_BITS_SHIFT, RECORD_FIELD_DESCENDING_BIT, RECORD_FIELD_KIND_SHIFT, RECORD_FIELD_WORD_SHIFT, RECORD_KIND_FLOAT, RECORD_KIND_SIGNED};
        let kind = self.bytes as usize + if self.signed { RECORD_KIND_SIGNED } else { 0 } + if self.float { RECORD_KIND_FLOAT } else { 0 };
        (self.offset as i64)
            | (kind as i64) << RECORD_FIELD_KIND_SHIFT
            | (self.shift as i64) << RECORD_FIELD_BITS_SHIFT
            | (self.descending as i64) << RECORD_FIELD_DESCENDING_BIT
            | (self.word as i64) << RECORD_FIELD_WORD_SHIFT
    }

    /// The element's bits in `record` (its bytes), placed: the host twin of the kernels'
    /// `record_order_element`.
    pub(crate) fn bits(&self, record: &[u8]) -> u64 {
        let at = self.offset as usize;
        let mut raw = [0u8; 8];
        raw[..self.bytes as usize].copy_from_slice(&record[at..at + self.bytes as usize]);
        let mut bits = u64::from_le_bytes(raw);
        let ones = if self.bytes == 8 { u64::MAX } else { (1u64 << (8 * self.bytes)) - 1 };
        let sign = 1u64 << (8 * self.bytes - 1);
        if self.float {
            // The IEEE total order: negative floats' magnitude bits reversed, then the sign
            // flipped.
            let magnitude = if bits & sign != 0 { ones >> 1 } else { 0 };
            bits = bits ^ magnitude ^ sign;
        } else if self.signed {
            bits ^= sign;
        }
        if self.descending {
            bits ^= ones;
        }
        bits << self.shift
    }
}

impl RecordOrder {
    /// The elements' words for the kernels, padded with zeros (none past `fields.len()`).
    pub(crate) fn encoded(&self) -> [i64; crate::device::contract::RECORD_MAX_FIELDS] {
        let mut words = [0; crate::device::contract::RECORD_MAX_FIELDS];
        for (w, f) in words.iter_mut().zip(self.fields) {
            *w = f.encoded();
        }
        words
    }

    /// A custom comparator's module on addresses: its records have no packed order.
    pub(crate) fn custom(&self) -> Option<&'static [u8]> {
        self.by_address.filter(|_| self.fields.is_empty())
    }

    /// Words of the packed order: each sorted by one stable pass, the last first.
    pub fn words(&self) -> usize {
        self.fields.iter().map(|f| f.word as usize + 1).max().unwrap_or(1)
    }

    /// Word `word` of the packed order of `record` (its bytes): the packed words, compared
    /// lexicographically, ascend in the record's field order.
    pub fn pack(&self, record: &[u8], word: usize) -> u64 {
        self.fields.iter().filter(|f| f.word as usize == word).fold(0, |order, f| order | f.bits(record))
    }
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
    ($($t:ident => $cuda:literal, $cmp:expr, $less:ident, $greater:ident;)*) => {$(
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
        impl Comparator<$t> for Less {
            const NAME: &'static str = "less";
            const CUDA_FUNCTOR: &'static str = concat!("mergepath::less_t<", $cuda, ">");
            const KERNELS: &'static [u8] = crate::fatbins::$less;
            const ZIPPED_PAIRS: bool = std::mem::size_of::<$t>() <= 4;
            #[inline]
            fn is_less(&self, a: &$t, b: &$t) -> bool {
                a.total_order(b) == Ordering::Less
            }
        }
        impl Comparator<$t> for Greater {
            const NAME: &'static str = "greater";
            const CUDA_FUNCTOR: &'static str = concat!("mergepath::greater_t<", $cuda, ">");
            const KERNELS: &'static [u8] = crate::fatbins::$greater;
            const ZIPPED_PAIRS: bool = std::mem::size_of::<$t>() <= 4;
            #[inline]
            fn is_less(&self, a: &$t, b: &$t) -> bool {
                b.total_order(a) == Ordering::Less
            }
        }
    )*};
}

// `builtin_keys! { u8 => "uint8_t", Ord::cmp, FATBIN_U8_LESS, FATBIN_U8_GREATER; ... }`, from mergepath_build::BUILTIN_KEYS.
include!(concat!(env!("OUT_DIR"), "/builtin_keys.rs"));

/// A value carried along with its key: any `Pod` type.
///
/// Merges move values of 4, 8 or 16 bytes through the kernels as opaque words, and sorts
/// those of 4 or 8 bytes (no kernel is compiled per value type); their device addresses must be
/// multiples of that size (always true for cudarc allocations and their views;
/// [`Error::Misaligned`](crate::Error::Misaligned) otherwise). Values of any other size (a
/// 12-byte payload, a 3-byte tag, a 256-byte row; 16 bytes in sorts, where that measured
/// faster) are carried by position: sorts, segmented sorts and merges move a 4-byte position
/// with each key (8 bytes past 2^32 items) and gather the values once at the end (device
/// addresses multiples of the value's alignment).
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

/// Widest value a sort (many passes) moves as words: wider ones go by position, a 4-byte
/// position per item in every pass and one gather of the values. Measured on the H100 (u32
/// keys, 2^26, `benches/records.rs`): 16-byte values as words 15.29 ms, 12- and 24-byte values
/// by position 9.45 and 9.85 ms. Single-pass algorithms (merges) move values of 4, 8 and 16
/// bytes as words.
pub(crate) const SORT_VALUE_WORD_MAX: usize = 8;

/// How a sort carries values of `V`: as words up to [`SORT_VALUE_WORD_MAX`] bytes, else by
/// position.
pub(crate) const fn sort_value_carry<V: Value>() -> ValueCarry {
    match value_carry::<V>() {
        ValueCarry::Words(size) if size > SORT_VALUE_WORD_MAX => ValueCarry::Positions(size),
        carry => carry,
    }
}

/// The alignment the algorithms require of `V`'s device addresses: its word, or its own
/// alignment where it is carried by position.
pub(crate) const fn value_align<V: Value>() -> usize {
    carried_align::<V>(value_carry::<V>())
}

/// [`value_align`] for a sort ([`sort_value_carry`]).
pub(crate) const fn sort_value_align<V: Value>() -> usize {
    carried_align::<V>(sort_value_carry::<V>())
}

/// The alignment `V` needs carried as `carry`: its word, or its own alignment by position.
const fn carried_align<V: Value>(carry: ValueCarry) -> usize {
    match carry {
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

/// A strict-weak-order predicate (`is_less(x, y)`: x goes strictly before y) as an
/// `Ordering`, for `sort_by`.
pub fn ordering_by<T>(is_less: impl Fn(&T, &T) -> bool, x: &T, y: &T) -> std::cmp::Ordering {
    if is_less(x, y) {
        std::cmp::Ordering::Less
    } else if is_less(y, x) {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

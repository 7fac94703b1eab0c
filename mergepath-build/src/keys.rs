//! The built-in key types and comparators: mergepath compiles one kernel module per pair, and
//! `#[derive(Key)]` accepts the key types as fields.

/// A built-in key type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinKey {
    /// The Rust type (`u32`).
    pub rust: &'static str,
    /// Its CUDA twin (`uint32_t`).
    pub cuda: &'static str,
    /// Size in bytes.
    pub size: usize,
    /// A float: ordered by the IEEE total order (`total_cmp`) rather than `Ord`.
    pub float: bool,
}

const fn key(rust: &'static str, cuda: &'static str, size: usize, float: bool) -> BuiltinKey {
    BuiltinKey { rust, cuda, size, float }
}

/// The built-in key types, in the order their kernels are built.
pub const BUILTIN_KEYS: &[BuiltinKey] = &[
    key("u8", "uint8_t", 1, false),
    key("u16", "uint16_t", 2, false),
    key("u32", "uint32_t", 4, false),
    key("u64", "uint64_t", 8, false),
    key("i8", "int8_t", 1, false),
    key("i16", "int16_t", 2, false),
    key("i32", "int32_t", 4, false),
    key("i64", "int64_t", 8, false),
    key("f32", "float", 4, true),
    key("f64", "double", 8, true),
];

/// A built-in comparator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinComparator {
    /// Its name (`Comparator::NAME`), lower case: `less` for `mergepath::Less`.
    pub name: &'static str,
    /// The CUDA functor template, instantiated with the key type (`mergepath::less_t`).
    pub cuda_functor: &'static str,
}

/// The built-in comparators, `Less` and `Greater`.
pub const BUILTIN_COMPARATORS: &[BuiltinComparator] =
    &[BuiltinComparator { name: "less", cuda_functor: "mergepath::less_t" }, BuiltinComparator { name: "greater", cuda_functor: "mergepath::greater_t" }];

/// The built-in key type named `rust` (`"u32"`), if it is one.
pub fn builtin_key(rust: &str) -> Option<&'static BuiltinKey> {
    BUILTIN_KEYS.iter().find(|k| k.rust == rust)
}

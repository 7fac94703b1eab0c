//! Keys to generate: [`TestKey`] for the built-in types and derived ones, and [`pod_key`] for
//! any other [`Key`].

use crate::key::Key;
use cudarc::driver::DeviceRepr;
use proptest::prelude::*;
use std::fmt::Debug;

/// A key type the kit can generate: a strategy of arbitrary keys and the values that stress an
/// order. Implemented for the built-in integers and floats, and by `#[derive(Key)]` (with
/// mergepath's `testing` feature) for derived keys, field by field.
///
/// The strategy favours small values (so equal keys are common and failures shrink to readable
/// keys) but covers the whole type, extremes and specials included.
pub trait TestKey: Key + Debug + DeviceRepr {
    /// Arbitrary keys of this type.
    fn key_strategy() -> BoxedStrategy<Self>;
    /// Keys that stress an order: for floats NaNs of both signs, ±infinity, ±0 and the
    /// smallest normals; for integers the extremes; for derived keys each field's specials
    /// with the other fields zero.
    fn specials() -> Vec<Self>;
}

macro_rules! test_int_keys {
    ($($t:ty),*) => {$(
        impl TestKey for $t {
            fn key_strategy() -> BoxedStrategy<Self> {
                prop_oneof![
                    4 => (0 as $t..16 as $t),
                    3 => any::<$t>(),
                    1 => proptest::sample::select(<$t as TestKey>::specials()),
                ]
                .boxed()
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0, 1, <$t>::MAX / 2, <$t>::MIN.wrapping_add(1)]
            }
        }
    )*};
}
test_int_keys!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! test_float_keys {
    ($($t:ident => $bits:ty, $quiet_payload:expr;)*) => {$(
        impl TestKey for $t {
            fn key_strategy() -> BoxedStrategy<Self> {
                prop_oneof![
                    // Halves in [-32, 32): many equal keys, and readable after shrinking.
                    4 => (-64i32..64).prop_map(|h| h as $t / 2.0),
                    // Every bit pattern: all NaN payloads, subnormals, both zeros.
                    2 => any::<$bits>().prop_map(<$t>::from_bits),
                    2 => proptest::sample::select(<$t as TestKey>::specials()),
                ]
                .boxed()
            }
            fn specials() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    -<$t>::NAN,
                    <$t>::from_bits($quiet_payload),
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    <$t>::MIN_POSITIVE,
                    -<$t>::MIN_POSITIVE,
                    <$t>::MAX,
                    <$t>::MIN,
                ]
            }
        }
    )*};
}
test_float_keys! {
    f32 => u32, 0x7fc0_0001;
    f64 => u64, 0x7ff8_0000_0000_0001;
}

/// Keys of any [`Key`] type from arbitrary bytes (every bit pattern is a valid `Pod` value): for
/// key types without a [`TestKey`] implementation. Equal keys are rare; draw from a pool
/// ([`crate::testing::Pattern::FewDistinct`]) to get them.
pub fn pod_key<K: Key + Debug>() -> BoxedStrategy<K> {
    proptest::collection::vec(any::<u8>(), std::mem::size_of::<K>())
        .prop_map(|bytes| bytemuck::pod_read_unaligned(&bytes))
        .boxed()
}

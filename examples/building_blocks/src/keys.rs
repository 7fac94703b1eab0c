//! The crate's own key type. build.rs reads this file (`mergepath_build::Kernels::keys`) and
//! writes `mergepath_user/Trade.cuh` for kernels/examples.cu: the CUDA struct
//! `mergepath_user::Trade` and the functors `Trade_less`, `Trade_greater` and `Trade_ByPrice`,
//! as mergepath's own kernels for `Trade` are compiled with.

/// A trade, ordered by `Less` as `price desc, id`; `ByPrice` compares the price alone, so
/// trades of one price are equivalent under it.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "price desc, id")]
#[key(comparator(ByPrice, cuda = "a.price < b.price", rust = "|a, b| a.price < b.price"))]
pub struct Trade {
    pub price: f32,
    pub id: u32,
}

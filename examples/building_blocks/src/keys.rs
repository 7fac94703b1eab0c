//! The crate's own key type. build.rs reads this file (`mergepath_build::Kernels::keys`) and
//! writes `mergepath_user/Hit.cuh` for kernels/examples.cu: the CUDA struct
//! `mergepath_user::Hit` and the functors `Hit_less`, `Hit_greater` and `Hit_ByX`, as
//! mergepath's own kernels for `Hit` are compiled with.

/// A hit, ordered by `Less` as `score desc, id asc`; `ByX` compares `x` alone, so hits of one
/// `x` are equivalent under it. (The same definition as mergepath's own tests' `Hit`, so a
/// workspace build compiles its kernels once.)
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id asc")]
#[key(comparator(ByX, cuda = "a.x < b.x", rust = "|a, b| a.x < b.x"))]
pub struct Hit {
    pub score: f32,
    pub id: u32,
    pub x: i64,
}

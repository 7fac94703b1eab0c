//! Launch tuning (threads per CTA, values per thread), one table per algorithm, key size and
//! architecture: `kernels/tuning.tsv`. build.rs compiles the same table into the kernels.

include!("tuning_rule.rs");
include!(concat!(env!("OUT_DIR"), "/tuning_tables.rs"));

/// The launch shape of the merge kernels for keys of `key_bytes` compiled for `arch` (compute
/// capability x10, as the loaded function reports it).
pub fn merge_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(MERGE_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has merge rows")
}

/// The launch shape of the sorted-search kernels.
pub fn search_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(SEARCH_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has search rows")
}

/// The launch shape of the multiset operations (a tile takes up to one item more).
pub fn sets_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(SETS_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has sets rows")
}

/// The launch shape of the co-rank merge ladder ([`crate::merge::MergeStrategy`]): threads
/// and outputs per thread of `Basic`; threads of `Tiled` and `Circular`, whose tile is
/// [`ladder_tile`].
pub fn ladder_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(LADDER_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has ladder rows")
}

/// The tile of the `Tiled` and `Circular` ladder kernels: the shape's tile, shrunk (in whole
/// threads' worth) so the A and B tiles fit 40 KB of shared memory (`LADDER_TILE` in
/// kernels/mergepath/instantiate.cuh).
pub fn ladder_tile(arch: u32, key_bytes: usize) -> usize {
    let shape = ladder_shape(arch, key_bytes);
    let nt = shape.threads as usize;
    let fit = 20480 / key_bytes / nt * nt;
    shape.tile().min(fit).max(nt)
}

/// Tiles per CTA of the `Tiled` and `Circular` ladder kernels.
pub const LADDER_BLOCK_TILES: usize = 8;

/// The launch shape of the merge passes of a key sort: two-way passes use it as it is,
/// four-way passes with twice the threads (output tiles of two tiles); `ways` says which
/// (large sorts only: small ones always merge two ways).
pub fn sort_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(SORT_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has sort rows")
}

/// As [`sort_shape`], for sorts of key/value pairs (and indices).
pub fn sort_pairs_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(SORT_PAIRS_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has sort_pairs rows")
}

/// The launch shape of mergesort's blocksort pass; its tile is a whole number of
/// [`sort_shape`] tiles (checked when the kernels are compiled).
pub fn blocksort_shape(arch: u32, key_bytes: usize) -> LaunchShape {
    select_shape(BLOCKSORT_TUNING, arch, key_bytes).expect("kernels/tuning.tsv has blocksort rows")
}

/// The architectures the embedded kernels carry SASS for (PTX of the newest is embedded too).
pub fn compiled_archs() -> &'static [u32] {
    crate::fatbins::CUDA_ARCHS
}

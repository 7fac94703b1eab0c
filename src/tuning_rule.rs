// Shared by build.rs (which writes the kernels' compile-time table from it) and the library
// (which sizes launches with it), so both sides pick the same row. Plain `include!`d source.

/// Threads per CTA and values per thread of one kernel: a tile holds `threads * values_per_thread`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Threads per CTA.
    pub threads: u32,
    /// Items each thread handles (VT).
    pub values_per_thread: u32,
    /// Sorted runs a mergesort merge pass merges at a time, 2 or 4 (the table's optional last
    /// column; 2 where absent and for algorithms other than sorts).
    pub ways: u32,
}

impl LaunchShape {
    /// Items per tile (NV = NT * VT).
    pub const fn tile(&self) -> usize {
        self.threads as usize * self.values_per_thread as usize
    }
}

/// One row of `kernels/tuning.tsv` for one algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TuningRow {
    /// Compute capability times ten (90 for sm_90).
    pub arch: u32,
    /// Key size in bytes the row is for.
    pub key_bytes: usize,
    /// The launch shape.
    pub shape: LaunchShape,
}

/// The row a kernel compiled for `arch` with keys of `key_bytes` uses: the largest row arch
/// <= `arch` (the smallest row arch if none is), then the smallest row key size >= `key_bytes`
/// (the largest if none is). `None` only for an empty table.
pub fn select_shape(rows: &[TuningRow], arch: u32, key_bytes: usize) -> Option<LaunchShape> {
    let min_arch = rows.iter().map(|r| r.arch).min()?;
    let row_arch = rows.iter().map(|r| r.arch).filter(|&a| a <= arch).max().unwrap_or(min_arch);
    let same_arch = rows.iter().filter(|r| r.arch == row_arch);
    same_arch
        .clone()
        .filter(|r| r.key_bytes >= key_bytes)
        .min_by_key(|r| r.key_bytes)
        .or_else(|| same_arch.max_by_key(|r| r.key_bytes))
        .map(|r| r.shape)
}

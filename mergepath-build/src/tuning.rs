//! Launch tuning tables (tab-separated: algorithm, arch, key_bytes, threads, values_per_thread
//! and an optional ways) and the one rule that picks a row, written out for the kernels (CUDA
//! `constexpr` functions whose branches are the rule's answers) and for the host (the rows as
//! Rust constants, read through [`select_shape`]), so both sides agree by construction.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

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

/// One row of a tuning table for one algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TuningRow {
    /// Compute capability times ten (90 for sm_90).
    pub arch: u32,
    /// Key size in bytes the row is for.
    pub key_bytes: usize,
    /// The launch shape.
    pub shape: LaunchShape,
}

/// A tuning table: `algorithm -> rows`.
pub type TuningTable = BTreeMap<String, Vec<TuningRow>>;

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

/// Reads a tab-separated tuning table (`#` starts a comment line).
pub fn parse_tuning(path: &Path) -> Result<TuningTable, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("mergepath: reading {}: {e}", path.display()))?;
    let mut table = TuningTable::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let at = format!("mergepath: {}:{}", path.display(), i + 1);
        let num = |j: usize| -> Result<u32, String> {
            f.get(j).and_then(|s| s.parse().ok()).ok_or_else(|| format!("{at}: expected 5 or 6 fields: algorithm arch key_bytes threads values_per_thread [ways]"))
        };
        let ways = if f.len() > 5 { num(5)? } else { 2 };
        let shape = LaunchShape { threads: num(3)?, values_per_thread: num(4)?, ways };
        if !shape.threads.is_multiple_of(32) || shape.threads > 1024 || shape.values_per_thread == 0 {
            return Err(format!("{at}: threads must be a multiple of 32 up to 1024"));
        }
        if ways != 2 && ways != 4 {
            return Err(format!("{at}: ways must be 2 or 4"));
        }
        table.entry(f[0].to_string()).or_default().push(TuningRow { arch: num(1)?, key_bytes: num(2)? as usize, shape });
    }
    Ok(table)
}

/// The table as a CUDA header: `struct launch_shape { int nt, vt; }` and one
/// `constexpr launch_shape ALGORITHM_shape(int arch, int key_bytes)` per algorithm, in
/// `namespace`. Each branch is the answer of [`select_shape`]. `source` names the table in the
/// header's first line.
pub fn tuning_header(table: &TuningTable, source: &str, namespace: &str) -> String {
    let mut s = format!("// Generated from {source}. Do not edit.\n#pragma once\nnamespace {namespace} {{\nstruct launch_shape {{ int nt, vt; }};\n");
    for (alg, rows) in table {
        let mut archs: Vec<u32> = rows.iter().map(|r| r.arch).collect();
        archs.sort_unstable();
        archs.dedup();
        let mut sizes: Vec<usize> = rows.iter().map(|r| r.key_bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let by_size = |arch: u32| {
            let mut e = String::new();
            for &kb in &sizes {
                let sh = select_shape(rows, arch, kb).unwrap();
                write!(e, "key_bytes <= {kb} ? launch_shape{{{}, {}}} : ", sh.threads, sh.values_per_thread).unwrap();
            }
            let sh = select_shape(rows, arch, usize::MAX).unwrap();
            write!(e, "launch_shape{{{}, {}}}", sh.threads, sh.values_per_thread).unwrap();
            e
        };
        write!(s, "__host__ __device__ constexpr launch_shape {alg}_shape(int arch, int key_bytes) {{\n  return ").unwrap();
        for &arch in archs.iter().rev() {
            write!(s, "arch >= {arch} ? ({}) :\n         ", by_size(arch)).unwrap();
        }
        writeln!(s, "({});\n}}", by_size(0)).unwrap();
    }
    writeln!(s, "}}  // namespace {namespace}").unwrap();
    s
}

/// The table as Rust: `pub const ALGORITHM_TUNING: &[TuningRow] = &[...];` per algorithm, for
/// [`select_shape`]. Include it where `TuningRow` and `LaunchShape` (this crate's, re-exported as
/// `mergepath::tuning::{TuningRow, LaunchShape}`) are in scope. `source` names the table in a
/// first-line comment.
pub fn rust_tuning_tables(table: &TuningTable, source: &str) -> String {
    let mut s = format!("// Generated from {source}.\n");
    for (alg, rows) in table {
        writeln!(s, "pub const {}_TUNING: &[TuningRow] = &[", alg.to_uppercase()).unwrap();
        for TuningRow { arch, key_bytes, shape: LaunchShape { threads, values_per_thread, ways } } in rows {
            writeln!(
                s,
                "    TuningRow {{ arch: {arch}, key_bytes: {key_bytes}, shape: LaunchShape {{ threads: {threads}, values_per_thread: {values_per_thread}, ways: {ways} }} }},"
            )
            .unwrap();
        }
        s.push_str("];\n");
    }
    s
}

//! Build support for mergepath, shared by its build script (the built-in kernels), by
//! `#[derive(Key)]` (kernels for user key types, compiled while the derive expands) and by build
//! scripts of crates that compile kernels of their own against mergepath's device headers
//! ([`Kernels`]).
//!
//! - nvcc comes from `NVCC`, `CUDA_HOME`/`CUDA_PATH`, `PATH` or `/usr/local/cuda`; where there is
//!   none and `MERGEPATH_DOWNLOAD_CUDA=1` asks for it, the pinned CUDA 13.0 compiler wheels are
//!   installed once from PyPI into a cache under the target directory; without it, the error
//!   names what to install.
//! - Fatbins hold SASS, but dev builds on a machine without a GPU (CI) only check that
//!   mergepath's kernels compile, unoptimized, and embed none of them ([`KernelCode`];
//!   `MERGEPATH_KERNEL_CODE=sass|ptx|check` to choose).
//! - The SASS targets are `MERGEPATH_CUDA_ARCHS` (e.g. `80,90`), else the build machine's GPUs
//!   (`nvidia-smi`), else sm_90; PTX of the newest one is always embedded so newer GPUs can JIT
//!   it ([`cuda_archs`]).
//! - Launch shapes come from tuning tables (`tuning.tsv` next to the headers, and users' own in
//!   the same format), turned into CUDA `constexpr` functions and Rust constants that pick rows
//!   by one rule, [`select_shape`].
//! - The host<->device contract (constants, device structs, each entry point's parameter
//!   struct) is declared once ([`KERNEL_PARAMS`] and beside it) and written for both sides:
//!   `mergepath/contract.cuh` beside the tuning header, and Rust through [`contract_rust`].
//! - On docs.rs (`DOCS_RS`) nothing is compiled.

#![warn(missing_docs)]

mod compile;
mod contract;
mod derived;
mod kernels;
mod keys;
mod toolkit;
mod tuning;

pub use compile::{instantiation_source, KernelBuild, KernelCode};
pub use contract::{contract_header, contract_rust, Constant, EntryPoint, Field, Layout, Struct, Variants, CONSTANTS, DEVICE_STRUCTS, KERNEL_ENTRIES, KERNEL_PARAMS};
pub use derived::{derived_keys_in, record_max_elements, CudaComparator, CustomComparator, DerivedKey, KeyField, MAX_KEY_BYTES};
pub use kernels::Kernels;
pub use keys::{builtin_key, BuiltinComparator, BuiltinKey, BUILTIN_COMPARATORS, BUILTIN_KEYS};
pub use toolkit::{build_script_nvcc, cached_toolkit_nvcc, cuda_archs, find_nvcc, install_toolkit, target_dir, DOWNLOAD_VAR, TOOLKIT_CACHE, TOOLKIT_WHEELS};
pub use tuning::{parse_tuning, rust_tuning_tables, select_shape, tuning_header, LaunchShape, TuningRow, TuningTable};

use std::path::Path;

/// The environment variables that change what is compiled.
pub const BUILD_ENV: &[&str] = &["NVCC", "CUDA_HOME", "CUDA_PATH", "PATH", "MERGEPATH_CUDA_ARCHS", "MERGEPATH_DOWNLOAD_CUDA", "MERGEPATH_KERNEL_CODE", "MERGEPATH_KERNEL_CACHE", "DOCS_RS"];

/// The include root of mergepath's device headers (`mergepath/*.cuh`), which also holds
/// mergepath's launch tuning table, `tuning.tsv`.
pub fn headers_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"))
}

/// mergepath's launch tuning table (`tuning.tsv` under [`headers_dir`]).
pub fn mergepath_tuning() -> Result<TuningTable, String> {
    parse_tuning(&headers_dir().join("tuning.tsv"))
}

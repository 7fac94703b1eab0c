//! Kernels of a user's crate, compiled in its build script against mergepath's device headers.

use crate::compile::{write_if_changed, KernelBuild, KernelCode};
use crate::derived::derived_keys_in;
use crate::toolkit::{build_script_nvcc, cuda_archs, run_capture, target_dir};
use crate::tuning::{parse_tuning, rust_tuning_tables, tuning_header};
use crate::{headers_dir, mergepath_tuning, BUILD_ENV};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// CUDA sources of a crate's own, compiled from its build script against mergepath's device
/// headers (`#include <mergepath/...>`) with mergepath's compiler, architectures and flags:
///
/// ```no_run
/// // build.rs
/// mergepath_build::Kernels::new().tuning("kernels/tuning.tsv", "my_kernels").keys("src/keys.rs").compile("kernels/my.cu");
/// ```
/// ```ignore
/// // src/lib.rs
/// static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/my.fatbin"));
/// mod tuning {
///     use mergepath::tuning::{LaunchShape, TuningRow};
///     include!(concat!(env!("OUT_DIR"), "/my_kernels_tuning.rs"));
/// }
/// ```
///
/// Dev builds on a machine without a GPU embed PTX only ([`KernelCode`]; mergepath's own
/// kernels are only checked there, not embedded). Cargo reruns the build
/// script when the source, the tuning table, mergepath's headers or the
/// environment variables that change the build do; files the source includes from the crate
/// itself need `cargo:rerun-if-changed` lines of their own.
#[derive(Clone, Debug, Default)]
pub struct Kernels {
    tuning: Option<(PathBuf, String)>,
    keys: Vec<PathBuf>,
}

impl Kernels {
    /// Kernels with mergepath's headers and tuning table only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tuning table of the crate's own (`mergepath-build/kernels/tuning.tsv`'s format: algorithm, arch,
    /// key_bytes, threads, values_per_thread, optional ways), turned into constants on both
    /// sides by the same rule as mergepath's: for the kernels, `<namespace>/tuning.cuh` with
    /// `namespace::launch_shape ALGORITHM_shape(int arch, int key_bytes)` per algorithm; for the
    /// host, `$OUT_DIR/<namespace>_tuning.rs` with `pub const ALGORITHM_TUNING: &[TuningRow]`,
    /// read with `mergepath::tuning::select_shape`.
    pub fn tuning(mut self, table: impl AsRef<Path>, namespace: &str) -> Self {
        self.tuning = Some((table.as_ref().to_path_buf(), namespace.to_string()));
        self
    }

    /// Rust source files (relative to the crate) whose `#[derive(Key)]` structs the kernels
    /// use: each struct `Name` gets the header `<mergepath_user/Name.cuh>`, with its CUDA twin
    /// `mergepath_user::Name` (`Key::CUDA_TYPE`) and the functors of its comparators,
    /// `mergepath_user::Name_less`, `_greater` and one per `#[key(comparator(...))]`
    /// (`Comparator::CUDA_FUNCTOR`): the definitions mergepath's own kernels for the key are
    /// compiled with, written from the same reading of the struct as the derive's. The files
    /// are read as source, so the key may live in this crate or in one it depends on.
    pub fn keys(mut self, source: impl AsRef<Path>) -> Self {
        self.keys.push(source.as_ref().to_path_buf());
        self
    }

    /// Compiles `source` (a `.cu` file, relative to the crate) into `$OUT_DIR/<stem>.fatbin` and
    /// returns that path. On docs.rs (`DOCS_RS`) the fatbin is empty.
    ///
    /// # Panics
    ///
    /// Where nvcc or the tuning table fails, with its message (this runs in a build script).
    pub fn compile(&self, source: impl AsRef<Path>) -> PathBuf {
        self.try_compile(source.as_ref()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_compile(&self, source: &Path) -> Result<PathBuf, String> {
        let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("mergepath-build: OUT_DIR is not set (Kernels::compile runs in build scripts)")?);
        let include_dir = out_dir.join("mergepath-include");
        println!("cargo:rerun-if-changed={}", source.display());
        println!("cargo:rerun-if-changed={}", headers_dir().display());
        for var in BUILD_ENV {
            println!("cargo:rerun-if-env-changed={var}");
        }
        if let Some((table_path, namespace)) = &self.tuning {
            println!("cargo:rerun-if-changed={}", table_path.display());
            let table = parse_tuning(table_path)?;
            let name = table_path.display().to_string();
            write_if_changed(&include_dir.join(namespace).join("tuning.cuh"), &tuning_header(&table, &name, namespace))?;
            write_if_changed(&out_dir.join(format!("{namespace}_tuning.rs")), &rust_tuning_tables(&table, &name))?;
        }
        self.write_key_headers(&include_dir)?;
        let stem = source.file_stem().ok_or_else(|| format!("mergepath-build: {} has no file name", source.display()))?;
        let fatbin = out_dir.join(stem).with_extension("fatbin");
        if env::var_os("DOCS_RS").is_some() {
            fs::write(&fatbin, []).map_err(|e| format!("mergepath-build: {}: {e}", fatbin.display()))?;
            return Ok(fatbin);
        }
        let target_dir = target_dir(&out_dir);
        // A crate's own kernels are embedded by its own code: a checked build gives it PTX.
        let code = match KernelCode::for_build_script()? {
            KernelCode::Check => KernelCode::Ptx,
            code => code,
        };
        let build = KernelBuild::new(build_script_nvcc(&target_dir)?, &cuda_archs()?, code, &mergepath_tuning()?, &include_dir, &target_dir, out_dir.join("mergepath-cu"))?;
        run_capture(build.command().arg(source).arg("-o").arg(&fatbin)).map_err(|e| format!("nvcc failed on {}:\n{e}", source.display()))?;
        Ok(fatbin)
    }

    /// `mergepath_user/<Name>.cuh` under `include_dir` for each derived key of [`Kernels::keys`].
    fn write_key_headers(&self, include_dir: &Path) -> Result<(), String> {
        let mut written = std::collections::BTreeMap::new();
        for path in &self.keys {
            println!("cargo:rerun-if-changed={}", path.display());
            let shown = path.display().to_string();
            let source = fs::read_to_string(path).map_err(|e| format!("mergepath-build: {shown}: {e}"))?;
            let keys = derived_keys_in(&source).map_err(|e| format!("mergepath-build: {shown}: {e}"))?;
            for key in keys {
                let name = key.name.to_string();
                if let Some(first) = written.insert(name.clone(), shown.clone()) {
                    return Err(format!("mergepath-build: two derived keys named `{name}` ({first} and {shown}) would share the header mergepath_user/{name}.cuh"));
                }
                write_if_changed(&include_dir.join("mergepath_user").join(format!("{name}.cuh")), &key.header(&shown))?;
            }
        }
        Ok(())
    }
}

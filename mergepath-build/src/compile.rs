//! Compiling instantiations of mergepath's kernel templates with nvcc: the generated tuning
//! header, the flags, the content-hash cache of fatbins and parallel compilation.

use crate::toolkit::{build_machine_gpus, run_capture};
use crate::contract::contract_header;
use crate::tuning::{tuning_header, TuningTable};
use crate::headers_dir;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::{env, fs, thread};

/// The translation unit that stamps every entry point for one key type and comparator:
/// `declarations` (the key's and comparator's CUDA definitions, if not built in), then the
/// two typedefs `instantiate.cuh` expects.
pub fn instantiation_source(what: &str, declarations: &str, cuda_key: &str, cuda_comp: &str) -> String {
    format!(
        "// Generated: kernels for {what}.\n#include <mergepath/thread/keys.cuh>\n{declarations}\
         typedef {cuda_key} mergepath_key_t;\ntypedef {cuda_comp} mergepath_comp_t;\n#include <mergepath/instantiate.cuh>\n"
    )
}

/// Writes `contents` to `path` unless it holds them already; written aside and renamed, so a
/// concurrent build never reads half a file.
pub(crate) fn write_if_changed(path: &Path, contents: &str) -> Result<(), String> {
    let io = |e: std::io::Error| format!("mergepath: {}: {e}", path.display());
    if fs::read_to_string(path).ok().as_deref() == Some(contents) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    fs::write(&partial, contents).map_err(io)?;
    fs::rename(&partial, path).map_err(io)
}

/// What a fatbin holds for the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelCode {
    /// SASS for each architecture and PTX of the newest: nothing is compiled at run time.
    Sass,
    /// PTX of the newest architecture only: the build skips ptxas, about a third of a module's
    /// build time. The CUDA driver compiles the PTX when a module is first loaded (and keeps the
    /// result in its cache, `~/.nv/ComputeCache`), which takes minutes for a test binary's
    /// modules: for builds that will not run where they are built.
    Ptx,
}

impl KernelCode {
    /// `MERGEPATH_KERNEL_CODE` (`sass` or `ptx`) where it is set, else `Ptx` for a dev build
    /// (`dev`) on a machine without a GPU and without `MERGEPATH_CUDA_ARCHS` (CI, say: its
    /// kernels never run), and `Sass` otherwise.
    pub fn for_build(dev: bool) -> Result<Self, String> {
        match env::var("MERGEPATH_KERNEL_CODE").as_deref() {
            Ok("sass") => Ok(KernelCode::Sass),
            Ok("ptx") => Ok(KernelCode::Ptx),
            Ok(other) => Err(format!("mergepath: MERGEPATH_KERNEL_CODE={other:?}: use `sass` or `ptx`")),
            Err(_) if dev && build_machine_gpus().is_none() && env::var_os("MERGEPATH_CUDA_ARCHS").is_none() => Ok(KernelCode::Ptx),
            Err(_) => Ok(KernelCode::Sass),
        }
    }

    /// For a build script: [`KernelCode::for_build`], dev meaning a profile that does not inherit
    /// from `release` (`PROFILE=debug`: `cargo build`, `cargo test`).
    pub fn for_build_script() -> Result<Self, String> {
        Self::for_build(env::var("PROFILE").is_ok_and(|p| p == "debug"))
    }
}

/// Compiles sources against the headers in [`headers_dir`] into fatbins; instantiations of the
/// templates are cached by a hash of everything they depend on (headers, tuning table, flags,
/// compiler version, source).
pub struct KernelBuild {
    nvcc: PathBuf,
    flags: Vec<String>,
    common: DefaultHasher,
    cache_dir: PathBuf,
    gen_dir: PathBuf,
}

impl KernelBuild {
    /// Writes `include_dir/mergepath/tuning.cuh` from `tuning` (mergepath's table) and
    /// `include_dir/mergepath/contract.cuh` (the host<->device contract), and hashes the inputs. Fatbins go to `target_dir/mergepath-kernel-cache` (or
    /// `MERGEPATH_KERNEL_CACHE`), generated sources to `gen_dir`; `code` says whether the fatbins
    /// hold SASS for `archs` or PTX only.
    pub fn new(nvcc: PathBuf, archs: &[u32], code: KernelCode, tuning: &TuningTable, include_dir: &Path, target_dir: &Path, gen_dir: PathBuf) -> Result<Self, String> {
        let io = |e: std::io::Error| format!("mergepath: {e}");
        let kernels_dir = headers_dir();
        let header = tuning_header(tuning, "mergepath-build/kernels/tuning.tsv", "mergepath");
        write_if_changed(&include_dir.join("mergepath/tuning.cuh"), &header)?;
        let contract = contract_header();
        write_if_changed(&include_dir.join("mergepath/contract.cuh"), &contract)?;
        let nvcc_version = run_capture(Command::new(&nvcc).arg("--version")).map_err(|e| format!("mergepath: cannot run {}: {e}", nvcc.display()))?;
        let mut sources: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        collect_files(kernels_dir, &mut sources).map_err(io)?;
        sources.sort();
        let mut flags: Vec<String> = ["-fatbin", "-O3", "-std=c++17", "-Xptxas=-warn-spills"].map(String::from).to_vec();
        let newest = *archs.last().ok_or("mergepath: no CUDA architectures")?;
        match code {
            KernelCode::Sass => {
                for &a in archs {
                    let code = if a == newest { format!("[sm_{a},compute_{a}]") } else { format!("sm_{a}") };
                    flags.push(format!("-gencode=arch=compute_{a},code={code}"));
                }
            }
            // PTX of the oldest architecture would JIT for every GPU, but the kernels' tuning
            // rows are chosen by the architecture they were compiled for.
            KernelCode::Ptx => flags.push(format!("-gencode=arch=compute_{newest},code=compute_{newest}")),
        }
        flags.push(format!("-I{}", kernels_dir.display()));
        flags.push(format!("-I{}", include_dir.display()));
        let mut common = DefaultHasher::new();
        for (path, bytes) in &sources {
            path.strip_prefix(kernels_dir).unwrap_or(path).hash(&mut common);
            bytes.hash(&mut common);
        }
        header.hash(&mut common);
        contract.hash(&mut common);
        archs.hash(&mut common);
        nvcc_version.hash(&mut common);
        // Fatbins are named by a hash of everything that goes into them (not paths), so builds in
        // other target directories (trybuild's) can share one cache: MERGEPATH_KERNEL_CACHE.
        let cache_dir = env::var_os("MERGEPATH_KERNEL_CACHE").map(PathBuf::from).unwrap_or_else(|| target_dir.join("mergepath-kernel-cache"));
        fs::create_dir_all(&cache_dir).map_err(io)?;
        fs::create_dir_all(&gen_dir).map_err(io)?;
        Ok(KernelBuild { nvcc, flags, common, cache_dir, gen_dir })
    }

    /// Adds `dir` to the include path, for sources with headers of their own (`#include
    /// "x.cuh"`), and its headers (every file in it but `.cu` sources) to what the cache hashes.
    pub fn include_dir(mut self, dir: &Path) -> Result<Self, String> {
        let mut files = Vec::new();
        collect_files(dir, &mut files).map_err(|e| format!("mergepath: {}: {e}", dir.display()))?;
        files.sort();
        for (path, bytes) in files.iter().filter(|(path, _)| path.extension().is_none_or(|e| e != "cu")) {
            path.strip_prefix(dir).unwrap_or(path).hash(&mut self.common);
            bytes.hash(&mut self.common);
        }
        self.flags.push(format!("-I{}", dir.display()));
        Ok(self)
    }

    /// nvcc with the flags (fatbin, architectures, include directories); the source and
    /// `-o` output follow.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.nvcc);
        cmd.args(&self.flags);
        cmd
    }

    /// Where the fatbin of `source` (named `name`) is cached.
    pub fn fatbin_path(&self, name: &str, source: &str) -> PathBuf {
        let mut h = self.common.clone();
        source.hash(&mut h);
        self.cache_dir.join(format!("{name}-{:016x}.fatbin", h.finish()))
    }

    /// Compiles the `(name, source)` units whose fatbin is not cached yet, `workers` at a time.
    /// Returns the failures as `(name, nvcc's output)`.
    pub fn compile(&self, units: &[(String, String)], workers: usize) -> Vec<(String, String)> {
        let queue = Mutex::new(units.iter().filter(|(n, s)| !self.fatbin_path(n, s).exists()).collect::<Vec<_>>());
        let failures = Mutex::new(Vec::new());
        thread::scope(|scope| {
            for _ in 0..workers.max(1) {
                scope.spawn(|| loop {
                    let Some((name, source)) = queue.lock().unwrap().pop() else { break };
                    let fatbin = self.fatbin_path(name, source);
                    let cu = self.gen_dir.join(format!("{name}-{}.cu", std::process::id()));
                    let partial = fatbin.with_extension(format!("partial-{}", std::process::id()));
                    let result = fs::write(&cu, source)
                        .map_err(|e| e.to_string())
                        .and_then(|()| run_capture(self.command().arg(&cu).arg("-o").arg(&partial)))
                        .and_then(|_| fs::rename(&partial, &fatbin).map_err(|e| e.to_string()));
                    if let Err(e) = result {
                        failures.lock().unwrap().push((name.clone(), e));
                    }
                });
            }
        });
        failures.into_inner().unwrap()
    }
}

fn collect_files(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push((path.clone(), fs::read(&path)?));
        }
    }
    Ok(())
}

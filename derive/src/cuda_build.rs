// Compiling instantiations of the kernel templates in `kernels/` with nvcc: finding (or
// installing) the compiler, the generated tuning header, the flags, the content-hash cache of
// fatbins and parallel compilation. Shared, through `include!`, by mergepath's build.rs (the
// built-in key types) and by `#[derive(Key)]` (user key types), so both compile alike. The
// includer must also `include!` `src/tuning_rule.rs` (TuningRow, LaunchShape, select_shape).

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::{env, fs, thread};

/// The pinned compiler set (driver CUDA 13.0); nvvm must be pinned too or pip pulls a newer one
/// whose PTX the 13.0 ptxas rejects.
pub const TOOLKIT_WHEELS: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-cccl==13.0.85",
];
/// Where the wheels go, under the target directory.
pub const TOOLKIT_CACHE: &str = "mergepath-cuda-13.0.88";
const DEFAULT_ARCHS: &[u32] = &[80, 90];

/// The environment variables that change what is compiled.
pub const BUILD_ENV: &[&str] = &["NVCC", "CUDA_HOME", "CUDA_PATH", "PATH", "MERGEPATH_CUDA_ARCHS", "MERGEPATH_NO_TOOLKIT_DOWNLOAD", "MERGEPATH_KERNEL_CACHE", "DOCS_RS"];

/// `<target>` (or `<target>/<triple>`) from `<...>/<profile>/build/<pkg>-<hash>/out`.
pub fn target_dir(out_dir: &Path) -> PathBuf {
    out_dir.ancestors().nth(4).unwrap_or(out_dir).to_path_buf()
}

/// nvcc from `NVCC`, `CUDA_HOME`/`CUDA_PATH`, `PATH` or `/usr/local/cuda`.
pub fn find_nvcc() -> Result<Option<PathBuf>, String> {
    let exe = |dir: PathBuf| Some(dir.join("nvcc")).filter(|p| p.is_file());
    if let Some(p) = env::var_os("NVCC").map(PathBuf::from) {
        return if p.is_file() { Ok(Some(p)) } else { Err(format!("mergepath: NVCC={} is not a file", p.display())) };
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(p) = env::var_os(var).and_then(|d| exe(PathBuf::from(d).join("bin"))) {
            return Ok(Some(p));
        }
    }
    Ok(env::var_os("PATH")
        .and_then(|paths| env::split_paths(&paths).find_map(exe))
        .or_else(|| exe(PathBuf::from("/usr/local/cuda/bin"))))
}

/// The nvcc of the pinned wheels under `target_dir`, if they are installed.
pub fn cached_toolkit_nvcc(target_dir: &Path) -> Option<PathBuf> {
    Some(target_dir.join(TOOLKIT_CACHE).join("nvidia/cu13/bin/nvcc")).filter(|p| p.is_file())
}

/// Installs the pinned compiler wheels into `<target>/mergepath-cuda-13.0.88` once (unless
/// `MERGEPATH_NO_TOOLKIT_DOWNLOAD` is set) and returns its nvcc; `warn` reports what it does.
pub fn install_toolkit(target_dir: &Path, warn: impl Fn(&str)) -> Result<PathBuf, String> {
    let dir = target_dir.join(TOOLKIT_CACHE);
    if let Some(nvcc) = cached_toolkit_nvcc(target_dir) {
        warn(&format!("mergepath: no CUDA toolkit found; using the CUDA 13.0 compiler cached in {}", dir.display()));
        return Ok(nvcc);
    }
    if env::var("MERGEPATH_NO_TOOLKIT_DOWNLOAD").is_ok_and(|v| v != "0" && !v.is_empty()) {
        return Err(format!(
            "mergepath: nvcc not found (looked at NVCC, CUDA_HOME, CUDA_PATH, PATH and /usr/local/cuda) and \
             MERGEPATH_NO_TOOLKIT_DOWNLOAD is set. Install the CUDA toolkit (nvcc 12.x or 13.x), or \
             `pip install {}` and set NVCC to site-packages/nvidia/cu13/bin/nvcc.",
            TOOLKIT_WHEELS.join(" ")
        ));
    }
    warn(&format!("mergepath: no CUDA toolkit found; installing the CUDA 13.0 compiler from PyPI into {}", dir.display()));
    let staging = target_dir.join(format!("{TOOLKIT_CACHE}.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
        .ok_or("mergepath: nvcc not found and no python3 to install it with; install the CUDA toolkit or set NVCC")?;
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--target"]).arg(&staging).args(TOOLKIT_WHEELS);
    run_capture(&mut cmd).map_err(|e| {
        format!("mergepath: installing the CUDA compiler wheels failed ({e}); install the CUDA toolkit, or set NVCC, or MERGEPATH_NO_TOOLKIT_DOWNLOAD=1 for this message instead")
    })?;
    // Another build may have finished first; either copy is complete.
    if fs::rename(&staging, &dir).is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    cached_toolkit_nvcc(target_dir).ok_or_else(|| format!("mergepath: the CUDA compiler wheels installed, but {}/nvidia/cu13/bin/nvcc is missing", dir.display()))
}

/// SASS targets from `MERGEPATH_CUDA_ARCHS` (e.g. `80,90`), sm_80 and sm_90 by default.
pub fn cuda_archs() -> Result<Vec<u32>, String> {
    let Ok(spec) = env::var("MERGEPATH_CUDA_ARCHS") else { return Ok(DEFAULT_ARCHS.to_vec()) };
    let mut archs = Vec::new();
    for s in spec.split(|c: char| c == ',' || c == ';' || c.is_whitespace()).filter(|s| !s.is_empty()) {
        let s = s.trim_start_matches("sm_").trim_start_matches("compute_");
        archs.push(s.parse().map_err(|_| format!("mergepath: MERGEPATH_CUDA_ARCHS: {s:?} is not an architecture like 80 or 90"))?);
    }
    archs.sort_unstable();
    archs.dedup();
    if archs.is_empty() {
        return Err("mergepath: MERGEPATH_CUDA_ARCHS is empty".into());
    }
    Ok(archs)
}

/// `algorithm -> rows`, from the tab-separated tuning table.
pub fn parse_tuning(path: &Path) -> Result<BTreeMap<String, Vec<TuningRow>>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("mergepath: reading {}: {e}", path.display()))?;
    let mut table: BTreeMap<String, Vec<TuningRow>> = BTreeMap::new();
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
        if shape.threads % 32 != 0 || shape.threads > 1024 || shape.values_per_thread == 0 {
            return Err(format!("{at}: threads must be a multiple of 32 up to 1024"));
        }
        if ways != 2 && ways != 4 {
            return Err(format!("{at}: ways must be 2 or 4"));
        }
        table.entry(f[0].to_string()).or_default().push(TuningRow { arch: num(1)?, key_bytes: num(2)? as usize, shape });
    }
    Ok(table)
}

/// The table as `constexpr launch_shape NAME_shape(int arch, int key_bytes)` functions. Each
/// branch is the answer of `select_shape`, so device and host agree by construction.
pub fn tuning_header(table: &BTreeMap<String, Vec<TuningRow>>) -> String {
    let mut s = String::from(
        "// Generated from kernels/tuning.tsv. Do not edit.\n#pragma once\nnamespace mergepath {\n\
         struct launch_shape { int nt, vt; };\n",
    );
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
    s.push_str("}  // namespace mergepath\n");
    s
}

/// The translation unit that stamps every entry point for one key type and comparator:
/// `declarations` (the key's and comparator's CUDA definitions, if not built in), then the
/// two typedefs `instantiate.cuh` expects.
pub fn instantiation_source(what: &str, declarations: &str, cuda_key: &str, cuda_comp: &str) -> String {
    format!(
        "// Generated: kernels for {what}.\n#include <mergepath/thread/keys.cuh>\n{declarations}\
         typedef {cuda_key} mergepath_key_t;\ntypedef {cuda_comp} mergepath_comp_t;\n#include <mergepath/instantiate.cuh>\n"
    )
}

/// Compiles instantiations of the templates in `kernels_dir` into fatbins cached by a hash of
/// everything they depend on (headers, tuning table, flags, compiler version, source).
pub struct KernelBuild {
    nvcc: PathBuf,
    flags: Vec<String>,
    common: DefaultHasher,
    cache_dir: PathBuf,
    gen_dir: PathBuf,
}

impl KernelBuild {
    /// Writes `include_dir/mergepath/tuning.cuh` from `tuning` and hashes the inputs. Fatbins go
    /// to `target_dir/mergepath-kernel-cache`, generated sources to `gen_dir`.
    pub fn new(
        nvcc: PathBuf,
        archs: &[u32],
        kernels_dir: &Path,
        tuning: &BTreeMap<String, Vec<TuningRow>>,
        include_dir: &Path,
        target_dir: &Path,
        gen_dir: PathBuf,
    ) -> Result<Self, String> {
        let io = |e: std::io::Error| format!("mergepath: {e}");
        let header = tuning_header(tuning);
        fs::create_dir_all(include_dir.join("mergepath")).map_err(io)?;
        let header_path = include_dir.join("mergepath/tuning.cuh");
        if fs::read_to_string(&header_path).ok().as_deref() != Some(header.as_str()) {
            // Written aside and renamed, so a concurrent build never reads half a header.
            let partial = header_path.with_extension(format!("partial-{}", std::process::id()));
            fs::write(&partial, &header).map_err(io)?;
            fs::rename(&partial, &header_path).map_err(io)?;
        }
        let nvcc_version = run_capture(Command::new(&nvcc).arg("--version")).map_err(|e| format!("mergepath: cannot run {}: {e}", nvcc.display()))?;
        let mut sources: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        collect_files(kernels_dir, &mut sources).map_err(io)?;
        sources.sort();
        let mut flags: Vec<String> = ["-fatbin", "-O3", "-std=c++17", "-Xptxas=-warn-spills"].map(String::from).to_vec();
        let newest = *archs.last().ok_or("mergepath: no CUDA architectures")?;
        for &a in archs {
            let code = if a == newest { format!("[sm_{a},compute_{a}]") } else { format!("sm_{a}") };
            flags.push(format!("-gencode=arch=compute_{a},code={code}"));
        }
        flags.push(format!("-I{}", kernels_dir.display()));
        flags.push(format!("-I{}", include_dir.display()));
        let mut common = DefaultHasher::new();
        for (path, bytes) in &sources {
            path.strip_prefix(kernels_dir).unwrap_or(path).hash(&mut common);
            bytes.hash(&mut common);
        }
        header.hash(&mut common);
        archs.hash(&mut common);
        nvcc_version.hash(&mut common);
        // Fatbins are named by a hash of everything that goes into them (not paths), so builds in
        // other target directories (trybuild's) can share one cache: MERGEPATH_KERNEL_CACHE.
        let cache_dir = env::var_os("MERGEPATH_KERNEL_CACHE").map(PathBuf::from).unwrap_or_else(|| target_dir.join("mergepath-kernel-cache"));
        fs::create_dir_all(&cache_dir).map_err(io)?;
        fs::create_dir_all(&gen_dir).map_err(io)?;
        Ok(KernelBuild { nvcc, flags, common, cache_dir, gen_dir })
    }

    /// The compiler and its flags (fatbin, architectures, include directories), for crates that
    /// compile their own kernels against the same headers (build.rs exports them).
    pub fn command(&self) -> (&Path, &[String]) {
        (&self.nvcc, &self.flags)
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
                        .and_then(|()| run_capture(Command::new(&self.nvcc).args(&self.flags).arg(&cu).arg("-o").arg(&partial)))
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

/// Runs a command; Ok(stdout) on success, Err(its output) otherwise.
fn run_capture(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("{cmd:?} exited with {}\n{}{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

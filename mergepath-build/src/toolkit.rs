//! Finding (or installing) nvcc, and the architectures to compile for.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

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
/// The architectures of a build that neither names them nor finds a GPU: the H100 and H200
/// (PTX of the newest is embedded too, so newer GPUs JIT it).
const DEFAULT_ARCHS: &[u32] = &[90];
/// The oldest architecture the kernels support, and the newest the pinned compiler targets.
const ARCH_RANGE: std::ops::RangeInclusive<u32> = 80..=121;

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

/// The variable that asks for the compiler download where no nvcc is found.
pub const DOWNLOAD_VAR: &str = "MERGEPATH_DOWNLOAD_CUDA";

/// Installs the pinned compiler wheels into `<target>/mergepath-cuda-13.0.88` once, if asked
/// to (`MERGEPATH_DOWNLOAD_CUDA=1`), and returns its nvcc; without it, an error naming what to
/// install. A copy installed earlier is used either way. `warn` reports what it does.
pub fn install_toolkit(target_dir: &Path, warn: impl Fn(&str)) -> Result<PathBuf, String> {
    let dir = target_dir.join(TOOLKIT_CACHE);
    if let Some(nvcc) = cached_toolkit_nvcc(target_dir) {
        warn(&format!("mergepath: no CUDA toolkit found; using the CUDA 13.0 compiler cached in {}", dir.display()));
        return Ok(nvcc);
    }
    if !env::var(DOWNLOAD_VAR).is_ok_and(|v| v != "0" && !v.is_empty()) {
        return Err(format!(
            "mergepath: nvcc not found (looked at NVCC, CUDA_HOME, CUDA_PATH, PATH and /usr/local/cuda). \
             Install the CUDA toolkit (nvcc 12.x or 13.x) and set NVCC or CUDA_HOME; or `pip install {}` \
             and set NVCC to site-packages/nvidia/cu13/bin/nvcc; or set {DOWNLOAD_VAR}=1 to have \
             mergepath install those wheels (python3 -m pip, about 270 MB) into {}.",
            TOOLKIT_WHEELS.join(" "),
            dir.display()
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
        format!("mergepath: installing the CUDA compiler wheels failed ({e}); install the CUDA toolkit and set NVCC or CUDA_HOME")
    })?;
    // Another build may have finished first; either copy is complete.
    if fs::rename(&staging, &dir).is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    cached_toolkit_nvcc(target_dir).ok_or_else(|| format!("mergepath: the CUDA compiler wheels installed, but {}/nvidia/cu13/bin/nvcc is missing", dir.display()))
}

/// nvcc for a build script: [`find_nvcc`]'s, else the pinned compiler, installed under
/// `target_dir` if it is not there yet and `MERGEPATH_DOWNLOAD_CUDA=1` asks for it (a cargo
/// warning says so).
pub fn build_script_nvcc(target_dir: &Path) -> Result<PathBuf, String> {
    match find_nvcc()? {
        Some(nvcc) => Ok(nvcc),
        None => install_toolkit(target_dir, |msg| println!("cargo:warning={msg}")),
    }
}

/// The SASS targets: `MERGEPATH_CUDA_ARCHS` (e.g. `80,90`); else the architectures of the GPUs
/// `nvidia-smi` lists on the build machine (sm_80 to sm_121), so a build gets its own GPU's code
/// and nothing more; else sm_90. PTX of the newest is embedded too.
pub fn cuda_archs() -> Result<Vec<u32>, String> {
    let Ok(spec) = env::var("MERGEPATH_CUDA_ARCHS") else { return Ok(build_machine_gpus().clone().unwrap_or_else(|| DEFAULT_ARCHS.to_vec())) };
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

/// The architectures of the build machine's GPUs that the kernels support, asked of
/// `nvidia-smi` once per process (a derive expands once per key type); None without a GPU.
pub(crate) fn build_machine_gpus() -> &'static Option<Vec<u32>> {
    static DETECTED: std::sync::OnceLock<Option<Vec<u32>>> = std::sync::OnceLock::new();
    DETECTED.get_or_init(|| {
        let out = run_capture(Command::new("nvidia-smi").args(["--query-gpu=compute_cap", "--format=csv,noheader"])).ok()?;
        let archs = supported_archs(&out);
        (!archs.is_empty()).then_some(archs)
    })
}

/// The architectures in `nvidia-smi --query-gpu=compute_cap` output (`9.0` a line) that the
/// kernels support, sorted, each once.
fn supported_archs(compute_caps: &str) -> Vec<u32> {
    let mut archs: Vec<u32> = compute_caps
        .lines()
        .filter_map(|l| {
            let (major, minor) = l.trim().split_once('.')?;
            Some(major.parse::<u32>().ok()? * 10 + minor.parse::<u32>().ok()?)
        })
        .filter(|a| ARCH_RANGE.contains(a))
        .collect();
    archs.sort_unstable();
    archs.dedup();
    archs
}

/// Runs a command; Ok(stdout) on success, Err(its output) otherwise.
pub(crate) fn run_capture(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("{cmd:?} exited with {}\n{}{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

#[cfg(test)]
mod tests {
    use super::supported_archs;

    #[test]
    fn archs_of_the_gpus_nvidia_smi_lists() {
        assert_eq!(supported_archs("9.0\n8.0\n9.0\n"), [80, 90]);
        assert_eq!(supported_archs("12.0\n"), [120]);
        // Older than the kernels support, newer than the compiler targets, or not a number.
        assert_eq!(supported_archs("7.5\n13.0\nN/A\n\n"), Vec::<u32>::new());
    }
}

//! Compiles every CUDA program in benches/tune/ (the tuning sweeps and experiments, run by hand
//! on the GPU machine) against the current device headers, with mergepath-build's compiler,
//! architectures, flags and fatbin cache, so a header change that breaks one fails here with
//! nvcc's message, and unchanged programs are not recompiled. They are compiled, never run.

use mergepath_build::{build_script_nvcc, cuda_archs, mergepath_tuning, KernelBuild, KernelCode};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The target directory: this test binary is `<target>/<profile>/deps/<name>`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors().nth(3).expect("test binary under <target>/<profile>/deps").to_path_buf()
}

#[test]
fn tune_programs_compile() {
    let tune = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tune");
    let target = target_dir();
    let work = target.join("tune-build");
    let build = KernelBuild::new(
        build_script_nvcc(&target).unwrap(),
        &cuda_archs().unwrap(),
        KernelCode::for_build(cfg!(debug_assertions)).unwrap(),
        &mergepath_tuning().unwrap(),
        &work.join("include"),
        &target,
        work.join("cu"),
    )
    .and_then(|build| build.include_dir(&tune))
    .unwrap();
    let mut units = Vec::new();
    for entry in fs::read_dir(&tune).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cu") {
            let stem = path.file_stem().unwrap().to_string_lossy();
            // `#line`: nvcc's messages name the file in benches/tune, not the generated copy.
            let source = format!("#line 1 \"{}\"\n{}", path.display(), fs::read_to_string(&path).unwrap());
            units.push((format!("tune_{stem}"), source));
        }
    }
    units.sort();
    assert!(!units.is_empty(), "no .cu files in {}", tune.display());
    let cached = units.iter().filter(|(name, source)| build.fatbin_path(name, source).exists()).count();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let start = Instant::now();
    let failures = build.compile(&units, workers);
    println!("benches/tune: {} programs ({cached} cached) compiled in {:.1?}", units.len(), start.elapsed());
    let text: Vec<String> = failures.into_iter().map(|(name, e)| format!("{name}:\n{e}")).collect();
    assert!(text.is_empty(), "benches/tune programs do not compile:\n{}", text.join("\n"));
}

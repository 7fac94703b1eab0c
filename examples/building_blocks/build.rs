//! Compiles kernels/examples.cu against mergepath's device headers with the compiler and flags
//! mergepath's own build exports (DEP_MERGEPATH_NVCC, DEP_MERGEPATH_NVCC_FLAGS: fatbin for the
//! same architectures, -I for its headers), again whenever those headers change
//! (DEP_MERGEPATH_HEADERS).

use std::{env, path::PathBuf, process::Command};

fn main() {
    println!("cargo:rerun-if-changed=kernels/examples.cu");
    for dir in env::var("DEP_MERGEPATH_HEADERS").expect("mergepath exports its header folders").split('\t') {
        println!("cargo:rerun-if-changed={dir}");
    }
    let nvcc = env::var("DEP_MERGEPATH_NVCC").expect("mergepath exports its nvcc (DEP_MERGEPATH_NVCC)");
    let flags = env::var("DEP_MERGEPATH_NVCC_FLAGS").expect("mergepath exports its nvcc flags");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("examples.fatbin");
    let output = Command::new(&nvcc)
        .args(flags.split('\t'))
        .arg("kernels/examples.cu")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {nvcc}: {e}"));
    if !output.status.success() {
        panic!("nvcc failed on kernels/examples.cu:\n{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    }
}

//! Tells the macro where the target directory is: the pinned CUDA compiler that mergepath's
//! build script installs and the fatbin cache live there.

use std::path::{Path, PathBuf};

fn main() {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // `<target>/<profile>/build/<pkg>-<hash>/out`, as `mergepath_build::target_dir`.
    let target: &Path = out_dir.ancestors().nth(4).unwrap_or(&out_dir);
    println!("cargo:rustc-env=MERGEPATH_DERIVE_TARGET_DIR={}", target.display());
    println!("cargo:rerun-if-changed=build.rs");
}

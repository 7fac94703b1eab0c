//! `#[derive(Key)]`'s compile errors, each pointing at the attribute or field at fault
//! (trybuild; needs cargo, so it runs in CI and is skipped on the GPU machine).

#[test]
fn derive_key_errors() {
    // The cases build mergepath in trybuild's own target directory; give that build the
    // compiler this one found or installed, so it does not install it again.
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().to_path_buf();
    let cached = target.join("mergepath-cuda-13.0.88/nvidia/cu13/bin/nvcc");
    if std::env::var_os("NVCC").is_none() && cached.is_file() {
        std::env::set_var("NVCC", &cached);
    }
    // And this build's kernel cache (content-hashed), so it does not compile them again.
    if std::env::var_os("MERGEPATH_KERNEL_CACHE").is_none() {
        std::env::set_var("MERGEPATH_KERNEL_CACHE", target.join("mergepath-kernel-cache"));
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

//! Compile errors: `#[derive(Key)]`'s, each pointing at the attribute or field at fault, and a
//! kernel entry launched with another entry's parameter struct (trybuild; needs cargo, so it
//! runs in CI and is skipped on the GPU machine).

#[test]
fn derive_key_errors() {
    compile_fail("tests/ui/*.rs");
}

/// The contract's generated entry accessors (`mergepath_build::contract_rust`, as the library
/// includes them) are typed by their parameter structs: an entry given another entry's struct
/// does not compile (`tests/ui_contract/`).
#[test]
fn kernel_entries_take_their_own_parameter_structs() {
    let generated = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("contract.rs");
    std::fs::write(&generated, mergepath_build::contract_rust()).unwrap();
    std::env::set_var("MERGEPATH_CONTRACT_RS", &generated);
    compile_fail("tests/ui_contract/*.rs");
}

/// Runs trybuild's compile-fail cases of `glob`, one run at a time (the cases share trybuild's
/// project directory). The cases build mergepath in trybuild's own target directory: that build
/// gets the compiler this one found or installed and this build's kernel cache
/// (content-hashed), so it neither installs the compiler nor compiles the kernels again.
fn compile_fail(glob: &str) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().to_path_buf();
    let cached = target.join("mergepath-cuda-13.0.88/nvidia/cu13/bin/nvcc");
    if std::env::var_os("NVCC").is_none() && cached.is_file() {
        std::env::set_var("NVCC", &cached);
    }
    if std::env::var_os("MERGEPATH_KERNEL_CACHE").is_none() {
        std::env::set_var("MERGEPATH_KERNEL_CACHE", target.join("mergepath-kernel-cache"));
    }
    trybuild::TestCases::new().compile_fail(glob);
}

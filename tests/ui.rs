//! Compile errors: `#[derive(Key)]`'s, each pointing at the attribute or field at fault, and a
//! kernel entry launched with another entry's parameter struct (trybuild; needs cargo, so it
//! runs in CI and is skipped on the GPU machine).

/// One trybuild run at a time: the cases share trybuild's project directory.
static TRYBUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn derive_key_errors() {
    let _one_at_a_time = TRYBUILD.lock().unwrap_or_else(|p| p.into_inner());
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

/// The contract's generated entry accessors (`mergepath_build::contract_rust`, as the library
/// includes them) are typed by their parameter structs: an entry given another entry's struct
/// does not compile (`tests/ui_contract/`).
#[test]
fn kernel_entries_take_their_own_parameter_structs() {
    let _one_at_a_time = TRYBUILD.lock().unwrap_or_else(|p| p.into_inner());
    let generated = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("contract.rs");
    std::fs::write(&generated, mergepath_build::contract_rust()).unwrap();
    std::env::set_var("MERGEPATH_CONTRACT_RS", &generated);
    trybuild::TestCases::new().compile_fail("tests/ui_contract/*.rs");
}

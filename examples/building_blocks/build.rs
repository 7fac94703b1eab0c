//! Compiles kernels/examples.cu against mergepath's device headers with mergepath's compiler,
//! architectures and flags; turns kernels/tuning.tsv into the kernels' and the host's launch
//! shape (`building_blocks/tuning.cuh`, `$OUT_DIR/building_blocks_tuning.rs`); and writes the
//! CUDA twins of the derived keys in src/keys.rs (`mergepath_user/Hit.cuh`).

fn main() {
    mergepath_build::Kernels::new().tuning("kernels/tuning.tsv", "building_blocks").keys("src/keys.rs").compile("kernels/examples.cu");
}

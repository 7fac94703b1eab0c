//! Compiles kernels/examples.cu against mergepath's device headers with mergepath's compiler,
//! architectures and flags, and turns kernels/tuning.tsv into the kernels' and the host's
//! launch shape (`building_blocks/tuning.cuh`, `$OUT_DIR/building_blocks_tuning.rs`).

fn main() {
    mergepath_build::Kernels::new().tuning("kernels/tuning.tsv", "building_blocks").compile("kernels/examples.cu");
}

//! What the two example programs share: their kernels (kernels/examples.cu, compiled by
//! build.rs against mergepath's device headers) and their launch shape (kernels/tuning.tsv),
//! loaded into a mergepath [`Gpu`]'s context.

use mergepath::cudarc::driver::{CudaFunction, CudaModule, LaunchConfig};
use mergepath::cudarc::nvrtc::Ptx;
use mergepath::Gpu;
use std::sync::Arc;

mod tuning {
    use mergepath::tuning::{LaunchShape, TuningRow};
    include!(concat!(env!("OUT_DIR"), "/building_blocks_tuning.rs"));
}
// One row, for every architecture: the shape is a constant on both sides.
const _: () = assert!(tuning::EXAMPLES_TUNING.len() == 1, "kernels/tuning.tsv: one row");

/// Threads per CTA and items per thread of the kernels (`NT`, `VT` in kernels/examples.cu).
pub const NT: u32 = tuning::EXAMPLES_TUNING[0].shape.threads;
pub const VT: usize = tuning::EXAMPLES_TUNING[0].shape.values_per_thread as usize;
/// Items per tile.
pub const NV: usize = NT as usize * VT;

static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/examples.fatbin"));

/// The example kernels, loaded once.
pub struct Kernels {
    module: Arc<CudaModule>,
}

impl Kernels {
    pub fn load(gpu: &Gpu) -> Result<Self, Box<dyn std::error::Error>> {
        Ok(Kernels { module: gpu.context().load_module(Ptx::from_binary(FATBIN.to_vec()))? })
    }

    pub fn function(&self, name: &str) -> Result<CudaFunction, Box<dyn std::error::Error>> {
        Ok(self.module.load_function(name)?)
    }
}

/// One thread per item, `threads` per CTA.
pub fn grid(items: usize, threads: u32) -> LaunchConfig {
    let ctas = u32::try_from(items.div_ceil(threads as usize).max(1)).expect("grid fits 2^32 CTAs");
    LaunchConfig { grid_dim: (ctas, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

/// The GPU, or `None` after a skip line (an error instead when `MERGEPATH_REQUIRE_GPU=1`).
pub fn gpu() -> Result<Option<Gpu>, Box<dyn std::error::Error>> {
    match Gpu::new(0) {
        Ok(gpu) => Ok(Some(gpu)),
        Err(e) if std::env::var("MERGEPATH_REQUIRE_GPU").as_deref() != Ok("1") => {
            eprintln!("skipped: no usable GPU ({e})");
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// SplitMix64, for the examples' inputs.
pub struct Rng(pub u64);
impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

//! What the example programs share: their kernels (kernels/examples.cu, compiled by
//! build.rs against mergepath's device headers) and their launch shape (kernels/tuning.tsv),
//! loaded into a mergepath [`Gpu`]'s context.

use mergepath::partition::TileShape;
use mergepath::{Gpu, Module};

mod tuning {
    use mergepath::tuning::{LaunchShape, TuningRow};
    include!(concat!(env!("OUT_DIR"), "/building_blocks_tuning.rs"));
}
// One row, for every architecture: the shape is a constant on both sides.
const _: () = assert!(tuning::EXAMPLES_TUNING.len() == 1, "kernels/tuning.tsv: one row");

/// The shape of the kernels' tiles (`NT`, `VT` in kernels/examples.cu).
pub const TILE: TileShape = TileShape {
    threads: tuning::EXAMPLES_TUNING[0].shape.threads,
    items_per_thread: tuning::EXAMPLES_TUNING[0].shape.values_per_thread,
};
/// Kernels of one thread per item (partitions), in CTAs of 128 threads.
pub const THREAD_PER_ITEM: TileShape = TileShape { threads: 128, items_per_thread: 1 };
/// Kernels of one thread per item (per-row steps), in CTAs of 256 threads.
pub const THREAD_PER_ITEM_256: TileShape = TileShape { threads: 256, items_per_thread: 1 };

static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/examples.fatbin"));

/// The example kernels, loaded into `gpu`'s context.
pub fn kernels(gpu: &Gpu) -> mergepath::Result<Module> {
    gpu.load_module(FATBIN)
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

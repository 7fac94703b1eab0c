//! What the example programs share: their kernels (kernels/examples.cu, compiled by
//! build.rs against mergepath's device headers), their launch shape (kernels/tuning.tsv),
//! loaded into a mergepath [`Gpu`]'s context, and the crate's own key type ([`Hit`]).

use mergepath::cudarc::driver::{CudaSlice, PushKernelArg};
use mergepath::partition::TileShape;
use mergepath::{Comparator, Gpu, Key, Module};

mod keys;
pub use keys::{ByX, Hit};

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

/// `counts[i]` = the number of keys of `b` equivalent to `a[i]` under `comp` (both sorted by
/// it), by the kernel `entry` of kernels/examples.cu: `merge_join_count_tile` instantiated for
/// `K` and `C`'s functor (`merge_join_count` for `u32` and `Less`,
/// `merge_join_count_hit_by_x` for [`Hit`] and [`ByX`]).
pub fn merge_join_count<K: Key, C: Comparator<K>>(
    gpu: &Gpu,
    kernels: &Module,
    entry: &str,
    a: &CudaSlice<K>,
    b: &CudaSlice<K>,
    comp: C,
) -> Result<CudaSlice<u32>, Box<dyn std::error::Error>> {
    let mut counts = gpu.alloc_zeros::<u32>(a.len())?;
    if a.is_empty() {
        return Ok(counts);
    }
    let total = a.len() + b.len();
    let mut partitions = gpu.alloc_zeros::<i64>(mergepath::partition_count(total, TILE.tile()))?;
    mergepath::merge_path_partitions_into(gpu, a, b, TILE.tile(), comp, &mut partitions)?;
    {
        // The checked buffers hold their borrows until the launch is enqueued.
        let (a_in, b_in) = (gpu.check_input("a", a)?, gpu.check_input("b", b)?);
        let out = gpu.check_output("counts", &mut counts, a.len(), &[&a_in, &b_in])?;
        let (a_count, b_count) = (a_in.len as i64, b_in.len as i64);
        let func = kernels.function(entry)?;
        let mut launch = gpu.stream().launch_builder(&func);
        launch.arg(&a_in.ptr).arg(&a_count).arg(&b_in.ptr).arg(&b_count).arg(&partitions).arg(&out.ptr);
        // SAFETY: `entry` is merge_join_count_tile for K (whose CUDA twin has K's layout: the
        // derive checks it on both sides) and C, whose arguments these are; whole allocations
        // are aligned for any key; one CTA of NT threads per tile of NV merged items, the
        // partitions (spacing NV, ties to A, by `comp`) cover every tile, and `counts` holds
        // one entry per key of A.
        unsafe { launch.launch(TILE.launch_config(total)?) }?;
    }
    Ok(counts)
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

//! Sorts keys in host memory across every GPU of the machine (`mergepath::multi`): each GPU
//! sorts a piece, the GPUs find the global splitters together and exchange slices over NCCL,
//! and each writes its part of the sorted order back. With one GPU the same steps run with
//! four ranks sharing it (every step but NCCL's transfers), so the example runs anywhere
//! there is a GPU.
//!
//! `cargo run --release --example multi_gpu` (NCCL is loaded at run time as `libnccl.so`: see
//! the README's "Several GPUs"; set `NCCL_NVLS_ENABLE=0` on shared machines).

use mergepath::multi::GpuGroup;
use mergepath::{Gpu, Less};
use std::time::Instant;

fn main() -> Result<(), mergepath::Error> {
    let devices = match Gpu::count() {
        Ok(n) if n > 0 => n,
        _ => {
            println!("No usable GPU: the sharded sort needs at least one.");
            return Ok(());
        }
    };
    let group = match devices {
        1 => GpuGroup::sharing_one_gpu(0, 4)?,
        n => GpuGroup::new(&(0..n).collect::<Vec<_>>())?,
    };
    let n = 1usize << 26;
    let mut keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ (i >> 7)).collect();
    let mut want = keys.clone();
    let start = Instant::now();
    group.sort_host_keys(&mut keys, Less)?;
    println!("{n} keys sorted on {} ranks over {devices} GPU(s) in {:.1} ms", group.ranks().len(), start.elapsed().as_secs_f64() * 1e3);
    want.sort_unstable();
    assert_eq!(keys, want);
    println!("checked against slice::sort_unstable");
    Ok(())
}

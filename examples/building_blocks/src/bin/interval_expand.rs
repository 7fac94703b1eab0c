//! Interval expand (Modern GPU's) written from mergepath's public device header
//! `mergepath/kernel/load_balancing.cuh` (kernels/examples.cu: `expand_partitions` and
//! `expand`, 20 lines): each segment's value repeated over its items. Checked against a CPU
//! version and the library's own `mergepath::interval_expand`.
//!
//! Run: `cargo run --release -p mergepath-example-building-blocks --bin interval_expand`.

use mergepath::cudarc::driver::{CudaSlice, PushKernelArg};
use mergepath::{Gpu, Module};
use mergepath_example_building_blocks::{gpu, kernels, Rng, THREAD_PER_ITEM, TILE};

/// `count` items, item i the value of its segment: the last s with `starts[s] <= i`.
fn expand(gpu: &Gpu, kernels: &Module, starts: &CudaSlice<u32>, count: usize, values: &CudaSlice<u32>) -> Result<CudaSlice<u32>, Box<dyn std::error::Error>> {
    let mut out = gpu.alloc_zeros::<u32>(count)?;
    let (segments, items) = (starts.len() as i64, count as i64);
    let total = starts.len() - 1 + count; // the boundaries starts[1..] merged with the items
    if total == 0 {
        return Ok(out);
    }
    let num_partitions = mergepath::partition_count(total, TILE.tile());
    let mut partitions = gpu.alloc_zeros::<i64>(num_partitions)?;
    let (parts_fn, expand_fn) = (kernels.function("expand_partitions")?, kernels.function("expand")?);
    let num = num_partitions as i64;
    let mut launch = gpu.stream().launch_builder(&parts_fn);
    launch.arg(starts).arg(&segments).arg(&items).arg(&num).arg(&mut partitions);
    // SAFETY: the arguments match expand_partitions; one thread per partition.
    unsafe { launch.launch(THREAD_PER_ITEM.launch_config(num_partitions)?) }?;
    let mut launch = gpu.stream().launch_builder(&expand_fn);
    launch.arg(starts).arg(&segments).arg(&items).arg(&partitions).arg(values).arg(&mut out);
    // SAFETY: the arguments match expand; one CTA per tile of the merge, `out` holds `count`.
    unsafe { launch.launch(TILE.launch_config(total)?) }?;
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = gpu()? else { return Ok(()) };
    let kernels = kernels(&gpu)?;
    let mut rng = Rng(11);
    for (segments, longest) in [(1, 1), (1, 100_000), (1000, 4), (300_000, 40), (50_000, 2000)] {
        let lengths: Vec<u32> = (0..segments).map(|_| rng.below(longest) as u32).collect();
        let starts: Vec<u32> = lengths.iter().scan(0, |at, &len| Some(std::mem::replace(at, *at + len))).collect();
        let count = lengths.iter().sum::<u32>() as usize;
        let values: Vec<u32> = (0..segments as u32).map(|s| s.wrapping_mul(2_654_435_761)).collect();
        let (d_starts, d_values) = (gpu.upload(&starts)?, gpu.upload(&values)?);
        let (out, ms) = gpu.time(|| expand(&gpu, &kernels, &d_starts, count, &d_values))?;
        let want: Vec<u32> = lengths.iter().zip(&values).flat_map(|(&len, &v)| std::iter::repeat_n(v, len as usize)).collect();
        let mut library = gpu.alloc_zeros::<u32>(count.max(1))?;
        mergepath::interval_expand(&gpu, count, &d_starts, &d_values, &mut library)?;
        if gpu.download(&out)? != want || gpu.download(&library)?[..count] != want[..] {
            return Err(format!("interval expand of {segments} segments: differs from the CPU version").into());
        }
        println!("interval_expand: {segments} segments, {count} items in {ms:.3} ms, equal to the CPU version and the library's");
    }
    Ok(())
}

//! Bulk insert (Modern GPU's BulkInsert) from mergepath's public building blocks: insert a
//! sorted batch of values at given positions of an array, in one merge-path-scheduled kernel
//! (kernels/examples.cu: `merge_path_partitions_body` over a counting sequence, then
//! `cta_merge_from_shared` and `cta_gather_values`), partitions sized with
//! `mergepath::partition_count`. Checked against a CPU version.
//!
//! Run: `cargo run --release -p mergepath-example-building-blocks --bin bulk_insert`.

use mergepath::cudarc::driver::{CudaSlice, PushKernelArg};
use mergepath::{Gpu, Module};
use mergepath_example_building_blocks::{gpu, kernels, Rng, THREAD_PER_ITEM, TILE};

/// `array` with `values[j]` placed before `array[positions[j]]` (positions sorted, at most
/// `array.len()`); values at equal positions keep their order.
fn bulk_insert(gpu: &Gpu, kernels: &Module, positions: &CudaSlice<i64>, values: &CudaSlice<u32>, array: &CudaSlice<u32>) -> Result<CudaSlice<u32>, Box<dyn std::error::Error>> {
    let (m, n) = (positions.len() as i64, array.len() as i64);
    assert_eq!(values.len(), positions.len(), "one value per position");
    let total = positions.len() + array.len();
    let mut out = gpu.alloc_zeros::<u32>(total)?;
    if total == 0 {
        return Ok(out);
    }
    let num_partitions = mergepath::partition_count(total, TILE.tile());
    let mut partitions = gpu.alloc_zeros::<i64>(num_partitions)?;
    let stream = gpu.stream();
    let parts_fn = kernels.function("bulk_insert_partitions")?;
    let num = num_partitions as i64;
    let mut launch = stream.launch_builder(&parts_fn);
    launch.arg(positions).arg(&m).arg(&n).arg(&num).arg(&mut partitions);
    // SAFETY: the arguments match bulk_insert_partitions; one thread per partition, and
    // `partitions` holds num_partitions entries.
    unsafe { launch.launch(THREAD_PER_ITEM.launch_config(num_partitions)?) }?;
    let insert_fn = kernels.function("bulk_insert")?;
    let mut launch = stream.launch_builder(&insert_fn);
    launch.arg(positions).arg(values).arg(&m).arg(array).arg(&n).arg(&partitions).arg(&mut out);
    // SAFETY: the arguments match bulk_insert; one CTA of NT threads per tile of NV outputs,
    // the partitions cover every tile, and `out` holds all m + n outputs.
    unsafe { launch.launch(TILE.launch_config(total)?) }?;
    Ok(out)
}

fn cpu_bulk_insert(positions: &[i64], values: &[u32], array: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(positions.len() + array.len());
    let mut j = 0;
    for (i, &x) in array.iter().enumerate() {
        while j < positions.len() && positions[j] <= i as i64 {
            out.push(values[j]);
            j += 1;
        }
        out.push(x);
    }
    out.extend_from_slice(&values[j..]);
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = gpu()? else { return Ok(()) };
    let kernels = kernels(&gpu)?;
    let mut rng = Rng(7);
    for (n, m) in [(0, 0), (0, 5), (5, 0), (1000, 1000), (TILE.tile() - 1, 3), (3, TILE.tile() + 1), (1 << 20, 300_000), (5_000_000, 5_000_000)] {
        let array: Vec<u32> = (0..n as u32).collect();
        let mut positions: Vec<i64> = (0..m).map(|_| rng.below(n as u64 + 1) as i64).collect();
        positions.sort_unstable();
        let values: Vec<u32> = (0..m as u32).map(|j| 0x8000_0000 | j).collect();
        let (d_positions, d_values, d_array) = (gpu.upload(&positions)?, gpu.upload(&values)?, gpu.upload(&array)?);
        let (out, ms) = gpu.time(|| bulk_insert(&gpu, &kernels, &d_positions, &d_values, &d_array))?;
        let got = gpu.download(&out)?;
        let want = cpu_bulk_insert(&positions, &values, &array);
        if got != want {
            let at = got.iter().zip(&want).position(|(g, w)| g != w);
            return Err(format!("bulk_insert n={n} m={m}: differs from the CPU at {at:?}").into());
        }
        println!("bulk_insert: {m} values into {n} items: {} items in {ms:.3} ms, equal to the CPU version", got.len());
    }
    Ok(())
}

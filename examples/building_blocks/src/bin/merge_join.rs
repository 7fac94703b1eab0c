//! Merge-join count from mergepath's public building blocks: for each key of a sorted column A,
//! the number of equal keys in a sorted column B, in one merge-path pass (kernels/examples.cu:
//! the library's partitions, then `cta_merge_visit` over each tile, each A key's run of equal B
//! keys finished by `equal_run_end` beyond the tile where it crosses the tile's end). Checked
//! against a CPU version on sizes around the tile size, heavy duplicates, runs crossing many
//! tiles and empty inputs; then timed against `mergepath::sorted_search_count` on 2^25 + 2^25
//! keys.
//!
//! Run: `cargo run --release -p mergepath-example-building-blocks --bin merge_join`.

use mergepath::Less;
use mergepath_example_building_blocks::{gpu, kernels, merge_join_count, Rng, TILE};

fn cpu_merge_join_count(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().map(|x| (b.partition_point(|y| y <= x) - b.partition_point(|y| y < x)) as u32).collect()
}

/// `n` sorted keys below `range`.
fn sorted_keys(rng: &mut Rng, n: usize, range: u64) -> Vec<u32> {
    let mut keys: Vec<u32> = (0..n).map(|_| rng.below(range) as u32).collect();
    keys.sort_unstable();
    keys
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = gpu()? else { return Ok(()) };
    let kernels = kernels(&gpu)?;
    let mut rng = Rng(11);
    let t = TILE.tile();
    // (|A|, |B|, key range): empty inputs, sizes around the tile, heavy duplicates (few key
    // values), runs of one key crossing many tiles (range 1), distinct-ish keys.
    let cases = [
        (0, 0, 10),
        (0, 5, 10),
        (5, 0, 10),
        (t - 1, t + 1, 5),
        (t, t, 1 << 30),
        (3 * t + 7, 2 * t - 3, 3),
        (100_000, 100_000, 1),
        (10, 100_000, 1),
        (100_000, 10, 1),
        (1 << 20, 1 << 20, 1000),
        (1 << 20, 300_000, 1 << 32),
    ];
    for (n, m, range) in cases {
        let (a, b) = (sorted_keys(&mut rng, n, range), sorted_keys(&mut rng, m, range));
        let counts = merge_join_count(&gpu, &kernels, "merge_join_count", &gpu.upload(&a)?, &gpu.upload(&b)?, Less)?;
        let (got, want) = (gpu.download(&counts)?, cpu_merge_join_count(&a, &b));
        if got != want {
            let at = got.iter().zip(&want).position(|(g, w)| g != w);
            return Err(format!("merge_join_count |A|={n} |B|={m} range={range}: differs from the CPU at {at:?}").into());
        }
    }
    println!("merge_join_count: {} cases equal to the CPU version", cases.len());

    let n = 1 << 25;
    let (a, b) = (sorted_keys(&mut rng, n, 1 << 26), sorted_keys(&mut rng, n, 1 << 26));
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let mut library = gpu.alloc_zeros::<u32>(n)?;
    // Warm-up: modules loaded, memory pools filled.
    merge_join_count(&gpu, &kernels, "merge_join_count", &da, &db, Less)?;
    mergepath::sorted_search_count(&gpu, &da, &db, &mut library, Less)?;
    let (counts, ms) = gpu.time(|| merge_join_count(&gpu, &kernels, "merge_join_count", &da, &db, Less))?;
    let ((), library_ms) = gpu.time(|| mergepath::sorted_search_count(&gpu, &da, &db, &mut library, Less))?;
    if gpu.download(&counts)? != gpu.download(&library)? {
        return Err("merge_join_count and sorted_search_count differ on 2^25 + 2^25 keys".into());
    }
    println!("2^25 + 2^25 keys: merge_join_count {ms:.3} ms, mergepath::sorted_search_count {library_ms:.3} ms");
    Ok(())
}

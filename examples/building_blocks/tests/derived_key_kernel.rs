//! A kernel of this crate on its own derived key: `merge_join_count_hit_by_x`
//! (kernels/examples.cu) includes the header build.rs writes for `Hit`
//! (`mergepath_user/Hit.cuh`) and compares with its custom comparator's functor (`Hit_ByX`).
//! Its counts must equal a CPU count by `ByX`'s Rust twin and mergepath's own
//! `sorted_search_count` by `ByX`, whose kernels the derive compiled from the same definitions.
//! Skips without a GPU, unless `MERGEPATH_REQUIRE_GPU=1`.

use mergepath::{Comparator, Key};
use mergepath_example_building_blocks::{gpu, kernels, merge_join_count, ByX, Hit, Rng, TILE};

/// `n` hits with `xs` distinct values of `x` (some negative), their other fields varied,
/// stably sorted by `x`.
fn hits(rng: &mut Rng, n: usize, xs: u64) -> Vec<Hit> {
    let mut out: Vec<Hit> = (0..n).map(|i| Hit { score: rng.below(100) as f32 / 4.0, id: i as u32, x: rng.below(xs) as i64 - (xs / 2) as i64 }).collect();
    out.sort_by_key(|h| h.x);
    out
}

/// For each hit of `a`, the hits of `b` equivalent to it under `ByX`.
fn cpu_counts(a: &[Hit], b: &[Hit]) -> Vec<u32> {
    let by = ByX;
    a.iter().map(|h| (b.partition_point(|y| !by.is_less(h, y)) - b.partition_point(|y| by.is_less(y, h))) as u32).collect()
}

#[test]
fn a_kernel_of_ours_on_a_derived_key_uses_the_functors_mergepath_compiled() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(Hit::CUDA_TYPE, "mergepath_user::Hit");
    assert_eq!(<ByX as Comparator<Hit>>::CUDA_FUNCTOR, "mergepath_user::Hit_ByX");
    let Some(gpu) = gpu()? else { return Ok(()) };
    let kernels = kernels(&gpu)?;
    let mut rng = Rng(5);
    let t = TILE.tile();
    // (|A|, |B|, distinct x): empty inputs, sizes around the tile, one x across many tiles,
    // mostly distinct x.
    for (n, m, xs) in [(0, 5, 3), (5, 0, 3), (t - 1, t + 1, 4), (3 * t + 7, 2 * t - 3, 1), (100_000, 70_000, 1000), (1 << 20, 1 << 19, 1 << 24)] {
        let (a, b) = (hits(&mut rng, n, xs), hits(&mut rng, m, xs));
        let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
        let ours = gpu.download(&merge_join_count(&gpu, &kernels, "merge_join_count_hit_by_x", &da, &db, ByX)?)?;
        let mut library = gpu.alloc_zeros::<u32>(n)?;
        mergepath::sorted_search_count(&gpu, &da, &db, &mut library, ByX)?;
        let want = cpu_counts(&a, &b);
        assert_eq!(ours, want, "our kernel against the CPU, |A|={n} |B|={m} xs={xs}");
        assert_eq!(gpu.download(&library)?, want, "mergepath's sorted_search_count against the CPU, |A|={n} |B|={m}");
    }
    Ok(())
}

//! A kernel of this crate on its own derived key: `merge_join_count_trade_by_price`
//! (kernels/examples.cu) includes the header build.rs writes for `Trade`
//! (`mergepath_user/Trade.cuh`) and compares with its custom comparator's functor
//! (`Trade_ByPrice`). Its counts must equal a CPU count by `ByPrice`'s Rust twin and mergepath's
//! own `sorted_search_count` by `ByPrice`, whose kernels the derive compiled from the same
//! definitions. Skips without a GPU, unless `MERGEPATH_REQUIRE_GPU=1`.

use mergepath::{Comparator, Key};
use mergepath_example_building_blocks::{gpu, kernels, merge_join_count, ByPrice, Rng, Trade, TILE};

/// `n` trades of `prices` distinct prices (some negative, -0.0 among them), stably sorted by
/// price.
fn trades(rng: &mut Rng, n: usize, prices: u64) -> Vec<Trade> {
    let mut out: Vec<Trade> = (0..n).map(|i| Trade { price: (rng.below(prices) as f32 - (prices / 2) as f32) * -0.5, id: i as u32 }).collect();
    out.sort_by(|x, y| x.price.partial_cmp(&y.price).expect("no NaN"));
    out
}

/// For each trade of `a`, the trades of `b` equivalent to it under `ByPrice`.
fn cpu_counts(a: &[Trade], b: &[Trade]) -> Vec<u32> {
    let by = ByPrice;
    a.iter().map(|x| (b.partition_point(|y| !by.is_less(x, y)) - b.partition_point(|y| by.is_less(y, x))) as u32).collect()
}

#[test]
fn a_kernel_of_ours_on_a_derived_key_uses_the_functors_mergepath_compiled() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(Trade::CUDA_TYPE, "mergepath_user::Trade");
    assert_eq!(<ByPrice as Comparator<Trade>>::CUDA_FUNCTOR, "mergepath_user::Trade_ByPrice");
    let Some(gpu) = gpu()? else { return Ok(()) };
    let kernels = kernels(&gpu)?;
    let mut rng = Rng(5);
    let t = TILE.tile();
    // (|A|, |B|, distinct prices): empty inputs, sizes around the tile, runs of one price
    // across many tiles, mostly distinct prices.
    for (n, m, prices) in [(0, 5, 3), (5, 0, 3), (t - 1, t + 1, 4), (3 * t + 7, 2 * t - 3, 1), (100_000, 70_000, 1000), (1 << 20, 1 << 19, 1 << 24)] {
        let (a, b) = (trades(&mut rng, n, prices), trades(&mut rng, m, prices));
        let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
        let ours = gpu.download(&merge_join_count(&gpu, &kernels, "merge_join_count_trade_by_price", &da, &db, ByPrice)?)?;
        let mut library = gpu.alloc_zeros::<u32>(n)?;
        mergepath::sorted_search_count(&gpu, &da, &db, &mut library, ByPrice)?;
        let want = cpu_counts(&a, &b);
        assert_eq!(ours, want, "our kernel against the CPU, |A|={n} |B|={m} prices={prices}");
        assert_eq!(gpu.download(&library)?, want, "mergepath's sorted_search_count against the CPU, |A|={n} |B|={m}");
    }
    Ok(())
}

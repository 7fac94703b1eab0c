//! Sorting `Vec`s: keys, keys with values, and an argsort, on the GPU where there is one and on
//! CPU threads (the host backend) where there is not, from one function written against
//! `mergepath::Backend`; then a sort from page-locked memory, the GPU's fastest path.
//!
//! `cargo run --release --example sort_vec` (`-- --host` runs it on the host backend even where
//! there is a GPU).

use mergepath::{Backend, Gpu, Greater, Host, Less};
use std::time::Instant;

/// `n` pseudo-random keys (a fixed seed).
fn random_keys(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761).rotate_left(7)).collect()
}

fn sort_on(backend: &impl Backend) -> Result<(), mergepath::Error> {
    let n = 1 << 24;
    println!("on the {} backend, {n} keys:", backend.name());
    // The first call on a `Gpu` loads its kernels and sets up its staging buffers: out of the
    // timings below.
    backend.sort_pairs(&mut random_keys(1 << 20), &mut vec![0f32; 1 << 20], Less)?;

    // Keys alone, ascending.
    let mut keys = random_keys(n);
    let start = Instant::now();
    backend.sort_keys(&mut keys, Less)?;
    println!("  sort_keys          {:8.2} ms", start.elapsed().as_secs_f64() * 1e3);
    assert!(keys.windows(2).all(|w| w[0] <= w[1]));

    // Keys with values, descending: each value follows its key, equal keys keep their order.
    let (mut keys, mut values): (Vec<u32>, Vec<f32>) = (random_keys(n), (0..n).map(|i| i as f32).collect());
    let start = Instant::now();
    backend.sort_pairs(&mut keys, &mut values, Greater)?;
    println!("  sort_pairs         {:8.2} ms", start.elapsed().as_secs_f64() * 1e3);
    assert!(keys.windows(2).all(|w| w[0] >= w[1]));

    // An argsort: the positions that sort the keys, the keys left as they are.
    let keys = random_keys(n);
    let mut order = vec![0u32; n];
    let start = Instant::now();
    backend.argsort(&keys, &mut order, Less)?;
    println!("  argsort            {:8.2} ms", start.elapsed().as_secs_f64() * 1e3);
    assert!(order.windows(2).all(|w| keys[w[0] as usize] <= keys[w[1] as usize]));
    Ok(())
}

fn main() -> Result<(), mergepath::Error> {
    let gpu = match Gpu::new(0) {
        Ok(gpu) if !std::env::args().any(|a| a == "--host") => gpu,
        _ => return sort_on(&Host),
    };
    sort_on(&gpu)?;

    // Keys in page-locked (pinned) memory are copied by the DMA engines directly, with no
    // staging copy: the sort then runs at the PCIe bound.
    let mut pinned = gpu.pinned_from(&random_keys(1 << 24))?;
    let start = Instant::now();
    gpu.sort_keys(&mut pinned, Less)?;
    println!("  sort_keys, pinned  {:8.2} ms", start.elapsed().as_secs_f64() * 1e3);
    assert!(pinned.windows(2).all(|w| w[0] <= w[1]));
    Ok(())
}

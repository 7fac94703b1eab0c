//! The timeline of one sort of host data on the GPU: 2^26 u32 keys (or `--log2 K`) from a `Vec`
//! and from a `PinnedBuffer`, each sorted once to warm the pools, then once recorded. Prints
//! TSV, a span per line (`case lane what start_ms end_ms`), for `docs/plot_host_timeline.py`:
//! when the host threads copied through the staging buffers, when each DMA ran on the upload and
//! download streams, and when each kernel ran.
//!
//! `cargo run --release --example host_timeline [-- --log2 26]` (needs a GPU).

use mergepath::slices::record_timeline;
use mergepath::{Gpu, Less};

fn keys(n: usize) -> Vec<u32> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 32) as u32
        })
        .collect()
}

fn main() -> Result<(), mergepath::Error> {
    let args: Vec<String> = std::env::args().collect();
    let log2 = args.iter().position(|a| a == "--log2").and_then(|i| args.get(i + 1)).map_or(26, |s| s.parse().expect("--log2 takes an integer"));
    let n = 1usize << log2;
    let gpu = Gpu::new(0)?;
    let input = keys(n);
    let mut pageable = input.clone();
    let mut pinned = gpu.pinned_from(&input)?;
    println!("case\tlane\twhat\tstart_ms\tend_ms");
    for case in ["pageable", "pinned"] {
        let data: &mut [u32] = if case == "pageable" { &mut pageable } else { &mut pinned };
        for round in 0..2 {
            data.copy_from_slice(&input);
            let (result, spans) = record_timeline(&gpu, || gpu.sort_keys(data, Less))?;
            result?;
            assert!(data.windows(2).all(|w| w[0] <= w[1]), "not sorted");
            if round == 1 {
                let end = spans.iter().map(|s| s.end_ms).fold(0.0, f64::max);
                eprintln!("{case}: 2^{log2} u32 keys sorted in {end:.2} ms (last span's end)");
                for s in spans {
                    println!("{case}\t{}\t{}\t{:.4}\t{:.4}", s.lane, s.what, s.start_ms, s.end_ms);
                }
            }
        }
    }
    Ok(())
}

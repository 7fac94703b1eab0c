//! Sorts more u32 keys than the GPU holds, from host memory, with a progress bar: the keys
//! (GiB from the first argument, default 4) are filled at random on all cores, hashed
//! (order-independent: a wrapping sum of a mix of every key), sorted by `Gpu::sort_keys_with_progress`,
//! then checked sorted and of the same hash, with the sort's wall time.
//!
//! `cargo run --release --example out_of_core -- 48` (on the GPU machine:
//! `.gpu/run example out_of_core 48`); a second argument caps the device memory in GiB
//! (`Gpu::with_memory_limit`), so a smaller sort runs externally too. `--timeline FILE` records
//! the sort's spans (host copies, DMAs, kernels; TSV `lane what start_ms end_ms`) into FILE and
//! prints each kind's count, busy time and first start to last end.

use indicatif::{ProgressBar, ProgressStyle};
use mergepath::slices::{record_timeline, Span};
use mergepath::{Gpu, Less};
use rayon::prelude::*;
use std::time::Instant;

/// SplitMix64's finaliser: the mix of a key for the order-independent hash.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The wrapping sum of every key's mix: equal for any order of the same keys.
fn multiset_hash(keys: &[u32]) -> u64 {
    keys.par_iter().map(|&k| mix(k as u64)).reduce(|| 0, u64::wrapping_add)
}

/// A kind of span's count, busy time, first start and last end (ms).
type SpanStats = (usize, f64, f64, f64);

/// Writes `spans` to `file` as TSV and prints, per (lane, what), the count, the busy time and
/// the first start to the last end.
fn write_timeline(file: &str, spans: &[Span]) -> std::io::Result<()> {
    use std::fmt::Write as _;
    let mut tsv = String::from("lane\twhat\tstart_ms\tend_ms\n");
    // Per (lane, what): count, busy ms, first start, last end.
    let mut kinds: Vec<((&str, &str), SpanStats)> = Vec::new();
    for s in spans {
        let _ = writeln!(tsv, "{}\t{}\t{:.3}\t{:.3}", s.lane, s.what, s.start_ms, s.end_ms);
        let key = (s.lane, s.what);
        match kinds.iter_mut().find(|(k, _)| *k == key) {
            Some((_, (count, busy, first, last))) => {
                *count += 1;
                *busy += s.end_ms - s.start_ms;
                *first = first.min(s.start_ms);
                *last = last.max(s.end_ms);
            }
            None => kinds.push((key, (1, s.end_ms - s.start_ms, s.start_ms, s.end_ms))),
        }
    }
    std::fs::write(file, tsv)?;
    println!("lane\twhat\tcount\tbusy_ms\tfirst_ms\tlast_ms");
    for ((lane, what), (count, busy, first, last)) in kinds {
        println!("{lane}\t{what}\t{count}\t{busy:.1}\t{first:.1}\t{last:.1}");
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let timeline = args.iter().position(|a| a == "--timeline").map(|i| {
        let file = args.get(i + 1).cloned().unwrap_or_else(|| "timeline.tsv".into());
        args.drain(i..(i + 2).min(args.len()));
        file
    });
    let args: Vec<f64> = args.iter().map(|a| a.parse()).collect::<Result<_, _>>()?;
    let gib = args.first().copied().unwrap_or(4.0);
    let mut gpu = Gpu::new(0)?;
    if let Some(&cap) = args.get(1) {
        gpu = gpu.with_memory_limit((cap * (1u64 << 30) as f64) as usize);
    }
    let n = (gib * (1u64 << 28) as f64) as usize;
    let runs = mergepath::slices::sort_runs(&gpu, n, 4, 0)?;
    println!("{n} u32 keys ({gib} GiB) in host memory; the sort makes {runs} run(s)");

    let t = Instant::now();
    let mut keys = vec![0u32; n];
    keys.par_chunks_mut(1 << 20).enumerate().for_each(|(c, chunk)| {
        let mut state = mix(c as u64 ^ 0x5eed);
        chunk.iter_mut().for_each(|k| {
            state = mix(state);
            *k = state as u32;
        });
    });
    let hash = multiset_hash(&keys);
    println!("filled and hashed in {:.1} s", t.elapsed().as_secs_f64());

    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {bytes}/{total_bytes} moved ({binary_bytes_per_sec})")?.progress_chars("=> "));
    let t = Instant::now();
    let mut sort = || {
        gpu.sort_keys_with_progress(&mut keys, Less, |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        })
    };
    let spans = match &timeline {
        Some(_) => {
            let (result, spans) = record_timeline(&gpu, sort)?;
            result?;
            spans
        }
        None => {
            sort()?;
            Vec::new()
        }
    };
    let secs = t.elapsed().as_secs_f64();
    bar.finish();
    if let Some(file) = timeline {
        write_timeline(&file, &spans)?;
    }

    let sorted = keys.par_windows(2).all(|w| w[0] <= w[1]);
    let same = multiset_hash(&keys) == hash;
    println!("sorted {n} keys in {secs:.3} s ({:.2} GB/s of keys): sorted {sorted}, same multiset {same}", (4 * n) as f64 / secs / 1e9);
    if !(sorted && same) {
        return Err("the sort's output is wrong".into());
    }
    Ok(())
}

//! Your own key types: a derived key with its field order and a custom comparator, sorted,
//! merged and searched on the GPU (or on CPU threads where there is none), and a 64-byte
//! record sorted by two of its fields, its other bytes carried.
//!
//! `cargo run --release --example own_key` (`-- --host` for the host backend).

use mergepath::{Backend, Bound, Gpu, Host, Less};

/// Sorted by `Less` as `score desc, id asc`; `ByX` is a comparator of its own, on `x` alone,
/// written once in CUDA (for the kernels) and once in Rust (for the host backend and the CPU
/// oracle).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id asc")]
#[key(comparator(ByX, cuda = "a.x < b.x", rust = "|a, b| a.x < b.x"))]
pub struct Hit {
    pub score: f32,
    pub id: u32,
    pub x: i64,
}

/// A record: wider than 16 bytes, so it is sorted by its order packed into 64-bit words with
/// the records' positions, and each record's 64 bytes move once, at the end.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, id")]
struct Row {
    score: f32,
    id: u32,
    seq: u64,
    payload: [u8; 48],
}

fn hits(n: usize, seed: u64) -> Vec<Hit> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = state >> 16;
            Hit { score: (r % 200) as f32 / 4.0, id: (r >> 8) as u32 % 1000, x: (r >> 20) as i64 % 100 - 50 }
        })
        .collect()
}

fn run(backend: &impl Backend) -> Result<(), mergepath::Error> {
    println!("on the {} backend:", backend.name());
    // By the field order: highest score first, then the lowest id.
    let mut a = hits(100_000, 1);
    backend.sort_keys(&mut a, Less)?;
    println!("  best hit {:?}", a[0]);

    // Merge two sorted batches, then find where some hits would go.
    let mut b = hits(50_000, 2);
    backend.sort_keys(&mut b, Less)?;
    let mut merged = vec![a[0]; a.len() + b.len()];
    backend.merge_keys(&a, &b, &mut merged, Less)?;
    let probes = &merged[..5];
    let mut at = vec![0u32; probes.len()];
    backend.sorted_search(probes, &merged, Bound::Lower, &mut at, Less)?;
    println!("  the first five merged hits start at {at:?}");

    // The same keys by the custom comparator, stably: equal x keep their score order.
    backend.sort_keys(&mut merged, ByX)?;
    assert!(merged.windows(2).all(|w| w[0].x <= w[1].x));
    println!("  sorted by x: from {} to {}", merged[0].x, merged[merged.len() - 1].x);
    Ok(())
}

fn main() -> Result<(), mergepath::Error> {
    match Gpu::new(0) {
        Ok(gpu) if !std::env::args().any(|a| a == "--host") => {
            run(&gpu)?;
            // Records sort on the GPU; their other operations return Error::NotSupported.
            let mut rows: Vec<Row> = hits(200_000, 3).iter().enumerate().map(|(i, h)| Row { score: h.score, id: h.id, seq: i as u64, payload: [i as u8; 48] }).collect();
            gpu.sort_keys(&mut rows, Less)?;
            assert!(rows.windows(2).all(|w| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].id <= w[1].id)));
            println!("  200,000 64-byte rows sorted by score desc, id; first {:?}", (rows[0].score, rows[0].id, rows[0].seq));
            Ok(())
        }
        _ => run(&Host),
    }
}

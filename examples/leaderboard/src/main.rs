//! A downstream crate's view of mergepath, using its public API only: a leaderboard of game
//! results as a derived key type, sorted on the GPU by the field order (points descending,
//! then time ascending) and by a custom comparator (player id), checked against the CPU
//! reference. Without a usable GPU it says so and shows the CPU reference's result.
//!
//! `cargo run --release -p mergepath-example-leaderboard`

use mergepath::{cpu, Comparator, Gpu, Less};

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "points desc, time_ms asc")]
#[key(comparator(ByPlayer, cuda = "a.player < b.player", rust = "|a, b| a.player < b.player"))]
struct Result {
    points: f32,
    time_ms: u32,
    player: u32,
}

fn results(n: usize) -> Vec<Result> {
    let mut state = 7u64;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = state >> 16;
            Result { points: (r % 500) as f32 / 4.0, time_ms: (r >> 12) as u32 % 100_000, player: (r >> 32) as u32 % 1000 }
        })
        .collect()
}

/// Sorts on the GPU when there is one (checking it against the CPU reference), else on the CPU.
fn sort<C: Comparator<Result>>(gpu: Option<&Gpu>, rows: &[Result], comp: C) -> std::result::Result<Vec<Result>, mergepath::Error> {
    let want = cpu::sort_keys(rows, comp);
    let Some(gpu) = gpu else { return Ok(want) };
    let mut keys = gpu.upload(rows)?;
    mergepath::sort_keys(gpu, &mut keys, comp)?;
    let got = gpu.download(&keys)?;
    assert!(bytemuck::cast_slice::<Result, u8>(&got) == bytemuck::cast_slice::<Result, u8>(&want), "GPU and CPU disagree");
    Ok(got)
}

fn main() -> std::result::Result<(), mergepath::Error> {
    let gpu = match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("no usable GPU ({e}); sorting with the CPU reference instead");
            None
        }
    };
    let rows = results(1 << 20);
    let board = sort(gpu.as_ref(), &rows, Less)?;
    println!("top 5 of {} results (points desc, time asc):", rows.len());
    for r in &board[..5] {
        println!("  player {:4}  {:6.2} points  {:6} ms", r.player, r.points, r.time_ms);
    }
    let by_player = sort(gpu.as_ref(), &board, ByPlayer)?;
    // Stable: each player's results keep their leaderboard order, so the first is the best.
    let best = by_player[0];
    println!("player {}'s best: {:.2} points in {} ms", best.player, best.points, best.time_ms);
    Ok(())
}

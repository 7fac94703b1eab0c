//! The Modern GPU merge demonstrations (DemoMergeKeys, DemoMergePairs): two sorted arrays of
//! 100 random integers in 0..100 are merged, keys alone and then with values (A's values are
//! 0..100, B's 100..200, so each merged value tells where its key came from).
//!
//! `cargo run --release --example demo`. Without a usable GPU it says so in one line and runs
//! the same demonstration on the CPU reference implementation.

use mergepath::{cpu, Gpu, Less};

const N: usize = 100;

/// Prints 10 values a row, each row headed by the index of its first value.
fn print_array(values: &[i32]) {
    for (row, chunk) in values.chunks(10).enumerate() {
        print!("{:5}:  ", row * 10);
        for v in chunk {
            print!("{v:4}");
        }
        println!();
    }
}

/// `n` random integers in 0..100, sorted (a fixed seed, so every run shows the same arrays).
fn sort_random(n: usize, seed: u64) -> Vec<i32> {
    let mut state = seed;
    let mut v: Vec<i32> = (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % 100) as i32
        })
        .collect();
    v.sort();
    v
}

fn main() -> Result<(), mergepath::Error> {
    let gpu = match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("No usable GPU ({e}): running the demonstration on the CPU reference implementation.");
            None
        }
    };
    let (a, b) = (sort_random(N, 1), sort_random(N, 2));

    println!("\nMERGE KEYS DEMONSTRATION:\n");
    println!("A:");
    print_array(&a);
    println!("\nB:");
    print_array(&b);
    let merged = match &gpu {
        Some(gpu) => {
            let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
            let mut out = gpu.alloc_zeros::<i32>(2 * N)?;
            mergepath::merge_keys(gpu, &da, &db, &mut out, Less)?;
            gpu.download(&out)?
        }
        None => cpu::merge_keys(&a, &b, Less),
    };
    println!("\nMerged array:");
    print_array(&merged);

    println!("\n\nMERGE PAIRS DEMONSTRATION:\n");
    let (a_vals, b_vals): (Vec<i32>, Vec<i32>) = ((0..N as i32).collect(), (N as i32..2 * N as i32).collect());
    println!("A:");
    print_array(&a);
    println!("\nB:");
    print_array(&b);
    let (keys, values) = match &gpu {
        Some(gpu) => {
            let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
            let (dav, dbv) = (gpu.upload(&a_vals)?, gpu.upload(&b_vals)?);
            let (mut ok, mut ov) = (gpu.alloc_zeros::<i32>(2 * N)?, gpu.alloc_zeros::<i32>(2 * N)?);
            mergepath::merge_pairs(gpu, &da, &dav, &db, &dbv, &mut ok, &mut ov, Less)?;
            (gpu.download(&ok)?, gpu.download(&ov)?)
        }
        None => cpu::merge_pairs(&a, &a_vals, &b, &b_vals, Less),
    };
    println!("\nMerged keys:");
    print_array(&keys);
    println!("\nMerged values:");
    print_array(&values);
    Ok(())
}

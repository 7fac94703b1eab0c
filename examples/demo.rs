//! The Modern GPU demonstrations DemoMergeKeys, DemoMergePairs, DemoSortKeys and DemoSortPairs:
//! two sorted arrays of 100 random integers in 0..100 are merged, keys alone and then with values
//! (A's values are 0..100, B's 100..200, so each merged value tells where its key came from);
//! then 100 random integers are sorted, alone and with values 0..100 (their input positions).
//!
//! `cargo run --release --example demo`. Without a usable GPU it says so in one line and runs
//! the same demonstration on the host backend (`mergepath::host`, CPU threads);
//! `cargo run --release --example demo -- --host` runs it there even where there is a GPU.

use mergepath::{host, Gpu, Less};

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

/// `n` random integers in 0..100 (a fixed seed, so every run shows the same arrays).
fn random(n: usize, seed: u64) -> Vec<i32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % 100) as i32
        })
        .collect()
}

fn sort_random(n: usize, seed: u64) -> Vec<i32> {
    let mut v = random(n, seed);
    v.sort();
    v
}

fn main() -> Result<(), mergepath::Error> {
    let force_host = std::env::args().skip(1).any(|a| a == "--host");
    let gpu = match Gpu::new(0) {
        _ if force_host => {
            println!("--host: running the demonstration on the host backend ({} CPU threads).", host::threads());
            None
        }
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("No usable GPU ({e}): running the demonstration on the host backend ({} CPU threads).", host::threads());
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
        None => {
            let mut out = vec![0; 2 * N];
            host::merge_keys(&a, &b, &mut out, Less)?;
            out
        }
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
        None => {
            let (mut ok, mut ov) = (vec![0; 2 * N], vec![0; 2 * N]);
            host::merge_pairs(&a, &a_vals, &b, &b_vals, &mut ok, &mut ov, Less)?;
            (ok, ov)
        }
    };
    println!("\nMerged keys:");
    print_array(&keys);
    println!("\nMerged values:");
    print_array(&values);

    println!("\n\nSORT KEYS DEMONSTRATION:\n");
    let input = random(N, 3);
    println!("Input:");
    print_array(&input);
    let sorted = match &gpu {
        Some(gpu) => {
            let mut d = gpu.upload(&input)?;
            mergepath::sort_keys(gpu, &mut d, Less)?;
            gpu.download(&d)?
        }
        None => {
            let mut keys = input.clone();
            host::sort_keys(&mut keys, Less)?;
            keys
        }
    };
    println!("\nSorted output:");
    print_array(&sorted);

    println!("\n\nSORT PAIRS DEMONSTRATION:\n");
    let (keys, values): (Vec<i32>, Vec<i32>) = (random(N, 4), (0..N as i32).collect());
    println!("Input keys:");
    print_array(&keys);
    let (keys, values) = match &gpu {
        Some(gpu) => {
            let (mut dk, mut dv) = (gpu.upload(&keys)?, gpu.upload(&values)?);
            mergepath::sort_pairs(gpu, &mut dk, &mut dv, Less)?;
            (gpu.download(&dk)?, gpu.download(&dv)?)
        }
        None => {
            let (mut keys, mut values) = (keys, values);
            host::sort_pairs(&mut keys, &mut values, Less)?;
            (keys, values)
        }
    };
    println!("\nSorted keys:");
    print_array(&keys);
    println!("\nSorted values:");
    print_array(&values);
    Ok(())
}

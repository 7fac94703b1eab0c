//! The Modern GPU demonstrations DemoMergeKeys, DemoMergePairs, DemoSortKeys and DemoSortPairs:
//! two sorted arrays of 100 random integers in 0..100 are merged, keys alone and then with values
//! (A's values are 0..100, B's 100..200, so each merged value tells where its key came from);
//! then 100 random integers are sorted, alone and with values 0..100 (their input positions).
//!
//! `cargo run --release --example demo`. Without a usable GPU it says so in one line and runs
//! the same demonstration on the host backend (`mergepath::host`, CPU threads);
//! `cargo run --release --example demo -- --host` runs it there even where there is a GPU.
//! The demonstration is written once, against `mergepath::Backend`, which both implement.

use mergepath::{host, Backend, Gpu, Host, Less};

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
    match Gpu::new(0) {
        _ if force_host => {
            println!("--host: running the demonstration on the host backend ({} CPU threads).", host::threads());
            demonstrate(&Host)
        }
        Ok(gpu) => demonstrate(&gpu),
        Err(e) => {
            println!("No usable GPU ({e}): running the demonstration on the host backend ({} CPU threads).", host::threads());
            demonstrate(&Host)
        }
    }
}

fn demonstrate(backend: &impl Backend) -> Result<(), mergepath::Error> {
    let (a, b) = (sort_random(N, 1), sort_random(N, 2));

    println!("\nMERGE KEYS DEMONSTRATION:\n");
    println!("A:");
    print_array(&a);
    println!("\nB:");
    print_array(&b);
    let mut merged = vec![0; 2 * N];
    backend.merge_keys(&a, &b, &mut merged, Less)?;
    println!("\nMerged array:");
    print_array(&merged);

    println!("\n\nMERGE PAIRS DEMONSTRATION:\n");
    let (a_vals, b_vals): (Vec<i32>, Vec<i32>) = ((0..N as i32).collect(), (N as i32..2 * N as i32).collect());
    println!("A:");
    print_array(&a);
    println!("\nB:");
    print_array(&b);
    let (mut keys, mut values) = (vec![0; 2 * N], vec![0; 2 * N]);
    backend.merge_pairs(&a, &a_vals, &b, &b_vals, &mut keys, &mut values, Less)?;
    println!("\nMerged keys:");
    print_array(&keys);
    println!("\nMerged values:");
    print_array(&values);

    println!("\n\nSORT KEYS DEMONSTRATION:\n");
    let mut keys = random(N, 3);
    println!("Input:");
    print_array(&keys);
    backend.sort_keys(&mut keys, Less)?;
    println!("\nSorted output:");
    print_array(&keys);

    println!("\n\nSORT PAIRS DEMONSTRATION:\n");
    let (mut keys, mut values): (Vec<i32>, Vec<i32>) = (random(N, 4), (0..N as i32).collect());
    println!("Input keys:");
    print_array(&keys);
    backend.sort_pairs(&mut keys, &mut values, Less)?;
    println!("\nSorted keys:");
    print_array(&keys);
    println!("\nSorted values:");
    print_array(&values);
    Ok(())
}

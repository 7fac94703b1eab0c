//! Shared by the benches: the GPU (or a skip), CUDA-event timing, and the tests' Rng.
#![allow(dead_code)]

use mergepath::cudarc::driver::sys::CUevent_flags;
use mergepath::Gpu;
use std::time::Duration;

#[path = "../../tests/common/mod.rs"]
mod common;
pub use common::Rng;

/// The GPU, or `None` after a skip line; panics instead when `MERGEPATH_REQUIRE_GPU=1`.
pub fn bench_gpu() -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            if std::env::var("MERGEPATH_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("MERGEPATH_REQUIRE_GPU=1 but no usable GPU: {e}");
            }
            eprintln!("skipped: no usable GPU ({e})");
            None
        }
    }
}

/// Median GPU time in ms of `f` over `reps` event-timed calls, after one warm-up call.
pub fn event_median_ms(gpu: &Gpu, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let stream = gpu.stream();
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            f();
            let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            end.synchronize().unwrap();
            start.elapsed_ms(&end).unwrap() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[reps / 2]
}

/// Criterion's `iter_custom`: GPU time of `iters` back-to-back calls.
pub fn gpu_time(gpu: &Gpu, iters: u64, mut f: impl FnMut()) -> Duration {
    let stream = gpu.stream();
    let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
    for _ in 0..iters {
        f();
    }
    let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
    end.synchronize().unwrap();
    Duration::from_secs_f64(start.elapsed_ms(&end).unwrap() as f64 / 1e3)
}

/// Two sorted halves of n random keys (the anchors' merge and search inputs).
pub fn sorted_halves<K: mergepath::Key + mergepath::cudarc::driver::DeviceRepr + Ord>(gpu: &Gpu, n: usize, from: fn(u64) -> K) -> (mergepath::cudarc::driver::CudaSlice<K>, mergepath::cudarc::driver::CudaSlice<K>) {
    let mut rng = Rng(42);
    let mut half = |len: usize| {
        let mut v: Vec<K> = (0..len).map(|_| from(rng.next())).collect();
        v.sort_unstable();
        gpu.upload(&v).unwrap()
    };
    (half(n / 2), half(n - n / 2))
}

/// `n` random u32 values below `limit`, sorted (SplitMix64 from `seed`, as the anchors draw
/// them).
pub fn sorted_below(n: usize, limit: u64, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    let mut values: Vec<u32> = (0..n).map(|_| (rng.next() % limit) as u32).collect();
    values.sort_unstable();
    values
}

/// The log2 sizes to run: `MERGEPATH_BENCH_LOG2` (comma-separated) if set, else 20, 24, 26.
pub fn log2_sizes() -> Vec<u32> {
    match std::env::var("MERGEPATH_BENCH_LOG2") {
        Ok(s) => s.split(',').map(|x| x.trim().parse().expect("MERGEPATH_BENCH_LOG2: comma-separated integers")).collect(),
        Err(_) => vec![20, 24, 26],
    }
}

/// std::mt19937_64 (the C++ standard's 64-bit Mersenne Twister), so a bench can draw the
/// anchors' exact random sequences (e.g. `anchors.cu`'s segment sizes).
pub struct Mt19937_64 {
    state: [u64; 312],
    index: usize,
}

impl Mt19937_64 {
    pub fn new(seed: u64) -> Self {
        let mut state = [0u64; 312];
        state[0] = seed;
        for i in 1..312 {
            state[i] = 6364136223846793005u64.wrapping_mul(state[i - 1] ^ (state[i - 1] >> 62)).wrapping_add(i as u64);
        }
        Mt19937_64 { state, index: 312 }
    }

    pub fn next(&mut self) -> u64 {
        const UPPER: u64 = 0xffff_ffff_8000_0000;
        const LOWER: u64 = 0x7fff_ffff;
        if self.index >= 312 {
            for i in 0..312 {
                let x = (self.state[i] & UPPER) | (self.state[(i + 1) % 312] & LOWER);
                let mut y = x >> 1;
                if x & 1 != 0 {
                    y ^= 0xb502_6f5a_a966_19e9;
                }
                self.state[i] = self.state[(i + 156) % 312] ^ y;
            }
            self.index = 0;
        }
        let mut x = self.state[self.index];
        self.index += 1;
        x ^= (x >> 29) & 0x5555_5555_5555_5555;
        x ^= (x << 17) & 0x71d6_7fff_eda6_0000;
        x ^= (x << 37) & 0xfff7_eee0_0000_0000;
        x ^ (x >> 43)
    }
}

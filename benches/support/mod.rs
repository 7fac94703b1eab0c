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

/// The log2 sizes to run: `MERGEPATH_BENCH_LOG2` (comma-separated) if set, else 20, 24, 26.
pub fn log2_sizes() -> Vec<u32> {
    match std::env::var("MERGEPATH_BENCH_LOG2") {
        Ok(s) => s.split(',').map(|x| x.trim().parse().expect("MERGEPATH_BENCH_LOG2: comma-separated integers")).collect(),
        Err(_) => vec![20, 24, 26],
    }
}

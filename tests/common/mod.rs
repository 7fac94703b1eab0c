//! Helpers shared by the test binaries: the GPU (or a skip), key generators, comparisons.
#![allow(dead_code)]

use mergepath::{Comparator, Gpu, Key};
use std::io::Write;

/// The GPU for this test binary, or `None` after printing a skip line. Panics instead of
/// skipping when `MERGEPATH_REQUIRE_GPU=1`.
pub fn gpu() -> Option<&'static Gpu> {
    let gpu = mergepath::testing::gpu();
    if gpu.is_none() {
        // Straight to stderr, past the test harness's capture, so the skip is visible.
        let _ = writeln!(std::io::stderr(), "skipped: no usable GPU (set MERGEPATH_REQUIRE_GPU=1 to fail instead)");
    }
    gpu
}

/// SplitMix64: small, deterministic, good enough for test data.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Built-in keys the tests can make from random bits.
pub trait TestKey: Key + std::fmt::Debug + mergepath::cudarc::driver::DeviceRepr {
    fn from_bits(bits: u64) -> Self;
    /// Keys that stress the order: for floats NaNs of both signs, infinities, signed zeros.
    fn specials() -> Vec<Self> {
        Vec::new()
    }
}
macro_rules! int_keys { ($($t:ty),*) => {$(
    impl TestKey for $t { fn from_bits(bits: u64) -> Self { bits as $t } }
)*}; }
int_keys!(u8, u16, u32, u64, i8, i16, i32, i64);
impl TestKey for f32 {
    fn from_bits(bits: u64) -> Self {
        // Mostly ordinary numbers, so equal keys and order both get exercised.
        (bits % 2000) as f32 / 8.0 - 125.0
    }
    fn specials() -> Vec<Self> {
        vec![f32::NAN, -f32::NAN, f32::from_bits(0x7fc0_0001), f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE]
    }
}
impl TestKey for f64 {
    fn from_bits(bits: u64) -> Self {
        (bits % 2000) as f64 / 8.0 - 125.0
    }
    fn specials() -> Vec<Self> {
        vec![f64::NAN, -f64::NAN, f64::from_bits(0x7ff8_0000_0000_0001), f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, f64::MIN_POSITIVE]
    }
}

/// Input distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    Uniform,
    AllEqual,
    FewDistinct,
    /// Every key of A before every key of B (the inputs are already in merged order).
    AlreadySorted,
    /// Ordinary keys mixed with the type's special values (NaN, infinities, signed zeros).
    Specials,
}
pub const DISTS: [Dist; 5] = [Dist::Uniform, Dist::AllEqual, Dist::FewDistinct, Dist::AlreadySorted, Dist::Specials];

/// Two inputs of the given lengths, each sorted by `comp`.
pub fn inputs<K: TestKey, C: Comparator<K>>(a_len: usize, b_len: usize, dist: Dist, comp: C, seed: u64) -> (Vec<K>, Vec<K>) {
    let mut rng = Rng(seed);
    let pool: Vec<K> = match dist {
        Dist::AllEqual => vec![K::from_bits(rng.next())],
        Dist::FewDistinct => (0..3).map(|_| K::from_bits(rng.next())).collect(),
        Dist::Specials => K::specials().into_iter().chain((0..8).map(|_| K::from_bits(rng.next()))).collect(),
        Dist::Uniform | Dist::AlreadySorted => Vec::new(),
    };
    let mut draw = |n: usize| -> Vec<K> {
        (0..n)
            .map(|_| if pool.is_empty() { K::from_bits(rng.next()) } else { pool[rng.below(pool.len() as u64) as usize] })
            .collect()
    };
    let sort = |v: &mut Vec<K>| v.sort_by(|x, y| ordering(&comp, x, y));
    if dist == Dist::AlreadySorted {
        let mut all = draw(a_len + b_len);
        sort(&mut all);
        let b = all.split_off(a_len);
        return (all, b);
    }
    let (mut a, mut b) = (draw(a_len), draw(b_len));
    sort(&mut a);
    sort(&mut b);
    (a, b)
}

pub use mergepath::cpu::ordering;

/// Bitwise equality (NaN == NaN of the same bits, -0.0 != +0.0), with the first difference.
pub fn assert_same<K: Key + std::fmt::Debug>(got: &[K], want: &[K], context: &str) {
    assert_eq!(got.len(), want.len(), "{context}: length");
    let gb: &[u8] = bytemuck::cast_slice(got);
    let wb: &[u8] = bytemuck::cast_slice(want);
    if gb != wb {
        let i = got.iter().zip(want).position(|(g, w)| bytemuck::bytes_of(g) != bytemuck::bytes_of(w)).unwrap();
        panic!("{context}: first difference at {i}: got {:?}, want {:?}", got[i], want[i]);
    }
}

/// A `Gpu` whose memory cap makes a host-slice sort of `n` keys of `key_bytes` (values of
/// `word` bytes) cut `runs` runs under work pieces of `work` bytes: the smallest such cap.
pub fn capped_gpu(n: usize, key_bytes: usize, word: usize, runs: usize, work: usize) -> Gpu {
    let runs_under = |cap: usize| mergepath::slices::with_work_bytes(work, || mergepath::slices::sort_runs(&Gpu::new(0).unwrap().with_memory_limit(cap), n, key_bytes, word));
    // The smallest cap with at most `runs` runs (runs fall as the cap grows).
    let (mut lo, mut hi) = (1usize, 64 * n * (key_bytes + word) + (64 << 20));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match runs_under(mid) {
            Ok(r) if r <= runs => hi = mid,
            _ => lo = mid,
        }
    }
    assert_eq!(runs_under(hi).unwrap(), runs, "a cap of {hi} bytes for {runs} runs of {n} keys");
    Gpu::new(0).unwrap().with_memory_limit(hi)
}

//! The crate's properties, built on `mergepath::testing`: every operation against the CPU oracle
//! on generated inputs (lengths at the tiles' edges and 2^k ± 1, the sort benchmarks' patterns,
//! float specials, derived keys and records), on the host backend always (CI) and on the GPU where there is
//! one (required with `MERGEPATH_REQUIRE_GPU=1`). Cases: 1,000 per operation and key type on the
//! GPU, 32 on the host (`MERGEPATH_PROPERTY_CASES` sets both). Each run prints its case count and
//! seed; failures shrink to a minimal input and are saved in
//! `tests/properties.proptest-regressions`, replayed first on later runs.

mod common;
#[path = "common/hit.rs"]
#[allow(dead_code)]
mod hit;
#[path = "common/records.rs"]
mod records;

use hit::{ByX, Hit};
use records::{ByPayload, Row, Wide};
use mergepath::testing::{self, Backend, Check, PropertyResult, TestKey};
use mergepath::{Comparator, Greater, Less};
use proptest::strategy::Strategy;

/// Cases per run on `backend`.
fn cases(backend: Backend<'_>) -> u32 {
    if let Some(n) = std::env::var("MERGEPATH_PROPERTY_CASES").ok().and_then(|v| v.parse().ok()) {
        return n;
    }
    match backend {
        Backend::Gpu(_) => 1000,
        Backend::Host => 32,
    }
}

/// Runs `property` on values of `strategy` on every backend.
fn check<S: Strategy>(name: &str, strategy: S, property: impl Fn(Backend<'static>, S::Value) -> PropertyResult)
where
    S::Value: std::fmt::Debug,
{
    // MERGEPATH_PROPERTY_ONLY=text: only the properties whose names hold it (a focused run).
    if std::env::var("MERGEPATH_PROPERTY_ONLY").is_ok_and(|only| !name.contains(&only)) {
        return;
    }
    for backend in testing::backends() {
        Check::new(format!("{name} on {}", backend.name()))
            .cases(cases(backend))
            .persist_beside(file!())
            .run(&strategy, |value| property(backend, value));
    }
}

/// The operations' properties for one key type and comparator.
fn merge_keys_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("merge_keys {key} {}", C::NAME), testing::two_sorted::<K, C>(testing::lengths::<K>(30_000), comp), |b, (x, y)| {
        testing::merge_keys(b, &x, &y, comp)
    });
}
fn merge_pairs_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("merge_pairs {key} {}", C::NAME), testing::two_sorted::<K, C>(testing::lengths::<K>(30_000), comp), |b, (x, y)| {
        testing::merge_pairs(b, &x, &y, comp)
    });
}
fn sort_keys_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("sort_keys {key} {}", C::NAME), testing::keys::<K, C>(testing::lengths::<K>(100_000), comp), |b, keys| {
        testing::sort_keys(b, &keys, comp)
    });
}
fn sort_pairs_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("sort_pairs {key} {}", C::NAME), testing::keys::<K, C>(testing::lengths::<K>(100_000), comp), |b, keys| {
        testing::sort_pairs(b, &keys, comp)
    });
}
fn join_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    // Columns of up to 20,000 rows (scans of several tiles), the second cut short where their
    // pairs could pass 2^20 (one repeated key on both sides pairs every row with every row).
    let columns = testing::two_sorted::<K, C>(testing::lengths::<K>(20_000), comp).prop_map(|(a, mut b)| {
        b.truncate((1usize << 20) / a.len().max(1));
        (a, b)
    });
    check(&format!("join {key} {}", C::NAME), columns, |backend, (a, b)| testing::join(backend, &a, &b, comp));
}
fn sorted_search_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("sorted_search {key} {}", C::NAME), testing::two_sorted::<K, C>(testing::lengths::<K>(30_000), comp), |b, (needles, haystack)| {
        testing::sorted_search(b, &needles, &haystack, comp)
    });
}
fn set_operations_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("set_operations {key} {}", C::NAME), testing::two_sorted::<K, C>(testing::lengths::<K>(30_000), comp), |b, (x, y)| {
        testing::set_operations(b, &x, &y, comp)
    });
}
fn sort_segments_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("sort_segments {key} {}", C::NAME), testing::segmented_keys::<K, C>(testing::lengths::<K>(60_000), comp), |b, (keys, offsets)| {
        testing::sort_segments(b, &keys, &offsets, comp)
    });
}
fn partitions_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    let inputs = (testing::two_sorted::<K, C>(testing::lengths::<K>(30_000), comp), 1usize..5000);
    check(&format!("merge_path_partitions {key} {}", C::NAME), inputs, |b, ((x, y), spacing)| testing::merge_path_partitions(b, &x, &y, spacing, comp));
}
fn merge_multiway_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    let ways = proptest::prop_oneof![1usize..=4, 1usize..=70];
    check(&format!("merge_multiway {key} {}", C::NAME), testing::sorted_inputs::<K, C>(ways, testing::lengths::<K>(30_000), comp), |b, inputs| {
        testing::merge_multiway(b, &inputs, comp)
    });
}
fn multiway_partitions_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    let inputs = (testing::sorted_inputs::<K, C>(1usize..=24, testing::lengths::<K>(20_000), comp), 1usize..5000);
    check(&format!("multiway_partitions {key} {}", C::NAME), inputs, |b, (inputs, spacing)| testing::multiway_partitions(b, &inputs, spacing, comp));
}
fn comparator_of<K: TestKey, C: Comparator<K>>(key: &str, comp: C) {
    check(&format!("check_comparator {key} {}", C::NAME), testing::comparator_keys::<K>(), |b, keys| testing::check_comparator(b, &keys, comp));
}

/// Each operation on: 4-byte integers, 1-byte integers (few values: long runs of equal keys),
/// 8-byte integers, both float widths in both orders (NaN, ±0, ±inf), and a derived key with
/// its field order (stability: `x` is not in it) and a custom comparator.
macro_rules! for_key_types {
    ($of:ident) => {
        $of::<u32, _>("u32", Less);
        $of::<u8, _>("u8", Less);
        $of::<i64, _>("i64", Greater);
        $of::<f32, _>("f32", Greater);
        $of::<f64, _>("f64", Less);
        $of::<Hit, _>("Hit", Less);
        $of::<Hit, _>("Hit", ByX);
    };
}

/// Each operation on the records, in both orders between them, and by a custom comparator.
macro_rules! for_record_types {
    ($of:ident) => {
        $of::<Row, _>("Row", Greater);
        $of::<Wide, _>("Wide", Less);
        $of::<Row, _>("Row", ByPayload);
    };
}

#[test]
fn merge_keys() {
    for_key_types!(merge_keys_of);
    for_record_types!(merge_keys_of);
}

#[test]
fn merge_pairs() {
    for_key_types!(merge_pairs_of);
    for_record_types!(merge_pairs_of);
}

#[test]
fn sort_keys() {
    for_key_types!(sort_keys_of);
    for_record_types!(sort_keys_of);
}

#[test]
fn sort_pairs() {
    for_key_types!(sort_pairs_of);
    for_record_types!(sort_pairs_of);
}

#[test]
fn sorted_search() {
    for_key_types!(sorted_search_of);
    for_record_types!(sorted_search_of);
}

#[test]
fn join() {
    for_key_types!(join_of);
    for_record_types!(join_of);
}

#[test]
fn set_operations() {
    for_key_types!(set_operations_of);
    for_record_types!(set_operations_of);
}

#[test]
fn sort_segments() {
    for_key_types!(sort_segments_of);
    for_record_types!(sort_segments_of);
}

#[test]
fn merge_path_partitions() {
    for_key_types!(partitions_of);
    for_record_types!(partitions_of);
}

#[test]
fn merge_multiway() {
    for_key_types!(merge_multiway_of);
    for_record_types!(merge_multiway_of);
}

#[test]
fn multiway_partitions() {
    for_key_types!(multiway_partitions_of);
    for_record_types!(multiway_partitions_of);
}

/// The built-in comparators and the derived ones are strict weak orders, their CUDA functors
/// agreeing with the Rust twins on the GPU (records: the order keys the device computes).
#[test]
fn comparators() {
    for_key_types!(comparator_of);
    comparator_of::<Hit, _>("Hit", Greater);
    comparator_of::<i8, _>("i8", Less);
    comparator_of::<u16, _>("u16", Greater);
    for_record_types!(comparator_of);
}

/// Segment lengths, mostly short, with empty runs and now and then one long segment; the
/// search's starts are their exclusive scan and its count their sum.
fn segment_lengths() -> impl Strategy<Value = Vec<usize>> {
    use proptest::prelude::*;
    prop::collection::vec(prop_oneof![4 => 0usize..4, 3 => 0usize..100, 1 => 0usize..20_000, 1 => Just(0usize)], 1..600)
}

#[test]
fn load_balancing_search() {
    check("load_balancing_search u32", segment_lengths(), |b, lengths| {
        let starts: Vec<u32> = lengths.iter().scan(0u32, |at, &len| Some(std::mem::replace(at, *at + len as u32))).collect();
        testing::load_balancing_search(b, lengths.iter().sum(), &starts)
    });
}

#[test]
fn interval_expand() {
    check("interval_expand u32 [u32; 3]", segment_lengths(), |b, lengths| {
        let starts: Vec<u32> = lengths.iter().scan(0u32, |at, &len| Some(std::mem::replace(at, *at + len as u32))).collect();
        testing::interval_expand(b, lengths.iter().sum(), &starts)
    });
}

#[test]
fn interval_move() {
    let inputs = (segment_lengths(), proptest::prelude::any::<u64>());
    check("interval gather, scatter and move u32", inputs, |b, (lengths, seed)| testing::interval_move(b, &lengths, seed));
}

/// An array's length (mostly short, now and then 20,000) and sorted positions in it, repeats
/// among them, each at most `n - 1 + end` (`end` 1: insert positions reach the end).
fn bulk_positions(end: usize) -> impl Strategy<Value = (usize, Vec<usize>)> {
    use proptest::prelude::*;
    let lengths = prop_oneof![3 => 0usize..40, 3 => 0usize..3000, 1 => Just(20_000usize), 1 => Just(0usize)];
    (lengths, prop::collection::vec(any::<u64>(), 0..600), 0u64..4).prop_map(move |(n, draws, spread)| {
        // A narrow range now and then: long runs of one position.
        let range = match spread {
            0 => 1.min(n + end) as u64,
            _ => (n + end) as u64,
        };
        let mut positions: Vec<usize> = if range == 0 { Vec::new() } else { draws.iter().map(|d| (d % range) as usize).collect() };
        positions.sort_unstable();
        (n, positions)
    })
}

#[test]
fn bulk_insert() {
    check("bulk_insert", bulk_positions(1), |b, (n, positions)| testing::bulk_insert(b, n, &positions));
}

#[test]
fn bulk_remove() {
    check("bulk_remove", bulk_positions(0), |b, (n, positions)| testing::bulk_remove(b, n, &positions));
}

/// Segment lengths and a seed for the values.
fn reduce_inputs() -> impl Strategy<Value = (Vec<usize>, u64)> {
    (segment_lengths(), proptest::prelude::any::<u64>())
}

#[test]
fn segmented_reduce() {
    use mergepath::Reduction::{Max, Min, Sum};
    for reduction in [Sum, Min, Max] {
        check(&format!("segmented_reduce u32 {reduction:?}"), reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<u32, _>(b, &lengths, seed, reduction, Less));
    }
    check("segmented_reduce i64 Sum", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<i64, _>(b, &lengths, seed, Sum, Less));
    check("segmented_reduce u16 Max greater", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<u16, _>(b, &lengths, seed, Max, Greater));
    check("segmented_reduce f64 Min", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<f64, _>(b, &lengths, seed, Min, Less));
    check("segmented_reduce Hit Max ByX", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<Hit, _>(b, &lengths, seed, Max, ByX));
    check("segmented_reduce Row Min greater", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<Row, _>(b, &lengths, seed, Min, Greater));
    check("segmented_reduce Row Max greater", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<Row, _>(b, &lengths, seed, Max, Greater));
    check("segmented_reduce Row Min ByPayload", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<Row, _>(b, &lengths, seed, Min, ByPayload));
    check("segmented_reduce Row Max ByPayload", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<Row, _>(b, &lengths, seed, Max, ByPayload));
    check("segmented_reduce Wide Max", reduce_inputs(), |b, (lengths, seed)| testing::segmented_reduce::<Wide, _>(b, &lengths, seed, Max, Less));
}

#[test]
fn runs() {
    check("runs u32", testing::keys::<u32, Less>(testing::lengths::<u32>(30_000), Less), |b, keys| testing::runs(b, &keys, Less));
    check("runs f32 greater", testing::keys::<f32, Greater>(testing::lengths::<f32>(30_000), Greater), |b, keys| testing::runs(b, &keys, Greater));
    check("runs Hit ByX", testing::keys::<Hit, ByX>(testing::lengths::<Hit>(30_000), ByX), |b, keys| testing::runs(b, &keys, ByX));
    check("runs Row greater", testing::keys::<Row, Greater>(testing::lengths::<Row>(30_000), Greater), |b, keys| testing::runs(b, &keys, Greater));
    check("runs Row ByPayload", testing::keys::<Row, ByPayload>(testing::lengths::<Row>(30_000), ByPayload), |b, keys| testing::runs(b, &keys, ByPayload));
    check("runs Wide", testing::keys::<Wide, Less>(testing::lengths::<Wide>(30_000), Less), |b, keys| testing::runs(b, &keys, Less));
}

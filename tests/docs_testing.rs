//! The example of docs/testing.md, verbatim down to the line that ends it;
//! `docs_show_this_example` (below that line) checks that the page still does.

use mergepath::testing::{self, Check};
use mergepath::Less;
use proptest::prelude::*;

/// A leaderboard entry: by score (highest first), then player; `ByLevel` orders by level alone.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
#[repr(C)]
#[key(order = "score desc, player")]
#[key(comparator(ByLevel, cuda = "a.level < b.level", rust = "|a, b| a.level < b.level"))]
struct Entry {
    score: f32,
    player: u32,
    level: u32,
}

#[test]
fn entry_comparators_are_strict_weak_orders() {
    // Irreflexive, asymmetric, transitive, incomparability transitive; on a GPU the CUDA
    // expression answers as the Rust closure on every pair.
    Check::new("Entry comparators").cases(300).run(testing::comparator_keys::<Entry>(), |keys| {
        testing::check_comparator(testing::gpu_or_host(), &keys, Less)?;
        testing::check_comparator(testing::gpu_or_host(), &keys, ByLevel)
    });
}

#[test]
fn sorting_by_level_is_stable() {
    // Lengths at the kernels' tile edges, sort-benchmark patterns, NaN and ±0 scores; values
    // are the input positions, so a reordering of equal levels is a failure.
    let entries = testing::keys::<Entry, _>(testing::lengths::<Entry>(50_000), ByLevel);
    Check::new("sort_pairs Entry ByLevel").cases(100).run(entries, |keys| testing::sort_pairs(testing::gpu_or_host(), &keys, ByLevel));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    #[test]
    fn merging_leaderboards((a, b) in testing::two_sorted::<Entry, _>(testing::lengths::<Entry>(20_000), Less)) {
        testing::merge_pairs(testing::gpu_or_host(), &a, &b, Less)?;
    }
}

// ---- the docs' example ends above ----

/// docs/testing.md shows this file's example, verbatim.
#[test]
fn docs_show_this_example() {
    let page = include_str!("../docs/testing.md");
    let file = include_str!("docs_testing.rs");
    let example = file.split_once("\n\n").unwrap().1.split_once("// ---- the docs' example ends").unwrap().0.trim_end();
    assert!(page.contains(&format!("```rust,ignore\n{example}\n```")), "docs/testing.md's example differs from tests/docs_testing.rs");
}

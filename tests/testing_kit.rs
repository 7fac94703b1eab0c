//! The testing kit itself, on the CPU: its strategies generate what they promise, its partition
//! checks accept the exact partitions and catch broken ones, and `Check` shrinks, reports and
//! persists failures.

use mergepath::partition::{merge_path_partitions_cpu, merge_path_tie, partition_count, TileShape};
use mergepath::testing::{self, Backend, Check, Pattern, TestKey};
use mergepath::{cpu, tuning, Greater, Less, Tie};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn is_sorted<K: TestKey>(v: &[K], comp: impl mergepath::Comparator<K>) -> bool {
    v.windows(2).all(|w| !comp.is_less(&w[1], &w[0]))
}

/// A runner drawing values from `seed`, to sample a strategy inside a property.
fn seeded_runner(seed: u64) -> proptest::test_runner::TestRunner {
    let rng = proptest::test_runner::TestRng::from_seed(Default::default(), &seed.to_le_bytes().repeat(4));
    proptest::test_runner::TestRunner::new_with_rng(Default::default(), rng)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn sorted_strategies_are_sorted((a, b) in testing::two_sorted::<f32, _>(testing::lengths::<f32>(3000), Greater), s in testing::sorted_keys::<i16, _>(testing::lengths::<i16>(3000), Less)) {
        prop_assert!(is_sorted(&a, Greater) && is_sorted(&b, Greater));
        prop_assert!(is_sorted(&s, Less));
    }

    #[test]
    fn lengths_stay_within_the_maximum(max in 0usize..20_000, seed in any::<u64>()) {
        let mut runner = seeded_runner(seed);
        let strategy = testing::lengths::<u64>(max);
        for _ in 0..20 {
            let n = strategy.new_tree(&mut runner).unwrap().current();
            prop_assert!(n <= max);
        }
    }

    #[test]
    fn segment_offsets_are_valid(n in 0usize..5000, seed in any::<u64>()) {
        let mut runner = seeded_runner(seed);
        let offsets = testing::segment_offsets(n).new_tree(&mut runner).unwrap().current();
        prop_assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{offsets:?}");
        prop_assert!(offsets.iter().all(|&o| o <= n), "{offsets:?}");
    }

    /// The patterns that reorder keep the drawn keys; the ordered ones are in order.
    #[test]
    fn patterns_arrange_the_drawn_keys(base in proptest::collection::vec(u32::key_strategy(), 0..2000), seed in any::<u64>()) {
        let sorted = cpu::sort_keys(&base, Less);
        for pattern in [Pattern::Ascending, Pattern::Descending, Pattern::Saw, Pattern::PipeOrgan, Pattern::NearlySorted, Pattern::Random] {
            let v = pattern.arrange(base.clone(), seed, Less);
            prop_assert_eq!(cpu::sort_keys(&v, Less), sorted.clone(), "{:?} is a permutation", pattern);
        }
        prop_assert_eq!(Pattern::Ascending.arrange(base.clone(), seed, Less), sorted.clone());
        let mut descending = sorted.clone();
        descending.reverse();
        prop_assert_eq!(Pattern::Descending.arrange(base.clone(), seed, Less), descending);
        let one = Pattern::MostlyOne.arrange(base.clone(), seed, Less);
        if base.len() >= 1000 {
            prop_assert!(one.iter().filter(|&&k| k == base[0]).count() * 100 >= 90 * base.len());
        }
        let few = Pattern::FewDistinct.arrange(base.clone(), seed, Less);
        let mut distinct = few.clone();
        distinct.sort_unstable();
        distinct.dedup();
        prop_assert!(distinct.len() <= 4);
    }

    /// The exact partitions pass the check, for both ties; moving one split by one item fails it.
    #[test]
    fn partition_checks_accept_exact_and_catch_moved_splits(
        (a, b) in testing::two_sorted::<u8, _>(testing::lengths::<u8>(3000), Less),
        spacing in 1usize..700,
        victim in any::<prop::sample::Index>(),
        up in any::<bool>(),
    ) {
        let less = |x: &u8, y: &u8| x < y;
        let total = a.len() + b.len();
        let exact: Vec<i64> = merge_path_partitions_cpu(&a, &b, spacing, less).into_iter().map(|i| i as i64).collect();
        testing::check_merge_partitions(&a, &b, spacing, &exact, Tie::AFirst, less)?;
        let b_first: Vec<i64> = (0..partition_count(total, spacing)).map(|p| merge_path_tie(&a, &b, (p * spacing).min(total), Tie::BFirst, less) as i64).collect();
        testing::check_merge_partitions(&a, &b, spacing, &b_first, Tie::BFirst, less)?;
        // A moved split is never the merge path's (the split of a diagonal is unique).
        let p = victim.index(exact.len());
        let mut moved = exact.clone();
        moved[p] += if up { 1 } else { -1 };
        prop_assert!(testing::check_merge_partitions(&a, &b, spacing, &moved, Tie::AFirst, less).is_err(), "moved split {p} accepted");
        if b_first != exact {
            prop_assert!(testing::check_merge_partitions(&a, &b, spacing, &exact, Tie::BFirst, less).is_err(), "A-first splits accepted as B first");
        }
    }

    /// The CPU tile loop of any shape passes the tile checks.
    #[test]
    fn tile_loops_pass_the_tile_checks((a, b) in testing::two_sorted::<i32, _>(testing::lengths::<i32>(5000), Less), threads in 1u32..70, vt in 1u32..12) {
        testing::check_merge_tiles(&a, &b, TileShape { threads, items_per_thread: vt }, |x, y| x < y)?;
    }
}

/// The lengths strategy hits the tiles of the tuning table ± 1 (here the merge tile of 4-byte
/// keys on sm_90) and powers of two ± 1.
#[test]
fn lengths_hit_tile_edges() {
    let tile = tuning::merge_shape(90, 4).tile();
    assert!(testing::tile_sizes::<u32>().contains(&tile));
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = testing::lengths::<u32>(100_000);
    let seen: std::collections::HashSet<usize> = (0..20_000).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect();
    for n in [tile - 1, tile, tile + 1, 1023, 1025, 0, 1] {
        assert!(seen.contains(&n), "length {n} never drawn");
    }
}

/// Derived keys get a strategy and specials from `#[derive(Key)]` (with the `testing` feature).
#[test]
fn derived_keys_have_strategies() {
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
    #[repr(C)]
    #[key(order = "score desc, id")]
    struct Scored {
        score: f64,
        id: u32,
        tag: u32,
    }
    let specials = Scored::specials();
    assert!(specials.iter().any(|s| s.score.is_nan() && s.id == 0 && s.tag == 0));
    assert!(specials.iter().any(|s| s.id == u32::MAX && s.score == 0.0));
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let keys: Vec<Scored> = (0..2000).map(|_| Scored::key_strategy().new_tree(&mut runner).unwrap().current()).collect();
    assert!(keys.iter().any(|k| k.tag != 0) && keys.iter().any(|k| k.score.is_sign_negative()));
    Check::new("sort_pairs Scored").cases(16).run(testing::keys::<Scored, _>(testing::lengths::<Scored>(5000), Greater), |keys| {
        testing::sort_pairs(Backend::Host, &keys, Greater)
    });
}

/// A failing property panics with the shrunk input and the seed, saves the failure beside the
/// source file given, and replays it first on the next run.
#[test]
fn check_reports_shrinks_and_persists_failures() {
    let dir = std::env::temp_dir().join(format!("mergepath-kit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("kit_persist.rs");
    std::fs::write(&source, "// a test source\n").unwrap();
    let source: &'static str = Box::leak(source.to_string_lossy().into_owned().into_boxed_str());
    // "No input holds a key above 100": fails, and shrinks to one key of 101.
    let property = |keys: Vec<u32>| -> Result<(), TestCaseError> {
        match keys.iter().find(|&&k| k > 100) {
            Some(k) => Err(TestCaseError::fail(format!("key {k} above 100"))),
            None => Ok(()),
        }
    };
    let run = || {
        std::panic::catch_unwind(|| {
            Check::new("kit failure").cases(500).persist_beside(source).run(proptest::collection::vec(0u32..1000, 0..50), property)
        })
    };
    let message = run().expect_err("the property fails");
    let message = message.downcast_ref::<String>().unwrap();
    assert!(message.contains("key 101 above 100"), "shrunk to the smallest failing key: {message}");
    assert!(message.contains("PROPTEST_RNG_SEED="), "{message}");
    let saved = std::fs::read_to_string(dir.join("kit_persist.proptest-regressions")).expect("failure persisted beside the source");
    assert!(saved.lines().any(|l| l.starts_with("cc ")), "{saved}");
    // Replayed first: the next run fails on the saved case.
    let again = run().expect_err("the saved failure is replayed");
    assert!(again.downcast_ref::<String>().unwrap().contains("above 100"));
    std::fs::remove_dir_all(&dir).unwrap();
}

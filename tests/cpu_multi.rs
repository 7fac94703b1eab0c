//! The CPU mirror of the sharded sort (`mergepath::multi::sort_shards_cpu`): ranks as threads,
//! against Rust's stable sort of the shards' concatenation, under proptest.

use mergepath::multi::{part_bounds, sort_shards_cpu};
use proptest::prelude::*;

/// A key (the high 32 bits) with its origin (shard << 16 | index, the low bits), ordered by
/// key alone, so stability is visible.
type Item = u64;

fn item(key: u64, origin: u64) -> Item {
    key << 32 | origin
}

fn by_key(a: &Item, b: &Item) -> bool {
    a >> 32 < b >> 32
}

fn check(shards: Vec<Vec<Item>>, is_less: fn(&Item, &Item) -> bool) {
    let mut want: Vec<Item> = shards.concat();
    want.sort_by(|a, b| mergepath::cpu::ordering_by(is_less, a, b));
    let ranks = shards.len();
    let parts = sort_shards_cpu(shards, is_less);
    assert_eq!(parts.len(), ranks);
    let bounds = part_bounds(want.len(), ranks);
    for (r, part) in parts.iter().enumerate() {
        assert_eq!(part.len(), bounds[r + 1] - bounds[r], "rank {r}'s share");
    }
    assert_eq!(parts.concat(), want, "the parts in rank order are the stable sort");
}

/// Shards of 1 to 7 ranks, 0 to 300 items each (empty shards too), keys drawn from `keys`
/// values (few: many ties across ranks), each item tagged with its shard and index.
fn shards(keys: u8) -> impl Strategy<Value = Vec<Vec<Item>>> {
    prop::collection::vec(prop::collection::vec(0..keys, 0..300), 1..8).prop_map(|shards| {
        shards
            .into_iter()
            .enumerate()
            .map(|(s, keys)| keys.into_iter().enumerate().map(|(i, k)| item(k as u64, (s as u64) << 16 | i as u64)).collect())
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sharded_sort_is_the_stable_sort(shards in shards(255)) {
        check(shards, by_key);
    }

    #[test]
    fn sharded_sort_with_many_ties(shards in shards(3)) {
        check(shards, by_key);
    }

    #[test]
    fn sharded_sort_descending(shards in shards(16)) {
        check(shards, |a, b| a >> 32 > b >> 32);
    }
}

#[test]
fn sharded_sort_edges() {
    // One rank; all shards empty; everything on one rank; one key everywhere; more ranks than items.
    check(vec![vec![item(3, 0), item(1, 1), item(2, 2)]], by_key);
    check(vec![vec![], vec![], vec![]], by_key);
    check(vec![(0..1000).map(|i| item(i * 7 % 256, i)).collect(), vec![], vec![]], by_key);
    check((0..5).map(|s| (0..100).map(|i| item(9, s << 16 | i)).collect()).collect(), by_key);
    check(vec![vec![item(1, 0)], vec![], vec![], vec![], vec![]], by_key);
    // Ranges wider than many rounds of candidates: 100,000 keys over 3 ranks, few distinct.
    check((0..3).map(|s| (0..100_000).map(|i| item(i * 2_654_435_761 % 1000, s << 20 | i)).collect()).collect(), by_key);
    // No ranks at all: no parts.
    assert!(sort_shards_cpu(Vec::<Vec<Item>>::new(), by_key).is_empty());
    assert_eq!(part_bounds(10, 0), [0]);
}

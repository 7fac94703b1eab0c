//! The CPU mirror of the sharded sort (`mergepath::multi::sort_shards_cpu`): ranks as threads,
//! against Rust's stable sort of the shards' concatenation, under proptest.

use mergepath::multi::{part_bounds, sort_shards_cpu};
use proptest::prelude::*;

/// Keys with their origin (shard, index), ordered by key alone, so stability is visible.
type Item = (u8, u32);

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
            .map(|(s, keys)| keys.into_iter().enumerate().map(|(i, k)| (k, (s as u32) << 16 | i as u32)).collect())
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sharded_sort_is_the_stable_sort(shards in shards(255)) {
        check(shards, |a, b| a.0 < b.0);
    }

    #[test]
    fn sharded_sort_with_many_ties(shards in shards(3)) {
        check(shards, |a, b| a.0 < b.0);
    }

    #[test]
    fn sharded_sort_descending(shards in shards(16)) {
        check(shards, |a, b| a.0 > b.0);
    }
}

#[test]
fn sharded_sort_edges() {
    // One rank; all shards empty; everything on one rank; one key everywhere; more ranks than items.
    check(vec![vec![(3, 0), (1, 1), (2, 2)]], |a, b| a.0 < b.0);
    check(vec![vec![], vec![], vec![]], |a, b| a.0 < b.0);
    check(vec![(0..1000).map(|i| ((i * 7 % 256) as u8, i)).collect(), vec![], vec![]], |a, b| a.0 < b.0);
    check((0..5).map(|s| (0..100).map(|i| (9, s << 16 | i)).collect()).collect(), |a, b| a.0 < b.0);
    check(vec![vec![(1, 0)], vec![], vec![], vec![], vec![]], |a, b| a.0 < b.0);
    // No ranks at all: no parts.
    assert!(sort_shards_cpu(Vec::<Vec<Item>>::new(), |a: &Item, b: &Item| a.0 < b.0).is_empty());
    assert_eq!(part_bounds(10, 0), [0]);
}

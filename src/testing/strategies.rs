//! Strategies for the inputs of the crate's operations: lengths at the kernels' edges, key
//! patterns of sort benchmarks, sorted inputs, segment offsets.

use super::keys::TestKey;
use crate::cpu::ordering;
use crate::key::{Comparator, Key};
use crate::tuning;
use proptest::collection::vec;
use proptest::prelude::*;

/// How a generated key sequence is arranged (in the comparator's order where it has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Keys as drawn.
    Random,
    /// Drawn from a pool of 1 to 4 keys.
    FewDistinct,
    /// Runs of equal keys, of random lengths up to a few hundred.
    LongRuns,
    /// In order.
    Ascending,
    /// In reverse order.
    Descending,
    /// Ascending runs of a random length, one after another.
    Saw,
    /// The first half ascending, the second descending.
    PipeOrgan,
    /// A pool of up to 64 keys drawn with Zipf weights (1, 1/2, 1/3, ...).
    Zipf,
    /// In order, then 5 % of the positions swapped with random others.
    NearlySorted,
    /// 95 % of the items one key.
    MostlyOne,
    /// Half of the items replaced by the type's [`TestKey::specials`].
    Specials,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 11] = [
        Pattern::Random,
        Pattern::FewDistinct,
        Pattern::LongRuns,
        Pattern::Ascending,
        Pattern::Descending,
        Pattern::Saw,
        Pattern::PipeOrgan,
        Pattern::Zipf,
        Pattern::NearlySorted,
        Pattern::MostlyOne,
        Pattern::Specials,
    ];

    /// Any pattern, shrinking toward [`Pattern::Random`].
    pub fn strategy() -> impl Strategy<Value = Pattern> + Clone {
        proptest::sample::select(Pattern::ALL.to_vec())
    }

    /// Arranges the drawn keys `base` (its length is the result's) by this pattern, with the
    /// random choices (pool draws, run lengths, swaps) from `seed`: deterministic, so a shrunk
    /// case replays exactly.
    pub fn arrange<K: TestKey, C: Comparator<K>>(self, mut base: Vec<K>, seed: u64, comp: C) -> Vec<K> {
        let n = base.len();
        if n == 0 {
            return base;
        }
        let mut rng = SplitMix(seed);
        let sort = |v: &mut [K]| v.sort_by(|x, y| ordering(&comp, x, y));
        match self {
            Pattern::Random => {}
            Pattern::FewDistinct => {
                let pool: Vec<K> = base[..n.min(1 + rng.below(4))].to_vec();
                base.iter_mut().for_each(|k| *k = pool[rng.below(pool.len())]);
            }
            Pattern::LongRuns => {
                let mut i = 0;
                while i < n {
                    let run = (1 + rng.below(400)).min(n - i);
                    let key = base[i];
                    base[i..i + run].iter_mut().for_each(|k| *k = key);
                    i += run;
                }
            }
            Pattern::Ascending => sort(&mut base),
            Pattern::Descending => {
                sort(&mut base);
                base.reverse();
            }
            Pattern::Saw => {
                let run = 1 + rng.below(n.div_ceil(2));
                base.chunks_mut(run).for_each(sort);
            }
            Pattern::PipeOrgan => {
                sort(&mut base);
                base[n / 2..].reverse();
            }
            Pattern::Zipf => {
                let pool: Vec<K> = base[..n.min(64)].to_vec();
                let cumulative: Vec<f64> = (1..=pool.len())
                    .scan(0.0, |sum, r| {
                        *sum += 1.0 / r as f64;
                        Some(*sum)
                    })
                    .collect();
                let total = cumulative[cumulative.len() - 1];
                for k in base.iter_mut() {
                    let u = rng.unit() * total;
                    *k = pool[cumulative.partition_point(|&c| c < u).min(pool.len() - 1)];
                }
            }
            Pattern::NearlySorted => {
                sort(&mut base);
                for _ in 0..n / 20 {
                    let (i, j) = (rng.below(n), rng.below(n));
                    base.swap(i, j);
                }
            }
            Pattern::MostlyOne => {
                let one = base[0];
                base.iter_mut().for_each(|k| {
                    if rng.below(100) < 95 {
                        *k = one;
                    }
                });
            }
            Pattern::Specials => {
                let specials = K::specials();
                if !specials.is_empty() {
                    base.iter_mut().for_each(|k| {
                        if rng.below(2) == 0 {
                            *k = specials[rng.below(specials.len())];
                        }
                    });
                }
            }
        }
        base
    }
}

/// SplitMix64: the patterns' random choices, from the generated seed (and the properties' own
/// draws from theirs).
pub(crate) struct SplitMix(pub(crate) u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The tiles of `K`'s kernels in the tuning table, for every architecture mergepath tunes
/// (sm_80 and sm_90) and every algorithm: merge, search, load-balancing, interval moves,
/// reduce-by-key's values, sets, sort and sort-pairs passes (and their four-way output tiles of
/// two tiles), blocksort, the ladder's tiles. Sorted, deduplicated.
pub fn tile_sizes<K: Key>() -> Vec<usize> {
    let bytes = std::mem::size_of::<K>();
    let mut tiles = Vec::new();
    for arch in [80, 90] {
        let shapes = [
            tuning::merge_shape(arch, bytes),
            tuning::search_shape(arch, bytes),
            tuning::load_balancing_shape(arch, bytes),
            tuning::interval_gather_shape(arch, bytes),
            tuning::interval_scatter_shape(arch, bytes),
            tuning::interval_move_shape(arch, bytes),
            tuning::reduce_runs_shape(arch, bytes),
            tuning::runs_shape(arch, bytes),
            tuning::sets_shape(arch, bytes),
            tuning::sort_shape(arch, bytes),
            tuning::sort_pairs_shape(arch, bytes),
            tuning::blocksort_shape(arch, bytes),
        ];
        tiles.extend(shapes.iter().map(|s| s.tile()));
        tiles.push(2 * tuning::sort_shape(arch, bytes).tile());
        tiles.push(2 * tuning::sort_pairs_shape(arch, bytes).tile());
        tiles.push(tuning::ladder_tile(arch, bytes));
        let ladder = tuning::ladder_shape(arch, bytes);
        tiles.push(ladder.threads as usize * ladder.values_per_thread as usize);
    }
    tiles.sort_unstable();
    tiles.dedup();
    tiles
}

/// Lengths up to `max` where kernels have edges: 0 to 8, each of [`tile_sizes`] of `K` ± 1
/// (and twice and three times them ± 1), 2^k ± 1, and any length up to `max`.
pub fn lengths<K: Key>(max: usize) -> BoxedStrategy<usize> {
    let mut edges: Vec<usize> = Vec::new();
    for tile in tile_sizes::<K>() {
        for m in [1, 2, 3] {
            edges.extend([m * tile - 1, m * tile, m * tile + 1]);
        }
    }
    edges.retain(|&n| n <= max);
    let powers: Vec<usize> = (1..usize::BITS).map(|k| 1usize << k).take_while(|&p| p <= max).flat_map(|p| [p - 1, p, p + 1]).filter(|&n| n <= max).collect();
    let mut choices: Vec<(u32, BoxedStrategy<usize>)> = vec![(3, (0..=max.min(8)).boxed()), (3, (0..=max).boxed())];
    if !edges.is_empty() {
        choices.push((3, proptest::sample::select(edges).boxed()));
    }
    if !powers.is_empty() {
        choices.push((2, proptest::sample::select(powers).boxed()));
    }
    proptest::strategy::Union::new_weighted(choices).boxed()
}

/// Keys of a length from `len`, arranged by any [`Pattern`] in `comp`'s order.
pub fn keys<K: TestKey, C: Comparator<K>>(len: impl Strategy<Value = usize> + 'static, comp: C) -> BoxedStrategy<Vec<K>> {
    keys_of(len, Pattern::strategy(), comp)
}

/// Keys of a length from `len` arranged by a pattern from `pattern`.
pub fn keys_of<K: TestKey, C: Comparator<K>>(
    len: impl Strategy<Value = usize> + 'static,
    pattern: impl Strategy<Value = Pattern> + 'static,
    comp: C,
) -> BoxedStrategy<Vec<K>> {
    (len, pattern, any::<u64>())
        .prop_flat_map(move |(n, pattern, seed)| vec(K::key_strategy(), n).prop_map(move |base| pattern.arrange(base, seed, comp)))
        .boxed()
}

/// Keys of a length from `len`, sorted by `comp` (stably: equal keys as the pattern put them).
pub fn sorted_keys<K: TestKey, C: Comparator<K>>(len: impl Strategy<Value = usize> + 'static, comp: C) -> BoxedStrategy<Vec<K>> {
    keys(len, comp)
        .prop_map(move |mut v| {
            v.sort_by(|x, y| ordering(&comp, x, y));
            v
        })
        .boxed()
}

/// Two inputs, each sorted by `comp`, of lengths from `len` each: drawn as one sequence and
/// split, so the few-distinct, run and Zipf patterns put equal keys in both.
pub fn two_sorted<K: TestKey, C: Comparator<K>>(len: impl Strategy<Value = usize> + Clone + 'static, comp: C) -> BoxedStrategy<(Vec<K>, Vec<K>)> {
    (len.clone(), len)
        .prop_flat_map(move |(a_len, b_len)| keys(Just(a_len + b_len), comp).prop_map(move |all| (a_len, all)))
        .prop_map(move |(a_len, mut a)| {
            let mut b = a.split_off(a_len);
            a.sort_by(|x, y| ordering(&comp, x, y));
            b.sort_by(|x, y| ordering(&comp, x, y));
            (a, b)
        })
        .boxed()
}

/// Segment offsets over `len` items: non-decreasing, within `0..=len`, as the segmented sorts
/// take them. Shapes: none, one segment of everything, many empty and one-item segments, random
/// cuts, cuts at multiples of a tile, offsets that leave items before the first or after the
/// last segment.
pub fn segment_offsets(len: usize) -> BoxedStrategy<Vec<usize>> {
    let cuts = vec(0..=len, 0..64).prop_map(|mut v| {
        v.sort_unstable();
        v
    });
    let whole = Just(vec![0, len]);
    let singles = (0..=len.min(300)).prop_map(move |k| (0..=k).chain(std::iter::once(len)).collect::<Vec<_>>());
    let empties = (0..=len, 1..16usize).prop_map(move |(at, n)| {
        let mut v = vec![0];
        v.extend(std::iter::repeat_n(at, n));
        v.push(len);
        v
    });
    let strided = (1..=len.max(1), any::<bool>()).prop_map(move |(stride, open)| {
        let mut v: Vec<usize> = (0..=len).step_by(stride).collect();
        if !open && v.last() != Some(&len) {
            v.push(len);
        }
        v
    });
    prop_oneof![Just(Vec::new()), whole, cuts.clone(), singles, empties, strided, cuts].boxed()
}

/// Keys of a length from `len` with segment offsets over them.
pub fn segmented_keys<K: TestKey, C: Comparator<K>>(len: impl Strategy<Value = usize> + 'static, comp: C) -> BoxedStrategy<(Vec<K>, Vec<usize>)> {
    keys(len, comp).prop_flat_map(|k| { let n = k.len(); (Just(k), segment_offsets(n)) }).boxed()
}

/// `k` inputs (k from `ways`), each sorted by `comp`, of `len` items in all: drawn as one
/// sequence in any [`Pattern`] and cut at random points (so inputs may be empty and equal keys
/// fall in several inputs).
pub fn sorted_inputs<K: TestKey, C: Comparator<K>>(
    ways: impl Strategy<Value = usize> + 'static,
    len: impl Strategy<Value = usize> + 'static,
    comp: C,
) -> BoxedStrategy<Vec<Vec<K>>> {
    (ways, len)
        .prop_flat_map(move |(k, n)| (keys(Just(n), comp), vec(0..=n, k.saturating_sub(1))))
        .prop_map(move |(all, mut cuts)| {
            cuts.sort_unstable();
            let mut inputs = Vec::with_capacity(cuts.len() + 1);
            let mut at = 0;
            for cut in cuts.into_iter().chain(std::iter::once(all.len())) {
                let mut input = all[at..cut].to_vec();
                input.sort_by(|x, y| ordering(&comp, x, y));
                inputs.push(input);
                at = cut;
            }
            inputs
        })
        .boxed()
}

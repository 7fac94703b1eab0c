//! One rank's part of a sort sharded across a group: the collectives a group offers, the exact
//! global splitters found by a distributed multiway selection over the ranks' sorted shards,
//! and the exchange plan that gives each rank its contiguous part of the global order. Written
//! once over [`Group`] and [`SortedShard`], so the CPU mirror (threads as ranks, slices) and a
//! group of GPUs (NCCL, device buffers) run the same steps.

use crate::key::ordering_by;
use crate::error::{Error, Result};
use bytemuck::Pod;

/// The collectives a sharded sort needs from a group of `size` ranks. Every rank calls each
/// collective in the same order (as NCCL's are called).
pub(crate) trait Group {
    /// This rank, in `0..size`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Every rank's `mine` (of one length on every rank), one after another in rank order.
    fn all_gather<T: Pod + Send>(&self, mine: &[T]) -> Result<Vec<T>>;
}

/// Ends a rank's local step collectively: every rank learns whether every other's step
/// succeeded, so that all leave the collective sequence together (a rank that returned alone
/// would leave the others waiting in their next collective). The local error where this rank
/// failed, else [`Error::RankFailed`] naming the first rank that did.
pub(crate) fn agree<T, G: Group>(group: &G, local: Result<T>) -> Result<T> {
    let failed = group.all_gather(&[u8::from(local.is_err())])?;
    match (local, failed.iter().position(|&f| f != 0)) {
        (Err(e), _) => Err(e),
        (Ok(_), Some(rank)) => Err(Error::RankFailed { rank }),
        (Ok(v), None) => Ok(v),
    }
}

/// A rank's sorted shard, as the splitter selection reads it: a few keys by index, and where
/// keys would fall among the shard's.
pub(crate) trait SortedShard<K> {
    /// The shard's items.
    fn len(&self) -> usize;
    /// The shard's keys at `indices` (each below `len`).
    fn keys_at(&self, indices: &[usize]) -> Result<Vec<K>>;
    /// For each of `needles` (sorted in the sort's order): how many of the shard's items go
    /// before it (lower bound) and how many are not after it (upper bound).
    fn bounds(&self, needles: &[K]) -> Result<Vec<(usize, usize)>>;
}

/// The candidates each rank puts forward per boundary and round of the selection: the items at
/// this many evenly spaced places of its remaining range, so each round narrows a rank's range
/// to at most 1/`CANDIDATES` of its width (a rank's items between two of its candidates):
/// `ceil(log_32 n) + 1` rounds, 7 for 2^30 items on a rank.
pub const CANDIDATES: usize = 32;

/// The most rounds of the selection: sorted shards need `ceil(log_32 n) + 1` (14 for 2^64);
/// unsorted ones, or a comparator that is not a strict weak order, stop here with splits that
/// are in range but not exact.
pub const SPLIT_ROUNDS: usize = 16;

/// The global ranks where the ranks' parts start: rank r's part is `[bounds[r], bounds[r + 1])`
/// of the `total` items, parts of equal size ±1 (`[0]` for no ranks).
pub fn part_bounds(total: usize, ranks: usize) -> Vec<usize> {
    (0..=ranks).map(|r| (total as u128 * r as u128 / ranks.max(1) as u128) as usize).collect()
}

/// The index of an empty candidate place (a range narrower than `CANDIDATES`, or finished).
const NO_CANDIDATE: u64 = u64::MAX;

/// This rank's splits of its sorted `shard` at each global rank of `ranks`: how many of its
/// items are among the first `ranks[b]` items of the merge of all ranks' shards (`total` items;
/// ties: lower ranks' items first, then by index, so the merge is the stable sort of the
/// shards' concatenation). Collective: every rank calls it with the same `ranks` and its own
/// shard.
///
/// Each rank keeps, per boundary, the range its split lies in. Each round every rank puts
/// forward up to [`CANDIDATES`] items evenly spaced over each of its unfinished ranges; the
/// ranks gather them, place every candidate in the merge (each rank counts its items before
/// it, the counts are gathered and summed), and every candidate then bounds every boundary's
/// ranges: one placed before `ranks[b]` lifts each rank's lower end past its own items before
/// it, one placed at or after lowers the upper ends to them. A rank's own candidates cut its
/// range to the gap between two of them, and a range no wider than `CANDIDATES` is finished in
/// one round. The splits never decrease along `ranks` and stay within the shard.
pub(crate) fn global_splits<K, G, S>(group: &G, shard: &S, total: usize, ranks: &[usize], is_less: &impl Fn(&K, &K) -> bool) -> Result<Vec<usize>>
where
    K: Pod + Send,
    G: Group,
    S: SortedShard<K>,
{
    let me = group.rank();
    let n = shard.len();
    let mut lo: Vec<usize> = ranks.iter().map(|&r| r.min(total).saturating_sub(total - n)).collect();
    let mut hi: Vec<usize> = ranks.iter().map(|&r| n.min(r)).collect();
    for _ in 0..SPLIT_ROUNDS {
        let places: Vec<u64> = lo.iter().zip(&hi).flat_map(|(&l, &h)| candidate_places(l, h)).collect();
        let mine: Vec<usize> = places.iter().filter(|&&i| i != NO_CANDIDATE).map(|&i| i as usize).collect();
        let mut keys = shard.keys_at(&mine)?.into_iter();
        let mine_keys: Vec<K> = places.iter().map(|&i| if i == NO_CANDIDATE { K::zeroed() } else { keys.next().unwrap_or_else(K::zeroed) }).collect();
        let all_places = group.all_gather(&places)?;
        if all_places.iter().all(|&i| i == NO_CANDIDATE) {
            break;
        }
        let all_keys = group.all_gather(&mine_keys)?;
        // Every candidate as (owner rank, index in its shard, key), in the merge's order of keys.
        let per_rank = places.len();
        let mut cands: Vec<(usize, u64, K)> = all_places
            .iter()
            .zip(&all_keys)
            .enumerate()
            .filter(|(_, (&i, _))| i != NO_CANDIDATE)
            .map(|(at, (&i, &k))| (at / per_rank, i, k))
            .collect();
        cands.sort_by(|x, y| ordering_by(is_less, &x.2, &y.2));
        let needles: Vec<K> = cands.iter().map(|c| c.2).collect();
        let bounds = shard.bounds(&needles)?;
        // This rank's items before each candidate in the merge (equal keys: lower ranks first).
        let before: Vec<u64> = cands
            .iter()
            .zip(&bounds)
            .map(|(&(owner, index, _), &(lower, upper))| match owner.cmp(&me) {
                std::cmp::Ordering::Equal => index,
                std::cmp::Ordering::Greater => upper as u64,
                std::cmp::Ordering::Less => lower as u64,
            })
            .collect();
        let gathered = group.all_gather(&before)?;
        for (c, (&(owner, _, _), &mine_before)) in cands.iter().zip(&before).enumerate() {
            let position: u64 = gathered.iter().skip(c).step_by(cands.len()).sum();
            let mine_before = mine_before as usize;
            for b in 0..ranks.len() {
                if position < ranks[b] as u64 {
                    // The candidate and everything before it are among the first ranks[b] items.
                    lo[b] = lo[b].max((mine_before + usize::from(owner == me)).min(hi[b]));
                } else {
                    hi[b] = hi[b].min(mine_before).max(lo[b]);
                }
            }
        }
    }
    // Splits along the boundaries never decrease, even where an unsorted shard left them inexact.
    let mut last = 0;
    Ok(lo
        .iter()
        .map(|&s| {
            last = s.max(last).min(n);
            last
        })
        .collect())
}

/// A rank's `CANDIDATES` places for a range `[lo, hi)`: `min(width, CANDIDATES)` indices evenly
/// spaced from `lo` (every index of a narrow range), the rest empty.
fn candidate_places(lo: usize, hi: usize) -> impl Iterator<Item = u64> {
    let width = hi - lo;
    let count = width.min(CANDIDATES);
    (0..CANDIDATES).map(move |j| if j < count { (lo + (width as u128 * j as u128 / count as u128) as usize) as u64 } else { NO_CANDIDATE })
}

/// A rank's plan of the exchange, from every rank's splits (`splits[r]` is rank r's `size + 1`
/// split points, from 0 to its shard's length): what it sends to each rank (ranges of its
/// sorted shard) and where what it receives from each rank goes (ranges of its part, in rank
/// order, so equal keys stay in rank order).
pub(crate) struct Exchange {
    pub send: Vec<std::ops::Range<usize>>,
    pub receive: Vec<std::ops::Range<usize>>,
}

impl Exchange {
    /// The plan of rank `me` from all ranks' splits, gathered one after another (`size + 1`
    /// each).
    pub(crate) fn new(me: usize, size: usize, all_splits: &[u64]) -> Exchange {
        let splits = |r: usize, j: usize| all_splits[r * (size + 1) + j] as usize;
        let send = (0..size).map(|j| splits(me, j)..splits(me, j + 1)).collect();
        let mut at = 0;
        let receive = (0..size)
            .map(|r| {
                let len = splits(r, me + 1) - splits(r, me);
                at += len;
                at - len..at
            })
            .collect();
        Exchange { send, receive }
    }

    /// The items this rank receives: its part's length.
    pub(crate) fn part_len(&self) -> usize {
        self.receive.last().map_or(0, |r| r.end)
    }
}

/// This rank's split points and the exchange they give: [`global_splits`] at the parts'
/// bounds ([`part_bounds`] of every rank's items), framed by 0 and the shard's length, then
/// gathered from every rank. Collective.
pub(crate) fn plan_exchange<K, G, S>(group: &G, shard: &S, is_less: &impl Fn(&K, &K) -> bool) -> Result<Exchange>
where
    K: Pod + Send,
    G: Group,
    S: SortedShard<K>,
{
    let total: u64 = group.all_gather(&[shard.len() as u64])?.iter().sum();
    let total = usize::try_from(total).map_err(|_| Error::TooLarge { what: "a sharded sort's total items" })?;
    let bounds = part_bounds(total, group.size());
    let mut splits = vec![0];
    splits.extend(global_splits(group, shard, total, &bounds[1..bounds.len() - 1], is_less)?);
    splits.push(shard.len());
    let splits: Vec<u64> = splits.into_iter().map(|s| s as u64).collect();
    Ok(Exchange::new(group.rank(), group.size(), &group.all_gather(&splits)?))
}

/// A sorted host slice as a shard (the CPU mirror's).
pub(crate) struct HostShard<'a, K, F> {
    pub keys: &'a [K],
    pub is_less: F,
}

impl<K: Copy, F: Fn(&K, &K) -> bool> SortedShard<K> for HostShard<'_, K, F> {
    fn len(&self) -> usize {
        self.keys.len()
    }

    fn keys_at(&self, indices: &[usize]) -> Result<Vec<K>> {
        Ok(indices.iter().map(|&i| self.keys[i]).collect())
    }

    fn bounds(&self, needles: &[K]) -> Result<Vec<(usize, usize)>> {
        let less = &self.is_less;
        Ok(needles
            .iter()
            .map(|k| (self.keys.partition_point(|x| less(x, k)), self.keys.partition_point(|x| !less(k, x))))
            .collect())
    }
}

//! One rank's part of a sort sharded across a group: the collectives a group offers, the exact
//! global splitters found by a distributed multiway selection over the ranks' sorted shards,
//! and the exchange and merge that give each rank its contiguous part of the global order.
//! Written once over [`Group`], so the CPU mirror (threads as ranks) and a group of GPUs run the
//! same steps.

/// The collectives a sharded sort needs from a group of `size` ranks. Every rank calls each
/// collective in the same order (as NCCL's are called).
pub(crate) trait Group {
    /// This rank, in `0..size`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Every rank's `mine`, in rank order.
    fn all_gather<T: Clone + Send + 'static>(&self, mine: T) -> Vec<T>;
    /// Sends `parts[j]` to rank j (`parts.len() == size`) and returns what each rank sent to
    /// this one, in rank order.
    fn all_to_all<T: Clone + Send + 'static>(&self, parts: Vec<Vec<T>>) -> Vec<Vec<T>>;
}

/// The most rounds of the splitter selection: sorted shards need O(log n) (every round removes
/// at least a quarter of the ranges' total width); unsorted ones, or a comparator that is not a
/// strict weak order, stop here with splits that are in range but not exact.
pub const SPLIT_ROUNDS: usize = 200;

/// The global ranks where the ranks' parts start: rank r's part is `[bounds[r], bounds[r + 1])`
/// of the `total` items, parts of equal size ±1 (`[0]` for no ranks).
pub fn part_bounds(total: usize, ranks: usize) -> Vec<usize> {
    (0..=ranks).map(|r| (total as u128 * r as u128 / ranks.max(1) as u128) as usize).collect()
}

/// A rank's candidate in one round of the selection for one boundary: the middle item of its
/// remaining range, its index in the shard and the range's width (its weight).
#[derive(Clone)]
struct Candidate<T> {
    key: T,
    index: usize,
    width: usize,
}

/// This rank's splits of its sorted `shard` at each global rank of `ranks`: how many of its items
/// are among the first `ranks[b]` items of the merge of all ranks' shards (`total` items) (ties: lower ranks'
/// items first, then by index, so the merge is the stable sort of the shards' concatenation).
/// Collective: every rank calls it with the same `ranks` and its own shard. Each round gathers
/// every rank's candidate for every unfinished boundary, takes their weighted median (in the
/// merge's order) as the pivot, counts each rank's items before it (one binary search) and
/// gathers the counts, which moves every rank's range for that boundary past or before the
/// pivot (the distributed form of `partition::multiway_split`). The splits never decrease
/// along `ranks` and stay within the shard.
pub(crate) fn global_splits<T, G>(group: &G, shard: &[T], total: usize, ranks: &[usize], is_less: &impl Fn(&T, &T) -> bool) -> Vec<usize>
where
    T: Clone + Send + 'static,
    G: Group,
{
    let me = group.rank();
    let n = shard.len();
    let mut lo: Vec<usize> = ranks.iter().map(|&r| r.min(total).saturating_sub(total - n)).collect();
    let mut hi: Vec<usize> = ranks.iter().map(|&r| n.min(r)).collect();
    for _ in 0..SPLIT_ROUNDS {
        let mine: Vec<Option<Candidate<T>>> = lo
            .iter()
            .zip(&hi)
            .map(|(&l, &h)| (l < h).then(|| Candidate { key: shard[l + (h - l) / 2].clone(), index: l + (h - l) / 2, width: h - l }))
            .collect();
        let all = group.all_gather(mine);
        if all.iter().all(|c| c.iter().all(Option::is_none)) {
            break;
        }
        // Per boundary: the pivot (its rank and candidate), or none where every range is empty.
        let pivots: Vec<Option<(usize, Candidate<T>)>> = (0..ranks.len()).map(|b| weighted_median(&all, b, is_less)).collect();
        let counts: Vec<usize> = pivots.iter().map(|p| p.as_ref().map_or(0, |(owner, c)| items_before(shard, me, *owner, c, is_less))).collect();
        let gathered = group.all_gather(counts.clone());
        for (b, pivot) in pivots.iter().enumerate() {
            let Some((owner, _)) = pivot else { continue };
            let position: usize = gathered.iter().map(|c| c[b]).sum();
            if position < ranks[b] {
                // The pivot and everything before it are among the first ranks[b] items.
                lo[b] = lo[b].max((counts[b] + usize::from(*owner == me)).min(hi[b]));
            } else {
                hi[b] = hi[b].min(counts[b]).max(lo[b]);
            }
        }
    }
    // Splits along the boundaries never decrease, even where an unsorted shard left them inexact.
    let mut last = 0;
    lo.iter().map(|&s| {
        last = s.max(last).min(n);
        last
    }).collect()
}

/// The candidate of boundary `b` at the middle of the candidates' total width, in the merge's
/// order (key, then rank, then index), with its rank; none if no rank has one.
fn weighted_median<T: Clone>(all: &[Vec<Option<Candidate<T>>>], b: usize, is_less: &impl Fn(&T, &T) -> bool) -> Option<(usize, Candidate<T>)> {
    let mut cands: Vec<(usize, &Candidate<T>)> = all.iter().enumerate().filter_map(|(r, c)| c[b].as_ref().map(|c| (r, c))).collect();
    if cands.is_empty() {
        return None;
    }
    // Stable by rank (the gather's order), so equal keys stay in rank order.
    cands.sort_by(|x, y| crate::cpu::ordering_by(is_less, &x.1.key, &y.1.key));
    let half = cands.iter().map(|(_, c)| c.width).sum::<usize>().div_ceil(2);
    let mut seen = 0;
    let (r, c) = cands.iter().find(|(_, c)| {
        seen += c.width;
        seen >= half
    })?;
    Some((*r, (*c).clone()))
}

/// The items of rank `me`'s sorted `shard` that go before the pivot (rank `owner`'s item at
/// `pivot.index`) in the merge: the pivot's index in its own shard, else the multiway merge's
/// rule (equal keys of lower ranks first).
fn items_before<T>(shard: &[T], me: usize, owner: usize, pivot: &Candidate<T>, is_less: &impl Fn(&T, &T) -> bool) -> usize {
    if me == owner {
        pivot.index
    } else {
        crate::partition::items_before(shard, me, &pivot.key, owner, is_less)
    }
}

/// This rank's part of the stable sort of all ranks' shards (in rank order), given its shard
/// already sorted stably: the global splitters ([`global_splits`] at [`part_bounds`]), the
/// exchange of every rank's slices ([`Group::all_to_all`]) and a stable merge of the received
/// runs (equal keys in rank order). Collective.
pub(crate) fn sorted_part<T, G>(group: &G, sorted_shard: &[T], is_less: &impl Fn(&T, &T) -> bool) -> Vec<T>
where
    T: Clone + Send + 'static,
    G: Group,
{
    let total: usize = group.all_gather(sorted_shard.len()).iter().sum();
    let bounds = part_bounds(total, group.size());
    let mut splits = vec![0];
    splits.extend(global_splits(group, sorted_shard, total, &bounds[1..bounds.len() - 1], is_less));
    splits.push(sorted_shard.len());
    let parts = splits.windows(2).map(|w| sorted_shard[w[0]..w[1]].to_vec()).collect();
    merge_runs(group.all_to_all(parts), is_less)
}

/// The stable merge of sorted runs, equal keys in run order: the stable sort of their
/// concatenation (as the CPU oracle of the multiway merge, `cpu::merge_multiway_keys`).
fn merge_runs<T>(runs: Vec<Vec<T>>, is_less: &impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut out: Vec<T> = runs.into_iter().flatten().collect();
    out.sort_by(|a, b| crate::cpu::ordering_by(is_less, a, b));
    out
}

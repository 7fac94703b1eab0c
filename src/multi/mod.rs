//! Sorts sharded across a group of ranks (GPUs, one per rank): each rank sorts its shard, the
//! ranks find the exact global splitters together (a distributed multiway selection over the
//! sorted shards: small all-gathers of candidates and counts, O(log n) rounds), exchange their
//! slices all-to-all and merge what they receive, so rank i ends with the i-th contiguous part of
//! the stable global order, parts of equal size ±1.
//!
//! The steps are written once over the group's collectives (a `Group`: all-gather and
//! all-to-all, as NCCL offers them). [`sort_shards_cpu`] is the CPU mirror: ranks as threads of
//! this process, the exchange through shared memory. A group of GPUs over NCCL is not built yet.

mod plan;
mod threads;

use crate::cpu::ordering_by;

pub use plan::{part_bounds, SPLIT_ROUNDS};

/// The CPU mirror of a sharded sort: `shards[r]` is rank r's input; returns each rank's part of
/// the stable sort of the shards' concatenation (in rank order), parts of equal size ±1
/// ([`part_bounds`]). One thread per rank sorts its shard (stably), then the ranks run the
/// distributed splitter selection, the all-to-all exchange and the merge. `is_less` must be a
/// strict weak order, as for the CPU oracles (`slice::sort_by` may panic on one that is not),
/// and must not panic (a rank that panics leaves the others waiting).
///
/// ```
/// use mergepath::multi::sort_shards_cpu;
/// let parts = sort_shards_cpu(vec![vec![5, 1, 4], vec![3, 3], vec![9, 0, 2, 8]], |a: &i32, b: &i32| a < b);
/// assert_eq!(parts, vec![vec![0, 1, 2], vec![3, 3, 4], vec![5, 8, 9]]);
/// ```
pub fn sort_shards_cpu<T, F>(shards: Vec<Vec<T>>, is_less: F) -> Vec<Vec<T>>
where
    T: Clone + Send + Sync + 'static,
    F: Fn(&T, &T) -> bool + Sync,
{
    let groups = threads::ThreadGroup::new(shards.len());
    let is_less = &is_less;
    std::thread::scope(|scope| {
        let ranks: Vec<_> = groups
            .into_iter()
            .zip(shards)
            .map(|(group, mut shard)| {
                scope.spawn(move || {
                    shard.sort_by(|a, b| ordering_by(is_less, a, b));
                    plan::sorted_part(&group, &shard, is_less)
                })
            })
            .collect();
        ranks.into_iter().map(|r| r.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

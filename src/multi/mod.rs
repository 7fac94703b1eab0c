//! Sorts sharded across a group of ranks (GPUs, one per rank): each rank sorts its shard, the
//! ranks find the exact global splitters together (a distributed multiway selection over the
//! sorted shards: small all-gathers of candidates and counts, `ceil(log_32 n) + 1` rounds),
//! exchange their slices all-to-all and merge what they receive, so rank i ends with the i-th
//! contiguous part of the stable global order, parts of equal size ±1 ([`part_bounds`]).
//!
//! The steps are written once over a group's collectives (all-gather, grouped send/receive, as
//! NCCL offers them) and a shard's reads (keys by index, bounds of a few keys):
//! - [`GpuGroup`]: the GPUs of this process joined by NCCL (cudarc's `nccl` bindings; the
//!   library is loaded at run time as `libnccl.so`), one thread per rank during a call; shards
//!   on the GPUs ([`GpuGroup::sort_keys`], [`GpuGroup::sort_pairs`]) or in host memory
//!   ([`GpuGroup::sort_host_keys`]). [`GpuGroup::sharing_one_gpu`] runs every step but NCCL's
//!   with several ranks on one GPU.
//! - [`GpuRank`]: one rank, joined through an [`NcclId`], for one process per GPU across hosts.
//! - [`sort_shards_cpu`]: the CPU mirror, ranks as threads, shards as slices.
//!
//! ```no_run
//! use mergepath::multi::GpuGroup;
//! use mergepath::Less;
//! # fn main() -> Result<(), mergepath::Error> {
//! let group = GpuGroup::new(&[0, 1])?;
//! let shards = [group.ranks()[0].gpu().upload(&[5u32, 1, 4])?, group.ranks()[1].gpu().upload(&[3u32, 9, 0])?];
//! let parts = group.sort_keys(&[&shards[0], &shards[1]], Less)?;
//! assert_eq!(group.ranks()[0].gpu().download(&parts[0])?, [0, 1, 3]);
//! assert_eq!(group.ranks()[1].gpu().download(&parts[1])?, [4, 5, 9]);
//! # Ok(()) }
//! ```
//!
//! Joining a group makes each device's memory pool keep the memory freed on it
//! ([`Gpu::keep_freed_memory`](crate::Gpu::keep_freed_memory)): a sort allocates and frees
//! buffers of its part's size, and the driver's unmapping and mapping of gigabytes again every
//! call measured slower than the sort's exchange.
//!
//! NVLink multicast (NVLS) is not used by these calls; on shared machines keep
//! `NCCL_NVLS_ENABLE=0` set so that NCCL does not use it either.

mod gpu;
mod nccl;
mod plan;
mod threads;

use crate::key::ordering_by;
use bytemuck::Pod;

pub use gpu::{GpuGroup, GpuRank};
pub use nccl::NcclId;
pub use plan::{part_bounds, CANDIDATES, SPLIT_ROUNDS};

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
    T: Pod + Send + Sync,
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
                    sorted_part_cpu(&group, &shard, is_less)
                })
            })
            .collect();
        ranks.into_iter().map(|r| r.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// One CPU rank's part, given its shard sorted stably: the exchange planned over the group,
/// the slices sent through host memory, the received runs merged stably (the stable sort of
/// their concatenation in rank order, as the CPU multiway oracle merges).
fn sorted_part_cpu<T: Pod + Send + Sync>(group: &threads::ThreadGroup, shard: &[T], is_less: &(impl Fn(&T, &T) -> bool + Sync)) -> Vec<T> {
    let host = plan::HostShard { keys: shard, is_less };
    // The thread group's collectives and a host shard's reads do not fail.
    let Ok(exchange) = plan::plan_exchange(group, &host, is_less) else { unreachable!("host collectives do not fail") };
    let runs = group.all_to_all(exchange.send.iter().map(|r| shard[r.clone()].to_vec()).collect());
    let mut part: Vec<T> = runs.concat();
    part.sort_by(|a, b| ordering_by(is_less, a, b));
    part
}

//! The sharded sort on GPUs: one rank per GPU ([`GpuRank`], joined through NCCL, so one
//! process per GPU across hosts runs the same code), and a group of the GPUs of this process
//! ([`GpuGroup`], one thread per rank).

use super::nccl::{Communicator, NcclId};
use super::plan::{agree, part_bounds, plan_exchange, Exchange, Group, SortedShard};
use super::threads::ThreadGroup;
use crate::checks::check_values;
use crate::device::temp::Temp;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::key::{value_word, Comparator, Key, Value};
use crate::slices::{sort_host_to_device, Lanes};
use bytemuck::Pod;
use cudarc::driver::{CudaSlice, CudaView, DevicePtr, DevicePtrMut, DeviceRepr};
use std::ops::Range;
use std::sync::Mutex;

/// How a rank reaches the others.
enum Link {
    /// An NCCL communicator (the rank's own: one GPU each).
    Nccl(Mutex<Communicator>),
    /// Ranks as threads of this process sharing one device: gathers through host memory, the
    /// exchange as device copies (the sharded sort's steps with several ranks on one GPU).
    SharedDevice(ThreadGroup),
}

/// One rank of a group of GPUs that sort together: a [`Gpu`] and the rank's link to the others.
/// Every rank calls the same collective methods ([`GpuRank::sort_keys`], ...) in the same
/// order, each with its own shard; rank i ends with the i-th contiguous part of the global
/// order.
pub struct GpuRank {
    gpu: Gpu,
    rank: usize,
    size: usize,
    link: Link,
}

impl std::fmt::Debug for GpuRank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRank").field("rank", &self.rank).field("size", &self.size).field("gpu", &self.gpu).finish_non_exhaustive()
    }
}

impl GpuRank {
    /// Joins rank `rank` of a group of `size` ranks bootstrapped by `id` (one [`NcclId`] made
    /// by one rank and passed to all), on `gpu`'s device: one process (or thread) per GPU, on
    /// one host or several. Blocks until every rank has joined. [`Error::NoNccl`] where the
    /// NCCL library cannot be loaded. The device's memory pool keeps freed memory from then on
    /// ([`Gpu::keep_freed_memory`]): every sort allocates and frees buffers of its part's size.
    pub fn join(gpu: Gpu, rank: usize, size: usize, id: &NcclId) -> Result<GpuRank> {
        gpu.keep_freed_memory(u64::MAX)?;
        let comm = Communicator::join(&gpu, rank, size, id)?;
        Ok(GpuRank { gpu, rank, size, link: Link::Nccl(Mutex::new(comm)) })
    }

    /// This rank's GPU.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// This rank, in `0..size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Collective: sorts the ranks' shards together by `comp`, stably (equal keys in rank
    /// order, then in their shard's order), and returns this rank's part of the global order:
    /// items `[bounds[rank], bounds[rank + 1])` of [`part_bounds`]`(total, size)`, parts of
    /// equal size ±1. `shard` (on this rank's GPU) is left as it is.
    ///
    /// Each rank sorts its shard (mergepath's sort), the ranks find the exact global splitters
    /// together (a distributed multiway selection over the sorted shards, a few small gathers
    /// per round), send each rank its slices in one grouped send/receive and merge what they
    /// received (four-way passes of the multiway merge, ceil(log4 size) of them). Device memory: the shard,
    /// its sorted copy and three times the part (records wider than the key tiles: also their
    /// comparable keys and positions, and a copy of what was received). Records' splitter bounds
    /// are sorted searches over the whole shard, a pass over it per round of the selection.
    /// Returns once the part is written. A
    /// comparator that is not a strict weak order gives parts of unspecified order and sizes.
    /// Where a rank fails before the exchange, every rank returns an error
    /// ([`Error::RankFailed`] on the others).
    pub fn sort_keys<K: Key + DeviceRepr, C: Comparator<K>>(&self, shard: &impl DevicePtr<K>, comp: C) -> Result<CudaSlice<K>> {
        let gpu = &self.gpu;
        if self.size == 1 {
            return sorted_copy(gpu, shard, |out| crate::sort_keys_copy(gpu, shard, out, comp));
        }
        let n = shard.len();
        let sorted = agree(
            self,
            (|| {
                let mut sorted = gpu.temp(n * std::mem::size_of::<K>())?;
                crate::sort_keys_copy(gpu, shard, &mut sorted.view_mut::<K>(n)?, comp)?;
                gpu.synchronize()?;
                Ok(sorted)
            })(),
        )?;
        self.part_of_sorted(sorted, n, comp)
    }

    /// This rank's part of the global order from its shard's `n` keys sorted in `sorted`:
    /// the splitters found with the other ranks, the exchange, and the merge of the runs
    /// received. Collective; returns once the part is written.
    fn part_of_sorted<K: Key + DeviceRepr, C: Comparator<K>>(&self, sorted: Temp<'_>, n: usize, comp: C) -> Result<CudaSlice<K>> {
        let gpu = &self.gpu;
        let sorted_keys = sorted.view::<K>(n)?;
        let plan = plan_exchange(self, &DeviceShard { gpu, keys: &sorted_keys, order: std::marker::PhantomData::<C> }, &|a: &K, b: &K| comp.is_less(a, b))?;
        let mut received = self.exchange(&plan, &sorted_keys)?;
        // The sorted shard's storage back to the pool before the merge's temporaries.
        drop(sorted);
        // SAFETY: the merge writes every item of the part.
        let mut out = unsafe { gpu.alloc_unwritten::<K>(plan.part_len()) }?;
        {
            let kb = std::mem::size_of::<K>();
            let (part, _read) = received.device_ptr_mut();
            let (to, _write) = out.device_ptr_mut(gpu.stream());
            merge_received::<K, C>(gpu, Lanes::separate(part, kb, 0, 0), Lanes::separate(to, kb, 0, 0), &plan.receive, comp)?;
        }
        gpu.synchronize()?;
        Ok(out)
    }

    /// [`GpuRank::sort_keys`] of key/value pairs: `values` (as long as `keys`; values of 4, 8
    /// or 16 bytes, which the merges move as words) follow their keys. Returns this rank's
    /// part of the keys and of the values.
    pub fn sort_pairs<K: Key + DeviceRepr, V: Value + DeviceRepr, C: Comparator<K>>(
        &self,
        keys: &impl DevicePtr<K>,
        values: &impl DevicePtr<V>,
        comp: C,
    ) -> Result<(CudaSlice<K>, CudaSlice<V>)> {
        let gpu = &self.gpu;
        if self.size == 1 {
            // SAFETY: the sort writes every value it is given room for (the keys' count, checked by it).
            let mut sorted_values = unsafe { gpu.alloc_unwritten::<V>(values.len()) }?;
            let sorted_keys = sorted_copy(gpu, keys, |out| crate::sort_pairs_copy(gpu, keys, values, out, &mut sorted_values, comp))?;
            return Ok((sorted_keys, sorted_values));
        }
        let n = keys.len();
        let sorted = agree(
            self,
            (|| {
                let (mut k, mut v) = (gpu.temp(n * std::mem::size_of::<K>())?, gpu.temp(values.len() * std::mem::size_of::<V>())?);
                crate::sort_pairs_copy(gpu, keys, values, &mut k.view_mut::<K>(n)?, &mut v.view_mut::<V>(values.len())?, comp)?;
                gpu.synchronize()?;
                Ok((k, v))
            })(),
        )?;
        let (sorted_keys, sorted_values) = (sorted.0.view::<K>(n)?, sorted.1.view::<V>(n)?);
        let plan = plan_exchange(self, &DeviceShard { gpu, keys: &sorted_keys, order: std::marker::PhantomData::<C> }, &|a: &K, b: &K| comp.is_less(a, b))?;
        let mut received_keys = self.exchange(&plan, &sorted_keys)?;
        let mut received_values = self.exchange(&plan, &sorted_values)?;
        drop(sorted);
        // SAFETY: the merge writes every key and value of the part.
        let (mut out_keys, mut out_values) = unsafe { (gpu.alloc_unwritten::<K>(plan.part_len())?, gpu.alloc_unwritten::<V>(plan.part_len())?) };
        {
            let (kb, word) = (std::mem::size_of::<K>(), const { value_word::<V>() });
            let ((keys, _rk), (values, _rv)) = (received_keys.device_ptr_mut(), received_values.device_ptr_mut());
            let ((to_keys, _wk), (to_values, _wv)) = (out_keys.device_ptr_mut(gpu.stream()), out_values.device_ptr_mut(gpu.stream()));
            merge_received::<K, C>(gpu, Lanes::separate(keys, kb, values, word), Lanes::separate(to_keys, kb, to_values, word), &plan.receive, comp)?;
        }
        gpu.synchronize()?;
        Ok((out_keys, out_values))
    }

    /// Sends each rank its ranges of `sorted` (the plan's send ranges) and returns this rank's
    /// part in temporary storage: what each rank sent, in rank order. Collective; waits for
    /// the exchange.
    fn exchange<T: Pod>(&self, plan: &Exchange, sorted: &CudaView<'_, T>) -> Result<Temp<'_>> {
        let gpu = &self.gpu;
        let item = std::mem::size_of::<T>();
        let mut received = agree(self, gpu.temp(plan.part_len() * item))?;
        let ranges = |base: u64, ranges: &[std::ops::Range<usize>]| -> Vec<(u64, usize)> { ranges.iter().map(|r| (base + (r.start * item) as u64, r.len() * item)).collect() };
        {
            let (from, _read) = sorted.device_ptr(gpu.stream());
            let (to, _write) = received.device_ptr_mut();
            // SAFETY: every range lies in `sorted` or `received` (the plan's ranges are within
            // the shard and the part), held here until the exchange is done (it waits for the
            // stream before returning).
            unsafe { self.send_receive(&ranges(from, &plan.send), &ranges(to, &plan.receive)) }?;
        }
        Ok(received)
    }

    /// One round of transfers: `sends[j]` (device address, bytes) to rank j, `receives[j]` from
    /// rank j. Collective; waits until done.
    ///
    /// # Safety
    /// Every range is memory of this rank's device, alive and untouched by anything else until
    /// this returns.
    unsafe fn send_receive(&self, sends: &[(u64, usize)], receives: &[(u64, usize)]) -> Result<()> {
        let gpu = &self.gpu;
        match &self.link {
            Link::Nccl(comm) => {
                let comm = comm.lock().unwrap_or_else(|e| e.into_inner());
                // SAFETY: forwarded from this function's contract.
                unsafe { comm.send_receive(gpu, sends, receives) }?;
                gpu.synchronize()
            }
            Link::SharedDevice(group) => {
                // Each rank pulls its slices from the others' buffers (one device, one address
                // space): the senders' data must be written before, and kept until all pulled.
                gpu.synchronize()?;
                let mine: Vec<u64> = sends.iter().flat_map(|&(at, len)| [at, len as u64]).collect();
                let all = group.all_gather(&mine)?;
                let pulled = (|| {
                    for (peer, &(to, len)) in receives.iter().enumerate() {
                        let entry = peer * mine.len() + 2 * self.rank;
                        if all[entry + 1] as usize != len {
                            return Err(Error::invalid("sends", format!("rank {peer} sends {} items to rank {}, which expects {len}", all[entry + 1], self.rank)));
                        }
                        crate::gather::copy_device(gpu, to, all[entry], len)?;
                    }
                    gpu.synchronize()
                })();
                agree(self, pulled)
            }
        }
    }
}

impl Group for GpuRank {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_gather<T: Pod + Send>(&self, mine: &[T]) -> Result<Vec<T>> {
        match &self.link {
            Link::Nccl(comm) => comm.lock().unwrap_or_else(|e| e.into_inner()).all_gather(&self.gpu, mine, self.size),
            Link::SharedDevice(group) => group.all_gather(mine),
        }
    }
}

/// A sorted copy of `input` made by `sort(output)` into a new buffer, waited for.
fn sorted_copy<K: Key + DeviceRepr>(gpu: &Gpu, input: &impl DevicePtr<K>, sort: impl FnOnce(&mut CudaSlice<K>) -> Result<()>) -> Result<CudaSlice<K>> {
    // SAFETY: the sort writes all of its input's count of keys.
    let mut out = unsafe { gpu.alloc_unwritten::<K>(input.len()) }?;
    sort(&mut out)?;
    gpu.synchronize()?;
    Ok(out)
}

/// Merges a part's received runs (`runs`: ranges of `part` in rank order, together the whole
/// part) into `out`, stably, as the multiway merge does: ceil(log4 ranks) four-way passes (one
/// for up to four ranks), the first reading the runs where they were received.
fn merge_received<K: Key, C: Comparator<K>>(gpu: &Gpu, part: Lanes, out: Lanes, runs: &[Range<usize>], _comp: C) -> Result<()> {
    let Some(total) = runs.iter().map(|r| r.end).max() else { return Ok(()) };
    let keys: Vec<_> = runs.iter().map(|r| part.keys(r.clone())).collect();
    let values: Vec<_> = runs.iter().map(|r| part.values(r.clone())).collect();
    let word = part.word;
    let out_values = (word > 0).then(|| out.values(0..total).ptr);
    crate::multiway::merge::<K, C>(gpu, &keys, (word > 0).then_some((&values[..], word)), out.keys(0..total).ptr, out_values)
}

/// A rank's sorted shard on its GPU, as the splitter selection reads it: keys by index through
/// the gather kernel, bounds by one binary search per needle.
struct DeviceShard<'a, K, C> {
    gpu: &'a Gpu,
    keys: &'a CudaView<'a, K>,
    /// The order, whose kernels read the shard.
    order: std::marker::PhantomData<C>,
}

impl<K: Key + DeviceRepr, C: Comparator<K>> SortedShard<K> for DeviceShard<'_, K, C> {
    fn len(&self) -> usize {
        self.keys.len()
    }

    fn keys_at(&self, indices: &[usize]) -> Result<Vec<K>> {
        let gpu = self.gpu;
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(&i) = indices.iter().find(|&&i| i >= self.keys.len()) {
            return Err(Error::invalid("indices", format!("candidate index {i} is past the shard of {} keys", self.keys.len())));
        }
        let positions = gpu.upload_table(&indices.iter().map(|&i| i as u64).collect::<Vec<u64>>())?;
        // SAFETY: the gather writes one key per position.
        let mut out = unsafe { gpu.alloc_unwritten::<K>(indices.len()) }?;
        {
            let kernels = gpu.kernels::<K, C>()?;
            let keys = gpu.input("shard", self.keys, K::DEVICE_ALIGN)?;
            let positions = gpu.input("positions", &positions, 8)?;
            let out = gpu.output("keys", &mut out, K::DEVICE_ALIGN, indices.len(), &[&keys, &positions])?;
            crate::gather::launch_gather(gpu, &kernels, (keys.ptr, keys.len), None, (positions.ptr, 8), out.ptr, indices.len(), std::mem::size_of::<K>())?;
        }
        gpu.download(&out)
    }

    fn bounds(&self, needles: &[K]) -> Result<Vec<(usize, usize)>> {
        let gpu = self.gpu;
        if needles.is_empty() {
            return Ok(Vec::new());
        }
        let needles = gpu.upload_table(needles)?;
        // SAFETY: the search writes both bounds of every needle.
        let (mut lower, mut upper) = unsafe { (gpu.alloc_unwritten::<i64>(needles.len())?, gpu.alloc_unwritten::<i64>(needles.len())?) };
        {
            let needles = gpu.input("needles", &needles, K::DEVICE_ALIGN)?;
            let keys = gpu.input("shard", self.keys, K::DEVICE_ALIGN)?;
            let lower = gpu.output("lower", &mut lower, 8, needles.len, &[&needles, &keys])?;
            let upper = gpu.output("upper", &mut upper, 8, needles.len, &[&needles, &keys, &lower])?;
            crate::search::launch_key_bounds::<K, C>(gpu, &needles, &keys, lower.ptr, upper.ptr)?;
        }
        let (lower, upper) = (gpu.download(&lower)?, gpu.download(&upper)?);
        Ok(lower.into_iter().zip(upper).map(|(l, u)| (l as usize, u as usize)).collect())
    }
}

/// A group of GPUs of this process that sort together: one [`GpuRank`] per GPU, each driven
/// by a thread of its own during a call. Shards and parts live on the ranks' GPUs
/// ([`GpuGroup::sort_keys`]), or come from and go back to host memory
/// ([`GpuGroup::sort_host_keys`]).
///
/// Two groups over the same devices must not sort at the same time (from two threads): each
/// device runs NCCL's kernels on its stream in the order they come, so one device can wait in
/// one group's collective for a device that waits in the other's (NCCL's rule for concurrent
/// communicators). Calls on one group, or on groups of other devices, are free of this.
#[derive(Debug)]
pub struct GpuGroup {
    ranks: Vec<GpuRank>,
}

impl GpuGroup {
    /// A group of the devices `ordinals` (distinct; rank i on `ordinals[i]`) joined by NCCL
    /// (`ncclCommInitAll`). [`Error::NoNccl`] where the NCCL library cannot be loaded (it is
    /// loaded as `libnccl.so`: NCCL's packages ship `libnccl.so.2`, so a link named
    /// `libnccl.so` to it must be on the loader's path). The devices' memory pools keep freed
    /// memory from then on, as for [`GpuRank::join`].
    pub fn new(ordinals: &[usize]) -> Result<GpuGroup> {
        if ordinals.is_empty() {
            return Err(Error::invalid("ordinals", "a group needs at least one device"));
        }
        if let Some(o) = ordinals.iter().enumerate().find_map(|(i, o)| ordinals[..i].contains(o).then_some(o)) {
            return Err(Error::invalid("ordinals", format!("device {o} is listed twice in {ordinals:?}; a group's devices must be distinct (NCCL runs one rank per device)")));
        }
        let gpus = ordinals.iter().map(|&o| Gpu::new(o)).collect::<Result<Vec<_>>>()?;
        gpus.iter().try_for_each(|gpu| gpu.keep_freed_memory(u64::MAX))?;
        let comms = Communicator::for_devices(ordinals)?;
        let size = gpus.len();
        let ranks = gpus.into_iter().zip(comms).enumerate().map(|(rank, (gpu, comm))| GpuRank { gpu, rank, size, link: Link::Nccl(Mutex::new(comm)) }).collect();
        Ok(GpuGroup { ranks })
    }

    /// A group of `ranks` ranks that share device `ordinal` (no NCCL: gathers through host
    /// memory, the exchange as device copies): the sharded sort's every step but NCCL's
    /// transfers with several ranks on one GPU, for tests and for machines with one GPU.
    pub fn sharing_one_gpu(ordinal: usize, ranks: usize) -> Result<GpuGroup> {
        if ranks == 0 {
            return Err(Error::invalid("ranks", "a group needs at least one rank, got 0"));
        }
        // A stream of its own per rank: on the context's default stream every rank's
        // synchronization would wait for all the others' work.
        let first = Gpu::new(ordinal)?;
        first.keep_freed_memory(u64::MAX)?;
        let ctx = first.context().clone();
        let gpus = (0..ranks).map(|_| Ok(Gpu::with_stream(ctx.new_stream()?))).collect::<Result<Vec<_>>>()?;
        let ranks = gpus.into_iter().zip(ThreadGroup::new(ranks)).enumerate().map(|(rank, (gpu, group))| GpuRank { gpu, rank, size: group.size(), link: Link::SharedDevice(group) }).collect();
        Ok(GpuGroup { ranks })
    }

    /// The ranks, in rank order (rank i's GPU is where shard i goes).
    pub fn ranks(&self) -> &[GpuRank] {
        &self.ranks
    }

    /// Sorts `shards` (shard i on rank i's GPU: [`Error::WrongContext`] otherwise; one per
    /// rank) together, as [`GpuRank::sort_keys`], and returns each rank's part on its GPU.
    pub fn sort_keys<K: Key + DeviceRepr, C: Comparator<K>, S: DevicePtr<K> + Sync>(&self, shards: &[&S], comp: C) -> Result<Vec<CudaSlice<K>>> {
        self.check_shards("shards", shards)?;
        self.each_rank(|rank| rank.sort_keys(shards[rank.rank], comp))
    }

    /// Sorts key/value pairs sharded over the ranks (`keys[i]` and `values[i]` on rank i's
    /// GPU), as [`GpuRank::sort_pairs`]; returns each rank's part of the keys and values.
    pub fn sort_pairs<K, V, C, S, SV>(&self, keys: &[&S], values: &[&SV], comp: C) -> Result<Vec<(CudaSlice<K>, CudaSlice<V>)>>
    where
        K: Key + DeviceRepr,
        V: Value + DeviceRepr,
        C: Comparator<K>,
        S: DevicePtr<K> + Sync,
        SV: DevicePtr<V> + Sync,
    {
        self.check_shards("keys", keys)?;
        self.check_shards("values", values)?;
        for (k, v) in keys.iter().zip(values) {
            check_values("values", k.len(), v.len())?;
        }
        self.each_rank(|rank| rank.sort_pairs(keys[rank.rank], values[rank.rank], comp))
    }

    /// Sorts `keys` in host memory across the group, stably: rank i uploads the i-th of equal
    /// pieces (±1), sorting its chunks as they arrive (as [`Gpu::sort_keys`] does), the ranks
    /// exchange and merge as in [`GpuRank::sort_keys`], and each downloads its part into its
    /// piece's place. On an error `keys` is left as it was, but for a device failure during the
    /// final downloads.
    pub fn sort_host_keys<K: Key + DeviceRepr, C: Comparator<K>>(&self, keys: &mut [K], comp: C) -> Result<()> {
        let bounds = part_bounds(keys.len(), self.ranks.len());
        let mut pieces = Vec::with_capacity(self.ranks.len());
        let mut rest = keys;
        for w in bounds.windows(2) {
            let (piece, tail) = rest.split_at_mut(w[1] - w[0]);
            pieces.push(Mutex::new(piece));
            rest = tail;
        }
        self.each_rank(|rank| {
            let mut piece = pieces[rank.rank].lock().unwrap_or_else(|e| e.into_inner());
            let n = piece.len();
            let sorted = agree(rank, sort_host_to_device(&rank.gpu, &mut piece[..], comp))?;
            if rank.size == 1 {
                return rank.gpu.download_into(&sorted.view::<K>(n)?, &mut piece[..]);
            }
            let part = rank.part_of_sorted(sorted, n, comp)?;
            // Every part must fit its piece before any rank writes one back.
            let fits = match part.len() == piece.len() {
                true => Ok(()),
                false => Err(Error::invalid("comparator", format!("not a strict weak order: a part of {} keys was sorted for a piece of {}", part.len(), piece.len()))),
            };
            agree(rank, fits)?;
            rank.gpu.download_into(&part, &mut piece[..])
        })
        .map(drop)
    }

    /// Fails unless there is one buffer per rank, each of the rank's context.
    fn check_shards<T, S: DevicePtr<T>>(&self, what: &'static str, shards: &[&S]) -> Result<()> {
        if shards.len() != self.ranks.len() {
            return Err(Error::LengthMismatch { what, expected: self.ranks.len(), got: shards.len() });
        }
        self.ranks.iter().zip(shards).try_for_each(|(rank, shard)| rank.gpu.check_context(what, *shard))
    }

    /// Runs `work` on every rank, each in a thread of its own, and returns the ranks' results
    /// in rank order, or the first rank's error.
    fn each_rank<R: Send>(&self, work: impl Fn(&GpuRank) -> Result<R> + Sync) -> Result<Vec<R>> {
        let work = &work;
        std::thread::scope(|scope| {
            let threads: Vec<_> = self.ranks.iter().map(|rank| scope.spawn(move || work(rank))).collect();
            threads.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    }
}

//! The sharded sort on GPUs (`mergepath::multi`) against the stable sort of the shards'
//! concatenation: every rank's part (its size from `part_bounds`, its keys) and the parts in
//! rank order. A group of every visible GPU over NCCL, and groups of 2 to 7 ranks sharing one
//! GPU (every step but NCCL's transfers); keys and pairs, built-in and derived keys, custom
//! comparators, empty and uneven shards, host-resident input.

mod common;
#[path = "common/hit.rs"]
mod hit;
#[path = "common/records.rs"]
mod records;

use common::{gpu, Rng};
use hit::{hits, ByX, Hit};
use records::{ByPayload, Row, Wide};
use mergepath::cudarc::driver::{CudaContext, CudaSlice, DeviceRepr};
use mergepath::multi::{part_bounds, GpuGroup, GpuRank, NcclId};
use mergepath::{cpu, Comparator, Error, Gpu, Greater, Key, Less};

fn required() -> bool {
    std::env::var("MERGEPATH_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Held by every test that makes NCCL groups, so one test's groups run at a time: groups over
/// the same devices whose collectives run at once from different threads can deadlock (each
/// device runs one group's kernel while it waits for a device running the other's).
fn one_nccl_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static NCCL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    NCCL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A group of every visible GPU over NCCL, or `None` (skipped) without a GPU or without NCCL
/// (a failure instead under `MERGEPATH_REQUIRE_GPU=1`). Callers hold `one_nccl_test_at_a_time`.
fn nccl_group() -> Option<GpuGroup> {
    gpu()?;
    let count = CudaContext::device_count().expect("device count") as usize;
    match GpuGroup::new(&(0..count).collect::<Vec<_>>()) {
        Ok(group) => Some(group),
        Err(Error::NoNccl) if !required() => {
            eprintln!("skipped: no NCCL library (libnccl.so) on the loader's path");
            None
        }
        Err(e) => panic!("a group of {count} GPUs over NCCL: {e}"),
    }
}

fn shared_group(ranks: usize) -> Option<GpuGroup> {
    gpu()?;
    Some(GpuGroup::sharing_one_gpu(0, ranks).expect("a group sharing GPU 0"))
}

/// The expected parts: the stable sort of the shards' concatenation, cut at `part_bounds`.
fn expected_parts<K: Key>(shards: &[Vec<K>], comp: impl Comparator<K>) -> Vec<Vec<K>> {
    let mut all = shards.concat();
    all.sort_by(|a, b| cpu::ordering_by(|x, y| comp.is_less(x, y), a, b));
    let bounds = part_bounds(all.len(), shards.len());
    bounds.windows(2).map(|w| all[w[0]..w[1]].to_vec()).collect()
}

fn upload_shards<T: DeviceRepr>(group: &GpuGroup, shards: &[Vec<T>]) -> Vec<CudaSlice<T>> {
    group.ranks().iter().zip(shards).map(|(rank, shard)| rank.gpu().upload(shard).unwrap()).collect()
}

/// Sorts `shards` across `group` (keys), checks each part against the stable sort.
fn check_keys<K: Key + DeviceRepr + std::fmt::Debug + PartialEq>(group: &GpuGroup, shards: &[Vec<K>], comp: impl Comparator<K>, what: &str) {
    let device = upload_shards(group, shards);
    let parts = group.sort_keys(&device.iter().collect::<Vec<_>>(), comp).unwrap();
    let want = expected_parts(shards, comp);
    for (r, (part, want)) in parts.iter().zip(&want).enumerate() {
        let got = group.ranks()[r].gpu().download(part).unwrap();
        assert_eq!(got.len(), want.len(), "{what}: rank {r}'s share of {} ranks", shards.len());
        // Compare bit patterns, so NaNs and signed zeros count.
        assert!(bytemuck::cast_slice::<K, u8>(&got) == bytemuck::cast_slice::<K, u8>(want), "{what}: rank {r}'s part of {} ranks", shards.len());
    }
    // The inputs are left as they were.
    for ((shard, buf), rank) in shards.iter().zip(&device).zip(group.ranks()) {
        let kept = rank.gpu().download(buf).unwrap();
        assert!(bytemuck::cast_slice::<K, u8>(&kept) == bytemuck::cast_slice::<K, u8>(shard), "{what}: a shard was changed");
    }
}

/// Sorts pairs (values: each key's origin, shard << 32 | index) and checks keys and values
/// against the stable sort: equal keys in rank order, then in their shard's order.
fn check_pairs<K: Key + DeviceRepr + std::fmt::Debug>(group: &GpuGroup, shards: &[Vec<K>], comp: impl Comparator<K>, what: &str) {
    let tagged: Vec<Vec<(K, u64)>> = shards.iter().enumerate().map(|(s, keys)| keys.iter().enumerate().map(|(i, &k)| (k, (s as u64) << 32 | i as u64)).collect()).collect();
    let mut want: Vec<(K, u64)> = tagged.concat();
    want.sort_by(|a, b| cpu::ordering_by(|x, y| comp.is_less(x, y), &a.0, &b.0));
    let keys = upload_shards(group, shards);
    let values = upload_shards(group, &tagged.iter().map(|t| t.iter().map(|p| p.1).collect()).collect::<Vec<Vec<u64>>>());
    let parts = group.sort_pairs(&keys.iter().collect::<Vec<_>>(), &values.iter().collect::<Vec<_>>(), comp).unwrap();
    let bounds = part_bounds(want.len(), shards.len());
    for (r, (k, v)) in parts.iter().enumerate() {
        let gpu = group.ranks()[r].gpu();
        let (k, v) = (gpu.download(k).unwrap(), gpu.download(v).unwrap());
        let want = &want[bounds[r]..bounds[r + 1]];
        assert_eq!(v, want.iter().map(|p| p.1).collect::<Vec<_>>(), "{what}: rank {r}'s values (stability) of {} ranks", shards.len());
        let want_keys: Vec<K> = want.iter().map(|p| p.0).collect();
        assert!(bytemuck::cast_slice::<K, u8>(&k) == bytemuck::cast_slice::<K, u8>(&want_keys), "{what}: rank {r}'s keys");
    }
}

/// Shards of the given lengths, keys from `key(rng)`.
fn make_shards<K>(lens: &[usize], rng: &mut Rng, mut key: impl FnMut(&mut Rng) -> K) -> Vec<Vec<K>> {
    lens.iter().map(|&n| (0..n).map(|_| key(rng)).collect()).collect()
}

/// Shard lengths for `ranks` ranks: even, uneven with empty shards, everything on one rank.
fn layouts(ranks: usize, n: usize) -> Vec<Vec<usize>> {
    vec![
        vec![n; ranks],
        (0..ranks).map(|r| if r % 2 == 1 { 0 } else { n * (r + 1) / 2 + 7 }).collect(),
        (0..ranks).map(|r| if r == ranks - 1 { n * ranks } else { 0 }).collect(),
    ]
}

#[test]
fn sharded_keys_on_one_shared_gpu() {
    let mut rng = Rng(0x5eed_0001);
    for ranks in [1, 2, 3, 4, 7] {
        let Some(group) = shared_group(ranks) else { return };
        for lens in layouts(ranks, 100_003) {
            check_keys(&group, &make_shards(&lens, &mut rng, |r| r.next() as u32), Less, "u32 uniform");
            check_keys(&group, &make_shards(&lens, &mut rng, |r| r.below(4) as u32), Less, "u32 four keys");
            check_keys(&group, &make_shards(&lens, &mut rng, |r| r.next() as i64), Greater, "i64 descending");
        }
        // Small and empty groups of items: fewer items than ranks, none at all.
        check_keys(&group, &make_shards(&vec![1; ranks], &mut rng, |r| r.below(3) as u32), Less, "one key each");
        check_keys(&group, &make_shards(&vec![0; ranks], &mut rng, |r| r.next() as u32), Less, "empty");
    }
}

#[test]
fn sharded_floats_and_derived_keys_on_one_shared_gpu() {
    let mut rng = Rng(0x5eed_0002);
    let Some(group) = shared_group(3) else { return };
    let specials = [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
    let floats = make_shards(&[50_000, 70_001, 1], &mut rng, |r| if r.below(8) == 0 { specials[r.below(6) as usize] } else { (r.below(2000) as f32) / 8.0 - 125.0 });
    check_keys(&group, &floats, Less, "f32 with NaNs and signed zeros");
    let derived: Vec<Vec<Hit>> = [40_000, 0, 90_000].iter().map(|&n| hits(n, &mut rng)).collect();
    check_keys(&group, &derived, Less, "derived key, field order");
    check_pairs(&group, &derived, ByX, "derived key, custom comparator on one field");
}

/// Records (`common/records.rs`), one of one order word and one of three, in both orders, and
/// the first by a custom comparator.
#[test]
fn sharded_records_on_one_shared_gpu() {
    let mut rng = Rng(0x5eed_0006);
    for ranks in [2, 3] {
        let Some(group) = shared_group(ranks) else { return };
        for lens in layouts(ranks, 30_011) {
            let rows = make_shards(&lens, &mut rng, |r| Row { score: r.below(8) as f32, id: r.below(4) as u32, seq: r.next(), payload: [r.next() as u32; 4] });
            check_keys(&group, &rows, Greater, "record of one word, descending");
            check_pairs(&group, &rows, Less, "record of one word, pairs");
            let rows = make_shards(&lens, &mut rng, |r| Row { score: r.below(8) as f32, id: r.below(4) as u32, seq: r.next(), payload: [r.below(6) as u32; 4] });
            check_keys(&group, &rows, ByPayload, "record by a custom comparator");
            check_pairs(&group, &rows, ByPayload, "record by a custom comparator, pairs");
            let wide = make_shards(&lens, &mut rng, |r| Wide { a: r.below(5), b: r.below(3) as i64 - 1, tag: r.below(3) as u16, seq: [r.next() as u8; 6] });
            check_keys(&group, &wide, Less, "record of three words");
            check_pairs(&group, &wide, Greater, "record of three words, pairs, descending");
        }
    }
}

#[test]
fn sharded_pairs_on_one_shared_gpu() {
    let mut rng = Rng(0x5eed_0003);
    for ranks in [2, 4] {
        let Some(group) = shared_group(ranks) else { return };
        for lens in layouts(ranks, 65_537) {
            check_pairs(&group, &make_shards(&lens, &mut rng, |r| r.below(16) as u32), Less, "u32 keys, few distinct");
            check_pairs(&group, &make_shards(&lens, &mut rng, |r| r.next()), Greater, "u64 keys descending");
        }
    }
}

#[test]
fn sharded_host_keys() {
    let _nccl = one_nccl_test_at_a_time();
    let mut rng = Rng(0x5eed_0004);
    for group in [shared_group(3), nccl_group()].into_iter().flatten() {
        let mut keys: Vec<u64> = (0..1_000_003).map(|_| rng.below(1 << 20)).collect();
        let mut want = keys.clone();
        want.sort();
        group.sort_host_keys(&mut keys, Less).unwrap();
        assert_eq!(keys, want, "{} ranks", group.ranks().len());
        let mut none: Vec<u32> = Vec::new();
        group.sort_host_keys(&mut none, Less).unwrap();
        // Records of three order words, few distinct orders: the stable order.
        let mut wide: Vec<Wide> = (0..300_007u64).map(|i| Wide { a: rng.below(5), b: rng.below(3) as i64 - 1, tag: rng.below(3) as u16, seq: [(i % 251) as u8; 6] }).collect();
        let mut want = wide.clone();
        want.sort_by(|a, b| cpu::ordering_by(|x, y| Less.is_less(x, y), a, b));
        group.sort_host_keys(&mut wide, Less).unwrap();
        assert!(wide == want, "records, {} ranks", group.ranks().len());
        // Records by a custom comparator (6 classes): the stable order.
        let mut rows: Vec<Row> = (0..200_003u64).map(|i| Row { score: rng.below(8) as f32, id: i as u32, seq: i, payload: [rng.below(6) as u32; 4] }).collect();
        let mut want = rows.clone();
        want.sort_by(|a, b| cpu::ordering_by(|x, y| ByPayload.is_less(x, y), a, b));
        group.sort_host_keys(&mut rows, ByPayload).unwrap();
        assert!(rows == want, "records by a custom comparator, {} ranks", group.ranks().len());
    }
}

#[test]
fn sharded_sort_over_nccl() {
    let _nccl = one_nccl_test_at_a_time();
    let Some(group) = nccl_group() else { return };
    let ranks = group.ranks().len();
    eprintln!("NCCL group of {ranks} GPU(s)");
    let mut rng = Rng(0x5eed_0005);
    for lens in layouts(ranks, 1 << 20) {
        check_keys(&group, &make_shards(&lens, &mut rng, |r| r.next() as u32), Less, "u32 uniform");
        check_keys(&group, &make_shards(&lens, &mut rng, |r| r.below(3)), Greater, "u64 three keys descending");
        check_pairs(&group, &make_shards(&lens, &mut rng, |r| r.below(100) as u32), Less, "u32 pairs");
    }
    let derived: Vec<Vec<Hit>> = (0..ranks).map(|_| hits(50_000, &mut rng)).collect();
    check_pairs(&group, &derived, ByX, "derived key, custom comparator");
}

/// The bootstrap of one process per GPU (here one thread per visible GPU): an `NcclId`, each
/// rank joining with its own `Gpu`, each sorting its shard.
#[test]
fn ranks_joined_by_an_nccl_id() {
    let _nccl = one_nccl_test_at_a_time();
    if gpu().is_none() {
        return;
    }
    let id = match NcclId::new() {
        Ok(id) => id,
        Err(Error::NoNccl) if !required() => return eprintln!("skipped: no NCCL library (libnccl.so) on the loader's path"),
        Err(e) => panic!("NcclId::new: {e}"),
    };
    let size = CudaContext::device_count().expect("device count") as usize;
    let mut rng = Rng(0x5eed_0006);
    let shards = make_shards(&vec![300_001; size], &mut rng, |r| r.below(1000) as u32);
    let parts: Vec<Vec<u32>> = std::thread::scope(|scope| {
        let threads: Vec<_> = shards
            .iter()
            .enumerate()
            .map(|(rank, shard)| {
                scope.spawn(move || {
                    let rank = GpuRank::join(Gpu::new(rank).unwrap(), rank, size, &id).unwrap();
                    let input = rank.gpu().upload(shard).unwrap();
                    rank.gpu().download(&rank.sort_keys(&input, Less).unwrap()).unwrap()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(parts, expected_parts(&shards, Less));
    // A rank past the group is refused before NCCL is called.
    assert!(matches!(GpuRank::join(Gpu::new(0).unwrap(), size, size, &id), Err(Error::InvalidArgument { .. })));
}

/// The device's release threshold: how much freed memory its pool keeps.
fn release_threshold(gpu: &Gpu) -> u64 {
    use mergepath::cudarc::driver::sys;
    gpu.context().bind_to_thread().unwrap();
    let mut pool = std::ptr::null_mut();
    // SAFETY: `pool` receives the handle of the device's current memory pool.
    unsafe { sys::cuDeviceGetMemPool(&mut pool, gpu.context().cu_device()) }.result().unwrap();
    let mut threshold = 0u64;
    // SAFETY: the release threshold is written to the u64 `threshold` points to.
    unsafe { sys::cuMemPoolGetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, (&mut threshold as *mut u64).cast()) }.result().unwrap();
    threshold
}

/// Groups make their devices' pools keep freed memory (no test here sets anything else, so
/// the check holds while other tests make groups).
#[test]
fn groups_keep_freed_memory() {
    let _nccl = one_nccl_test_at_a_time();
    let Some(group) = shared_group(2) else { return };
    assert_eq!(release_threshold(group.ranks()[0].gpu()), u64::MAX);
    if let Some(group) = nccl_group() {
        for rank in group.ranks() {
            assert_eq!(release_threshold(rank.gpu()), u64::MAX, "rank {}", rank.rank());
        }
    }
}

#[test]
fn sharded_sort_errors() {
    let Some(group) = shared_group(2) else { return };
    let gpu = group.ranks()[0].gpu();
    let a = gpu.upload(&[3u32, 1, 2]).unwrap();
    // One shard per rank.
    assert!(matches!(group.sort_keys(&[&a], Less), Err(Error::LengthMismatch { .. })));
    // Values as long as their keys: nothing sorted, shards kept.
    let v = gpu.upload(&[1u32, 2]).unwrap();
    let b = gpu.upload(&[5u32]).unwrap();
    let w = gpu.upload(&[9u32]).unwrap();
    assert!(matches!(group.sort_pairs(&[&a, &b], &[&v, &w], Less), Err(Error::LengthMismatch { .. })));
    assert_eq!(gpu.download(&a).unwrap(), [3, 1, 2]);
    // Groups of no ranks, and NCCL groups of repeated devices, are refused.
    assert!(matches!(GpuGroup::sharing_one_gpu(0, 0), Err(Error::InvalidArgument { .. })));
    assert!(matches!(GpuGroup::new(&[]), Err(Error::InvalidArgument { .. })));
    assert!(matches!(GpuGroup::new(&[0, 0]), Err(Error::InvalidArgument { .. })));
}

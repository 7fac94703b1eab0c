//! GPU multiway merge against the CPU oracle: k = 1 … 2,000 inputs (one to six four-way passes,
//! counts on either side of a power of four) with empty ones and equal keys across inputs (stability by input order through
//! positions as values), several key types and a derived key, runs in extreme patterns,
//! 4/8/16-byte values, the partitions against their CPU mirror, unsorted inputs keeping their
//! items, API validation; the host-slice merges beside each device one, and under a device cap
//! far below their data (many batches).

mod common;
#[path = "common/hit.rs"]
mod hit;

use common::{assert_same, gpu, Rng, TestKey};
use hit::{hits, Hit};
use mergepath::partition::{multiway_partitions, multiway_partitions_cpu};
use mergepath::{cpu, Comparator, Error, Gpu, Greater, Less};

/// `k` inputs of `total` keys in all, sorted by `comp`: every fifth input empty, the others of
/// random lengths, keys from `make` (few distinct values give equal keys across inputs).
fn inputs_of<K: mergepath::Key, C: Comparator<K>>(k: usize, total: usize, rng: &mut Rng, comp: C, mut make: impl FnMut(&mut Rng) -> K) -> Vec<Vec<K>> {
    let live: Vec<usize> = (0..k).filter(|t| k < 5 || t % 5 != 4).collect();
    let mut cuts: Vec<usize> = (1..live.len()).map(|_| rng.below(total as u64 + 1) as usize).collect();
    cuts.sort_unstable();
    let mut lens = vec![0; k];
    let mut at = 0;
    for (i, &t) in live.iter().enumerate() {
        let end = cuts.get(i).copied().unwrap_or(total);
        lens[t] = end - at;
        at = end;
    }
    lens.into_iter()
        .map(|n| {
            let mut v: Vec<K> = (0..n).map(|_| make(rng)).collect();
            v.sort_by(|x, y| cpu::ordering(&comp, x, y));
            v
        })
        .collect()
}

/// Merges `inputs` on the GPU, keys and pairs (positions as values, so stability shows), and
/// compares with the oracle.
fn check_merge<K: mergepath::testing::TestKey, C: Comparator<K>>(gpu: &Gpu, inputs: &[Vec<K>], comp: C, ctx: &str) {
    let refs: Vec<&[K]> = inputs.iter().map(|v| v.as_slice()).collect();
    let total: usize = refs.iter().map(|s| s.len()).sum();
    let mut first = 0u32;
    let values: Vec<Vec<u32>> = refs
        .iter()
        .map(|s| {
            let v = (first..first + s.len() as u32).collect();
            first += s.len() as u32;
            v
        })
        .collect();
    let value_refs: Vec<&[u32]> = values.iter().map(|v| v.as_slice()).collect();
    let d: Vec<_> = refs.iter().map(|s| gpu.upload(s).unwrap()).collect();
    let dv: Vec<_> = value_refs.iter().map(|s| gpu.upload(s).unwrap()).collect();
    let (dr, dvr): (Vec<_>, Vec<_>) = (d.iter().collect(), dv.iter().collect());
    // Two more than the total: the tail must stay as it was.
    let zero = <K as bytemuck::Zeroable>::zeroed();
    let mut out = gpu.upload(&vec![zero; total + 2]).unwrap();
    mergepath::merge_multiway_keys(gpu, &dr, &mut out, comp).unwrap();
    let got = gpu.download(&out).unwrap();
    let want = cpu::merge_multiway_keys(&refs, comp);
    assert_same(&got[..total], &want, &format!("{ctx}: keys"));
    assert_same(&got[total..], &[zero; 2], &format!("{ctx}: past the end"));
    let (mut ok, mut ov) = (gpu.upload(&vec![zero; total]).unwrap(), gpu.alloc_zeros::<u32>(total).unwrap());
    mergepath::merge_multiway_pairs(gpu, &dr, &dvr, &mut ok, &mut ov, comp).unwrap();
    let (want_k, want_v) = cpu::merge_multiway_pairs(&refs, &value_refs, comp);
    assert_same(&gpu.download(&ok).unwrap(), &want_k, &format!("{ctx}: pair keys"));
    assert_eq!(gpu.download(&ov).unwrap(), want_v, "{ctx}: values (positions)");
    check_host_slices(gpu, &refs, &value_refs, comp, ctx);
}

/// The host-slice multiway merges of `refs` (with `values`) against the oracle; the output's
/// tail past the total left as it was.
fn check_host_slices<K: mergepath::testing::TestKey, C: Comparator<K>>(gpu: &Gpu, refs: &[&[K]], values: &[&[u32]], comp: C, ctx: &str) {
    let total: usize = refs.iter().map(|s| s.len()).sum();
    let zero = <K as bytemuck::Zeroable>::zeroed();
    let mut out = vec![zero; total + 2];
    gpu.merge_multiway_keys(refs, &mut out, comp).unwrap();
    assert_same(&out[..total], &cpu::merge_multiway_keys(refs, comp), &format!("{ctx}: host-slice keys"));
    assert_same(&out[total..], &[zero; 2], &format!("{ctx}: host slices past the end"));
    let (mut ok, mut ov) = (vec![zero; total], vec![0u32; total]);
    gpu.merge_multiway_pairs(refs, values, &mut ok, &mut ov, comp).unwrap();
    let (want_k, want_v) = cpu::merge_multiway_pairs(refs, values, comp);
    assert_same(&ok, &want_k, &format!("{ctx}: host-slice pair keys"));
    assert_eq!(ov, want_v, "{ctx}: host-slice values (positions)");
}

/// A host-slice multiway merge under a device cap far below its data: many batches, each
/// merging its slice of every input; values of 4 and of 12 bytes (the latter by position).
#[test]
fn host_slice_multiway_merges_in_batches() {
    let Some(_) = gpu() else { return };
    let capped = Gpu::new(0).unwrap().with_memory_limit(24 << 20);
    let mut rng = Rng(77);
    for (k, total) in [(3, 12 << 20), (64, 10 << 20), (1500, 1 << 22)] {
        let inputs = inputs_of(k, total, &mut rng, Less, |r| r.below(1 << 20) as u32);
        let refs: Vec<&[u32]> = inputs.iter().map(|v| v.as_slice()).collect();
        let mut first = 0u32;
        let values: Vec<Vec<u32>> = refs.iter().map(|s| { first += s.len() as u32; (first - s.len() as u32..first).collect() }).collect();
        let value_refs: Vec<&[u32]> = values.iter().map(|v| v.as_slice()).collect();
        check_host_slices(&capped, &refs, &value_refs, Less, &format!("capped k={k} n={total}"));
        let wide: Vec<Vec<[u32; 3]>> = values.iter().map(|v| v.iter().map(|&p| [p, !p, p ^ 0x5555]).collect()).collect();
        let wide_refs: Vec<&[[u32; 3]]> = wide.iter().map(|v| v.as_slice()).collect();
        let (mut ok, mut ov) = (vec![0u32; total], vec![[0u32; 3]; total]);
        capped.merge_multiway_pairs(&refs, &wide_refs, &mut ok, &mut ov, Less).unwrap();
        let (want_k, want_v) = cpu::merge_multiway_pairs(&refs, &value_refs, Less);
        assert_eq!(ok, want_k, "capped k={k}: keys with 12-byte values");
        assert!(ov.iter().zip(&want_v).all(|(v, &p)| *v == [p, !p, p ^ 0x5555]), "capped k={k}: 12-byte values");
    }
}

fn check_ways<K: TestKey + mergepath::testing::TestKey, C: Comparator<K>>(gpu: &Gpu, comp: C, distinct: u64, seed: u64) {
    let mut rng = Rng(seed);
    for (k, total) in [(1, 100_000), (2, 5_000), (3, 1 << 20), (3, 17), (4, 8193), (5, 100_003), (16, 1 << 16), (17, 65_537), (64, (1 << 20) + 7), (257, 1 << 20), (1000, 1 << 20), (1000, 900), (1500, 300_000), (2000, 1 << 20)] {
        let inputs = inputs_of(k, total, &mut rng, comp, |r| K::from_bits(r.below(distinct)));
        check_merge(gpu, &inputs, comp, &format!("{} {} k={k} n={total}", std::any::type_name::<K>(), C::NAME));
    }
}

#[test]
fn multiway_merges_of_builtin_keys() {
    let Some(gpu) = gpu() else { return };
    check_ways::<u32, _>(gpu, Less, 1000, 1);
    check_ways::<u64, _>(gpu, Greater, 50, 2);
    check_ways::<i8, _>(gpu, Less, 256, 3);
    check_ways::<f64, _>(gpu, Greater, 3000, 4);
    // Floats with NaN of both signs, infinities and signed zeros.
    let mut rng = Rng(5);
    let specials = f32::specials();
    let inputs = inputs_of(40, 200_000, &mut rng, Less, |r| if r.below(4) == 0 { specials[r.below(specials.len() as u64) as usize] } else { f32::from_bits(r.next() as u32) });
    check_merge(gpu, &inputs, Less, "f32 specials");
}

#[test]
fn multiway_merges_of_derived_keys() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(6);
    for k in [2, 64, 1000] {
        let mut pool = hits(400_000, &mut rng).into_iter().cycle();
        let inputs = inputs_of(k, 400_000, &mut rng, Less, |_| pool.next().unwrap());
        check_merge::<Hit, _>(gpu, &inputs, Less, &format!("Hit k={k}"));
        let inputs = inputs_of(k, 300_000, &mut rng, hit::ByX, |_| pool.next().unwrap());
        check_merge::<Hit, _>(gpu, &inputs, hit::ByX, &format!("Hit ByX k={k}"));
    }
}

/// Runs whose sample boundaries (every s-th item of every input, which bracket the partition
/// searches) fall in extreme places: all keys equal, disjoint ranges in input order and in
/// reverse, perfectly interleaved, and one long input among many short ones.
#[test]
fn multiway_merges_of_patterned_runs() {
    let Some(gpu) = gpu() else { return };
    let (k, n) = (64u32, 50_000u32);
    let runs = |f: &dyn Fn(u32, u32) -> u32| -> Vec<Vec<u32>> { (0..k).map(|t| (0..n).map(|i| f(t, i)).collect()).collect() };
    check_merge(gpu, &runs(&|_, _| 7), Less, "all equal");
    check_merge(gpu, &runs(&|t, i| t * n + i), Less, "disjoint, in input order");
    check_merge(gpu, &runs(&|t, i| (k - 1 - t) * n + i), Less, "disjoint, reversed");
    check_merge(gpu, &runs(&|t, i| i * k + t), Less, "interleaved");
    check_merge(gpu, &runs(&|t, i| i / 1000 * k + t), Less, "interleaved blocks of equal keys");
    let mut lopsided: Vec<Vec<u32>> = (0..200).map(|t| vec![t; 3]).collect();
    lopsided.insert(100, (0..1_000_000).map(|i| i / 5000).collect());
    check_merge(gpu, &lopsided, Less, "one long input among short ones");
}

/// Values of 8 and 16 bytes follow their keys too.
#[test]
fn multiway_merges_wide_values() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(7);
    let inputs = inputs_of(37, 500_000, &mut rng, Less, |r| r.below(100) as u32);
    let refs: Vec<&[u32]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut first = 0u64;
    let wide: Vec<Vec<[u64; 2]>> = refs.iter().map(|s| (0..s.len()).map(|_| { first += 1; [first, !first] }).collect()).collect();
    let narrow: Vec<Vec<u64>> = wide.iter().map(|v| v.iter().map(|w| w[0]).collect()).collect();
    let d: Vec<_> = refs.iter().map(|s| gpu.upload(s).unwrap()).collect();
    let dr: Vec<_> = d.iter().collect();
    let total = first as usize;
    let (want_k, want_w) = cpu::merge_multiway_pairs(&refs, &wide.iter().map(|v| v.as_slice()).collect::<Vec<_>>(), Less);
    let dw: Vec<_> = wide.iter().map(|v| gpu.upload(v).unwrap()).collect();
    let (mut ok, mut ow) = (gpu.alloc_zeros::<u32>(total).unwrap(), gpu.alloc_zeros::<[u64; 2]>(total).unwrap());
    mergepath::merge_multiway_pairs(gpu, &dr, &dw.iter().collect::<Vec<_>>(), &mut ok, &mut ow, Less).unwrap();
    assert_eq!(gpu.download(&ok).unwrap(), want_k);
    assert_eq!(gpu.download(&ow).unwrap(), want_w, "16-byte values");
    let dn: Vec<_> = narrow.iter().map(|v| gpu.upload(v).unwrap()).collect();
    let mut on = gpu.alloc_zeros::<u64>(total).unwrap();
    mergepath::merge_multiway_pairs(gpu, &dr, &dn.iter().collect::<Vec<_>>(), &mut ok, &mut on, Less).unwrap();
    assert_eq!(gpu.download(&on).unwrap(), want_w.iter().map(|w| w[0]).collect::<Vec<_>>(), "8-byte values");
}

/// The GPU's multiway partitions are the CPU mirror's, row for row.
#[test]
fn multiway_partitions_match_the_cpu_mirror() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(8);
    for (k, total, spacing) in [(1, 10_000, 300), (3, 100_000, 2944), (64, 1 << 20, 2944), (1000, 200_000, 50_000), (1024, 100_000, 701)] {
        let inputs = inputs_of(k, total, &mut rng, Less, |r| r.below(500) as u32);
        let refs: Vec<&[u32]> = inputs.iter().map(|v| v.as_slice()).collect();
        let d: Vec<_> = refs.iter().map(|s| gpu.upload(s).unwrap()).collect();
        let got = gpu.download(&multiway_partitions(gpu, &d.iter().collect::<Vec<_>>(), spacing, Less).unwrap()).unwrap();
        // The mirror's rounds compare every pair of candidates: only where that stays quick.
        if (total / spacing + 1) * k * k <= 400_000_000 {
            let want: Vec<i64> = multiway_partitions_cpu(&refs, spacing, |x, y| x < y).into_iter().map(|s| s as i64).collect();
            assert_eq!(got, want, "k={k} n={total} spacing={spacing}");
        }
        mergepath::testing::check_multiway_partitions(&refs, spacing, &got, |x, y| x < y).unwrap_or_else(|e| panic!("k={k}: {e}"));
    }
    // More inputs than one kernel takes.
    let many: Vec<_> = (0..1025).map(|_| gpu.upload(&[1u32]).unwrap()).collect();
    assert!(matches!(multiway_partitions(gpu, &many.iter().collect::<Vec<_>>(), 64, Less), Err(Error::TooLarge { .. })));
}

/// The (key, value) pairs of `keys` and `values` (each input's values its tag and position),
/// sorted: a multiset to compare.
fn pairs_multiset(keys: &[u32], values: &[u32]) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_unstable();
    pairs
}

/// Unsorted inputs give an unspecified order of the same keys, each value with its key: never
/// an item lost or doubled, nor an access out of bounds (run under compute-sanitizer on the GPU
/// machine): three small inputs, sorted inputs but one with two items swapped (one tile sees
/// it), random ones of 2, 50 and 1,100 inputs (one, three and six passes); a sorted merge afterwards is
/// exact (the guard is reset).
#[test]
fn unsorted_inputs_keep_their_items() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(9);
    let mut cases: Vec<Vec<Vec<u32>>> = vec![vec![vec![5, 1, 4], vec![3, 9, 2, 7], vec![8, 6]]];
    let mut one_swap = inputs_of(8, 800_000, &mut rng, Less, |r| r.next() as u32);
    let long = one_swap.iter_mut().max_by_key(|v| v.len()).unwrap();
    let at = long.len() / 2;
    long.swap(at, at + 700);
    cases.push(one_swap);
    for k in [2, 50, 1100] {
        cases.push((0..k).map(|_| (0..rng.below(3000)).map(|_| rng.next() as u32 % 1000).collect()).collect());
    }
    for inputs in &cases {
        let ctx = format!("{} inputs", inputs.len());
        let values: Vec<Vec<u32>> = inputs.iter().enumerate().map(|(t, s)| (0..s.len() as u32).map(|i| (t as u32) << 20 | i).collect()).collect();
        let (d, dv): (Vec<_>, Vec<_>) = inputs.iter().zip(&values).map(|(k, v)| (gpu.upload(k).unwrap(), gpu.upload(v).unwrap())).unzip();
        let total: usize = inputs.iter().map(|v| v.len()).sum();
        let mut out = gpu.alloc_zeros::<u32>(total).unwrap();
        mergepath::merge_multiway_keys(gpu, &d.iter().collect::<Vec<_>>(), &mut out, Less).unwrap();
        let mut got = gpu.download(&out).unwrap();
        let mut want = inputs.concat();
        got.sort_unstable();
        want.sort_unstable();
        assert!(got == want, "keys, {ctx}");
        let mut out_values = gpu.alloc_zeros::<u32>(total).unwrap();
        mergepath::merge_multiway_pairs(gpu, &d.iter().collect::<Vec<_>>(), &dv.iter().collect::<Vec<_>>(), &mut out, &mut out_values, Less).unwrap();
        let got = pairs_multiset(&gpu.download(&out).unwrap(), &gpu.download(&out_values).unwrap());
        assert!(got == pairs_multiset(&inputs.concat(), &values.concat()), "pairs, {ctx}");
    }
    let inputs = inputs_of(10, 10_000, &mut rng, Less, |r| r.next() as u32);
    check_merge(gpu, &inputs, Less, "a correct merge after");
}

/// Merges small enough for compute-sanitizer: one to four passes, keys and pairs, some runs
/// shorter than a tile and some across tile edges.
#[test]
fn multiway_merges_at_small_sizes() {
    let Some(gpu) = gpu() else { return };
    let mut rng = Rng(11);
    for (k, total) in [(2, 3000), (5, 20_000), (17, 40_000), (70, 9000)] {
        let inputs = inputs_of(k, total, &mut rng, Less, |r| r.below(5000) as u32);
        check_merge(gpu, &inputs, Less, &format!("k={k} n={total}"));
    }
}

#[test]
fn multiway_api_validation() {
    let Some(gpu) = gpu() else { return };
    let (a, b) = (gpu.upload(&[1u32, 2, 3]).unwrap(), gpu.upload(&[2u32]).unwrap());
    let va = gpu.upload(&[0u32; 3]).unwrap();
    let mut small = gpu.alloc_zeros::<u32>(3).unwrap();
    assert_eq!(mergepath::merge_multiway_keys(gpu, &[&a, &b], &mut small, Less), Err(Error::OutputTooSmall { what: "out", needed: 4, got: 3 }));
    let mut out = gpu.alloc_zeros::<u32>(4).unwrap();
    let mut out_v = gpu.alloc_zeros::<u32>(4).unwrap();
    assert!(matches!(mergepath::merge_multiway_pairs(gpu, &[&a, &b], &[&va], &mut out, &mut out_v, Less), Err(Error::LengthMismatch { .. })));
    assert!(matches!(mergepath::merge_multiway_pairs(gpu, &[&a, &b], &[&va, &va], &mut out, &mut out_v, Less), Err(Error::LengthMismatch { .. })));
    // No inputs, and only empty ones: nothing to do.
    let none: [&mergepath::cudarc::driver::CudaSlice<u32>; 0] = [];
    mergepath::merge_multiway_keys(gpu, &none, &mut out, Less).unwrap();
    let empty = gpu.upload::<u32>(&[]).unwrap();
    mergepath::merge_multiway_keys(gpu, &[&empty, &empty], &mut out, Less).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), [0; 4], "left alone");
    // The host-slice calls: the same errors, the outputs left as they were.
    let mut host_out = [7u32; 3];
    assert_eq!(gpu.merge_multiway_keys(&[&[1u32, 2, 3][..], &[2]], &mut host_out, Less), Err(Error::OutputTooSmall { what: "out", needed: 4, got: 3 }));
    let (mut host_k, mut host_v) = ([7u32; 4], [7u32; 4]);
    assert!(matches!(gpu.merge_multiway_pairs(&[&[1u32, 2, 3][..], &[2]], &[&[0u32; 3][..]], &mut host_k, &mut host_v, Less), Err(Error::LengthMismatch { .. })));
    assert!(matches!(gpu.merge_multiway_pairs(&[&[1u32, 2, 3][..], &[2]], &[&[0u32; 3][..], &[0; 3]], &mut host_k, &mut host_v, Less), Err(Error::LengthMismatch { .. })));
    assert_eq!((host_out, host_k, host_v), ([7; 3], [7; 4], [7; 4]), "host outputs left alone");
}

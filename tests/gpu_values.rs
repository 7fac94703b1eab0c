//! Values of any size (those not of 4, 8 or 16 bytes carried by position and gathered once),
//! against Rust's stable sort and the host backend: values of 1, 3, 12, 24, 40, 100 and 256
//! bytes (byte arrays, and 12- and 24-byte arrays of u32 and u64 for the wider gather words),
//! in device sorts in place and copying (mergesort and sample sort, both comparators),
//! segmented sorts, merges (one input a view at an odd offset), and host-slice sorts (in core,
//! and larger than a memory cap), merges and segmented sorts; keys with many duplicates, so a
//! value in the wrong place among equal keys shows. Skips without a GPU (fails with
//! MERGEPATH_REQUIRE_GPU=1).

mod common;

use common::{capped_gpu, gpu, Rng};
use mergepath::{host, Comparator, Gpu, Greater, Less, Value};
use mergepath::cudarc::driver::DeviceRepr;
use std::fmt::Debug;

/// Sizes of the sorts: empty, one, shorter than a tile, many tiles, many passes.
const SIZES: [usize; 5] = [0, 1, 1000, 100_003, 1 << 20];

/// A value of `V` whose bytes are drawn from item `i`'s hash: every value differs.
fn value<V: Value>(i: usize) -> V {
    let mut v = V::zeroed();
    let mut rng = Rng(i as u64 ^ 0x7a1e);
    for b in bytemuck::bytes_of_mut(&mut v) {
        *b = rng.next() as u8;
    }
    v
}

/// `n` keys of few distinct values and `n` distinct values.
fn pairs<V: Value>(n: usize, seed: u64) -> (Vec<u32>, Vec<V>) {
    let mut rng = Rng(seed);
    ((0..n).map(|_| rng.below(1000) as u32).collect(), (0..n).map(value).collect())
}

/// The stable sort of the pairs by `comp` on the CPU.
fn sorted<V: Value, C: Comparator<u32>>(keys: &[u32], values: &[V], comp: C) -> (Vec<u32>, Vec<V>) {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&i, &j| if comp.is_less(&keys[i], &keys[j]) { std::cmp::Ordering::Less } else if comp.is_less(&keys[j], &keys[i]) { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal });
    (order.iter().map(|&i| keys[i]).collect(), order.iter().map(|&i| values[i]).collect())
}

fn assert_pairs<V: Value + PartialEq + Debug>(got: (&[u32], &[V]), want: (&[u32], &[V]), ctx: &str) {
    assert_eq!(got.0.len(), want.0.len(), "{ctx}: key count");
    if let Some(i) = (0..want.0.len()).find(|&i| got.0[i] != want.0[i] || got.1[i] != want.1[i]) {
        panic!("{ctx}: first difference at {i}: got ({}, {:?}), want ({}, {:?})", got.0[i], got.1[i], want.0[i], want.1[i]);
    }
}

/// Every device algorithm that takes values of any size, with values of `V`.
fn device_algorithms<V: Value + DeviceRepr + PartialEq + Debug>(gpu: &Gpu, comp: impl Comparator<u32>) {
    let what = format!("{} bytes, {}", std::mem::size_of::<V>(), std::any::type_name::<V>());
    for n in SIZES {
        let ctx = format!("{what}, n={n}");
        let (keys, values) = pairs::<V>(n, n as u64);
        let (want_k, want_v) = sorted(&keys, &values, comp);

        // Mergesort and sample sort, in place and copying.
        for samplesort in [false, true] {
            let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&values).unwrap());
            if samplesort {
                mergepath::samplesort::sort_pairs(gpu, &mut dk, &mut dv, comp).unwrap();
            } else {
                mergepath::sort_pairs(gpu, &mut dk, &mut dv, comp).unwrap();
            }
            assert_pairs((&gpu.download(&dk).unwrap(), &gpu.download(&dv).unwrap()), (&want_k, &want_v), &format!("{ctx}, sort_pairs, samplesort {samplesort}"));

            let (ki, vi) = (gpu.upload(&keys).unwrap(), gpu.upload(&values).unwrap());
            let (mut ko, mut vo) = (gpu.alloc_zeros::<u32>(n + 3).unwrap(), gpu.upload(&vec![V::zeroed(); n + 3]).unwrap());
            if samplesort {
                mergepath::samplesort::sort_pairs_copy(gpu, &ki, &vi, &mut ko, &mut vo, comp).unwrap();
            } else {
                mergepath::sort_pairs_copy(gpu, &ki, &vi, &mut ko, &mut vo, comp).unwrap();
            }
            let (gk, gv) = (gpu.download(&ko).unwrap(), gpu.download(&vo).unwrap());
            assert_pairs((&gk[..n], &gv[..n]), (&want_k, &want_v), &format!("{ctx}, sort_pairs_copy, samplesort {samplesort}"));
            assert!(gv[n..].iter().all(|v| *v == V::zeroed()), "{ctx}: values past the output's length left as they were");
            assert_eq!(gpu.download(&vi).unwrap(), values, "{ctx}: the input values unchanged");
        }

        // Segments of 0..=300 keys.
        let mut rng = Rng(n as u64 ^ 0x5e9);
        let mut offsets = vec![0usize];
        while *offsets.last().unwrap() < n {
            offsets.push((offsets.last().unwrap() + rng.below(301) as usize).min(n));
        }
        let (mut wk, mut wv) = (keys.clone(), values.clone());
        host::sort_segments_pairs(&mut wk, &mut wv, &offsets, comp).unwrap();
        let (mut dk, mut dv) = (gpu.upload(&keys).unwrap(), gpu.upload(&values).unwrap());
        mergepath::sort_segments_pairs(gpu, &mut dk, &mut dv, &offsets, comp).unwrap();
        assert_pairs((&gpu.download(&dk).unwrap(), &gpu.download(&dv).unwrap()), (&wk, &wv), &format!("{ctx}, sort_segments_pairs"));

        // A merge of two sorted halves, B's values a view one item into its buffer.
        let half = n / 2;
        let (mut ak, mut av) = (keys[..half].to_vec(), values[..half].to_vec());
        let (mut bk, mut bv) = (keys[half..].to_vec(), values[half..].to_vec());
        host::sort_pairs(&mut ak, &mut av, comp).unwrap();
        host::sort_pairs(&mut bk, &mut bv, comp).unwrap();
        let (mut want_k, mut want_v) = (vec![0u32; n], vec![V::zeroed(); n]);
        host::merge_pairs(&ak, &av, &bk, &bv, &mut want_k, &mut want_v, comp).unwrap();
        let shifted: Vec<V> = std::iter::once(V::zeroed()).chain(bv.iter().copied()).collect();
        let (dak, dav, dbk, dbv) = (gpu.upload(&ak).unwrap(), gpu.upload(&av).unwrap(), gpu.upload(&bk).unwrap(), gpu.upload(&shifted).unwrap());
        let (mut ok, mut ov) = (gpu.alloc_zeros::<u32>(n).unwrap(), gpu.upload(&vec![V::zeroed(); n]).unwrap());
        mergepath::merge_pairs(gpu, &dak, &dav, &dbk, &dbv.slice(1..), &mut ok, &mut ov, comp).unwrap();
        assert_pairs((&gpu.download(&ok).unwrap(), &gpu.download(&ov).unwrap()), (&want_k, &want_v), &format!("{ctx}, merge_pairs"));

        // Host slices: the same merge and segmented sort, and the sort.
        let (mut hk, mut hv) = (vec![0u32; n], vec![V::zeroed(); n]);
        gpu.merge_pairs(&ak, &av, &bk, &bv, &mut hk, &mut hv, comp).unwrap();
        assert_pairs((&hk, &hv), (&want_k, &want_v), &format!("{ctx}, Gpu::merge_pairs"));
        let (mut hk, mut hv) = (keys.clone(), values.clone());
        gpu.sort_segments_pairs(&mut hk, &mut hv, &offsets, comp).unwrap();
        assert_pairs((&hk, &hv), (&wk, &wv), &format!("{ctx}, Gpu::sort_segments_pairs"));
        let (want_k, want_v) = sorted(&keys, &values, comp);
        let (mut hk, mut hv) = (keys.clone(), values.clone());
        gpu.sort_pairs(&mut hk, &mut hv, comp).unwrap();
        assert_pairs((&hk, &hv), (&want_k, &want_v), &format!("{ctx}, Gpu::sort_pairs"));
    }
}

macro_rules! value_sizes {
    ($($name:ident: $v:ty,)*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            device_algorithms::<$v>(gpu, Less);
            device_algorithms::<$v>(gpu, Greater);
        }
    )*};
}

value_sizes! {
    values_of_1_byte: [u8; 1],
    values_of_3_bytes: [u8; 3],
    values_of_12_bytes: [u8; 12],
    values_of_12_bytes_in_u32: [u32; 3],
    values_of_24_bytes: [u8; 24],
    values_of_24_bytes_in_u64: [u64; 3],
    values_of_40_bytes: [u8; 40],
    values_of_100_bytes: [u8; 100],
    values_of_256_bytes: [u8; 256],
}

/// Host-slice sorts larger than a memory cap (two and three runs merged from host memory)
/// carry values of 12 and 100 bytes by their positions.
#[test]
fn values_of_any_size_in_sorts_larger_than_a_memory_cap() {
    if gpu().is_none() {
        return;
    }
    for (runs, n) in [(2usize, 300_001usize), (3, 100_003)] {
        // The runs carry u32 positions: 4-byte words.
        let capped = capped_gpu(n, 4, 4, runs, 4096);
        let (keys, values) = pairs::<[u8; 12]>(n, 0xcab);
        let (want_k, want_v) = sorted(&keys, &values, Less);
        let (mut hk, mut hv) = (keys.clone(), values.clone());
        mergepath::slices::with_work_bytes(4096, || capped.sort_pairs(&mut hk, &mut hv, Less)).unwrap();
        assert_pairs((&hk, &hv), (&want_k, &want_v), &format!("runs={runs}, 12 bytes"));
        let (keys, values) = pairs::<[u8; 100]>(n, 0xcac);
        let (want_k, want_v) = sorted(&keys, &values, Greater);
        let (mut hk, mut hv) = (keys.clone(), values.clone());
        mergepath::slices::with_work_bytes(4096, || capped.sort_pairs(&mut hk, &mut hv, Greater)).unwrap();
        assert_pairs((&hk, &hv), (&want_k, &want_v), &format!("runs={runs}, 100 bytes"));
    }
}

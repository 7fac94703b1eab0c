//! Properties of the crate's operations: each runs the operation on a [`Backend`] and compares
//! the result with the sequential oracle [`crate::cpu`], bit for bit, failing with the first
//! difference.

use super::keys::TestKey;
use crate::cpu;
use crate::device::Gpu;
use crate::error::Error;
use crate::key::Comparator;
use crate::types::{Bound, SetOperation};
use proptest::test_runner::TestCaseError;
use std::fmt::Debug;

/// Where a property runs the operation: on a GPU (the device API: upload, launch, download) or
/// on the [`crate::host`] backend's CPU threads.
#[derive(Clone, Copy, Debug)]
pub enum Backend<'g> {
    /// The [`crate::host`] functions on slices.
    Host,
    /// The GPU functions on device buffers of this `Gpu`.
    Gpu(&'g Gpu),
}

/// Device 0, opened once per process for every test that asks; `None` where there is no usable
/// GPU, and a panic instead when the environment says one is required
/// (`MERGEPATH_REQUIRE_GPU=1`), so a GPU runner never passes by skipping.
pub fn gpu() -> Option<&'static Gpu> {
    static GPU: std::sync::OnceLock<Option<Gpu>> = std::sync::OnceLock::new();
    GPU.get_or_init(|| match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var("MERGEPATH_REQUIRE_GPU").is_ok_and(|v| v == "1") => panic!("MERGEPATH_REQUIRE_GPU=1 but no usable GPU: {e}"),
        Err(_) => None,
    })
    .as_ref()
}

/// The backends to test on: the host backend, and device 0 where there is a usable GPU. Without
/// one the list is the host alone, unless `MERGEPATH_REQUIRE_GPU=1` is set: then this panics,
/// so a GPU CI runner cannot pass by skipping the GPU.
pub fn backends() -> Vec<Backend<'static>> {
    let mut out = vec![Backend::Host];
    out.extend(gpu().map(Backend::Gpu));
    out
}

/// One backend: device 0 where there is a usable GPU, else the host backend (a panic instead
/// under `MERGEPATH_REQUIRE_GPU=1`, as [`backends`]).
pub fn gpu_or_host() -> Backend<'static> {
    gpu().map_or(Backend::Host, Backend::Gpu)
}

impl Backend<'_> {
    /// `"host"` or `"gpu"`, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Host => "host",
            Backend::Gpu(_) => "gpu",
        }
    }
}

/// A property's result: `Err` fails the proptest case (and starts shrinking).
pub type PropertyResult = Result<(), TestCaseError>;

/// `Err` of an operation as a failed case.
pub(crate) fn op_error(op: &str, backend: Backend<'_>, e: Error) -> TestCaseError {
    TestCaseError::fail(format!("{op} on {}: returned an error: {e}", backend.name()))
}

/// Compares `got` with `want` bit for bit (NaN equal to the same NaN, -0.0 unlike +0.0): the
/// first difference as a failed case (index, got, want).
pub fn assert_same_bits<T: bytemuck::Pod + Debug>(what: &str, got: &[T], want: &[T]) -> PropertyResult {
    if got.len() != want.len() {
        return Err(TestCaseError::fail(format!("{what}: got {} items, want {}", got.len(), want.len())));
    }
    match got.iter().zip(want).position(|(g, w)| bytemuck::bytes_of(g) != bytemuck::bytes_of(w)) {
        None => Ok(()),
        Some(i) => Err(TestCaseError::fail(format!(
            "{what}: first difference at index {i} of {}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        ))),
    }
}

/// Positions `first, first + 1, ...` as `u32` values: values that show where each item came
/// from, so a result's stability is checked with its keys.
fn positions(first: usize, len: usize) -> Vec<u32> {
    (first..first + len).map(|i| i as u32).collect()
}

/// Item `i` of the properties' inputs as a 12-byte value (carried by position).
pub(crate) fn item12(i: usize) -> [u32; 3] {
    [i as u32, (i as u32).wrapping_mul(0x9e37_79b9), !(i as u32)]
}

/// Item `i` of the properties' inputs as an 8-byte value (carried as a word); an odd
/// multiplier, so distinct items stay distinct.
pub(crate) fn item8(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// `items` in a new device buffer of at least one item (the first `items.len()` of it are
/// `items`), so empty inputs are views of a real allocation.
pub(crate) fn upload_padded<T: bytemuck::Pod + cudarc::driver::DeviceRepr>(gpu: &Gpu, items: &[T]) -> crate::Result<cudarc::driver::CudaSlice<T>> {
    match items.is_empty() {
        true => gpu.upload(&[T::zeroed()]),
        false => gpu.upload(items),
    }
}

/// Runs `f` on the GPU as one fallible block.
pub(crate) fn on_gpu<R>(op: &str, backend: Backend<'_>, f: impl FnOnce() -> crate::Result<R>) -> Result<R, TestCaseError> {
    f().map_err(|e| op_error(op, backend, e))
}

/// [`crate::load_balancing_search_ranks`] (or the host backend's, and on the GPU also the
/// segments alone and the host-slice methods) of `count` items over `starts` (the exclusive
/// scan of segment lengths summing to `count`) equals the sequential search.
pub fn load_balancing_search(backend: Backend<'_>, count: usize, starts: &[u32]) -> PropertyResult {
    let offsets: Vec<usize> = starts.iter().map(|&s| s as usize).chain([count]).collect();
    let (segments, ranks) = cpu::load_balancing_search(&offsets);
    let want = [segments, ranks].map(|v| v.into_iter().map(|i| i as u32).collect::<Vec<u32>>());
    let err = |e| op_error("load_balancing_search", backend, e);
    let got: Vec<[Vec<u32>; 2]> = match backend {
        Backend::Host => {
            let (mut s, mut r) = (vec![0u32; count], vec![0u32; count]);
            crate::host::load_balancing_search_ranks(count, starts, &mut s, &mut r).map_err(err)?;
            let mut alone = vec![0u32; count];
            crate::host::load_balancing_search(count, starts, &mut alone).map_err(err)?;
            vec![[s, r.clone()], [alone, r]]
        }
        Backend::Gpu(gpu) => on_gpu("load_balancing_search", backend, || {
            let on_device = gpu.upload(starts)?;
            let (mut s, mut r, mut alone) = (gpu.alloc_zeros::<u32>(count.max(1))?, gpu.alloc_zeros::<u32>(count.max(1))?, gpu.alloc_zeros::<u32>(count.max(1))?);
            crate::load_balancing_search_ranks(gpu, count, &on_device, &mut s, &mut r)?;
            crate::load_balancing_search(gpu, count, &on_device, &mut alone)?;
            let (mut hs, mut hr) = (vec![0u32; count], vec![0u32; count]);
            gpu.load_balancing_search_ranks(count, starts, &mut hs, &mut hr)?;
            let prefix = |b: &cudarc::driver::CudaSlice<u32>| gpu.download(b).map(|mut v| {
                v.truncate(count);
                v
            });
            let (s, r, alone) = (prefix(&s)?, prefix(&r)?, prefix(&alone)?);
            Ok(vec![[s, r.clone()], [alone, r], [hs, hr]])
        })?,
    };
    let b = backend.name();
    for (variant, [s, r]) in got.iter().enumerate() {
        assert_same_bits(&format!("load_balancing_search segments on {b} (variant {variant})"), s, &want[0])?;
        assert_same_bits(&format!("load_balancing_search ranks on {b} (variant {variant})"), r, &want[1])?;
    }
    Ok(())
}

/// [`crate::interval_expand`] (and on the GPU the host-slice method, or the host backend's) of
/// 12-byte values over `count` items and `starts` (as [`load_balancing_search`]'s) equals the
/// sequential expand.
pub fn interval_expand(backend: Backend<'_>, count: usize, starts: &[u32]) -> PropertyResult {
    let offsets: Vec<usize> = starts.iter().map(|&s| s as usize).chain([count]).collect();
    let values: Vec<[u32; 3]> = (0..starts.len() as u32).map(|s| [s, s.wrapping_mul(0x9e37_79b9), !s]).collect();
    let want = cpu::interval_expand(&values, &offsets);
    let got: Vec<Vec<[u32; 3]>> = match backend {
        Backend::Host => {
            let mut out = vec![[0u32; 3]; count];
            crate::host::interval_expand(count, starts, &values, &mut out).map_err(|e| op_error("interval_expand", backend, e))?;
            vec![out]
        }
        Backend::Gpu(gpu) => on_gpu("interval_expand", backend, || {
            let (on_device, device_values) = (gpu.upload(starts)?, gpu.upload(&values)?);
            let mut out = gpu.upload(&vec![[0u32; 3]; count.max(1)])?;
            crate::interval_expand(gpu, count, &on_device, &device_values, &mut out)?;
            let mut device = gpu.download(&out)?;
            device.truncate(count);
            let mut host_slices = vec![[0u32; 3]; count];
            gpu.interval_expand(count, starts, &values, &mut host_slices)?;
            Ok(vec![device, host_slices])
        })?,
    };
    for (variant, out) in got.iter().enumerate() {
        assert_same_bits(&format!("interval_expand on {} (variant {variant})", backend.name()), out, &want)?;
    }
    Ok(())
}

/// [`crate::segmented_reduce`] (on the GPU with `u32` and `u64` starts and the host-slice
/// method, or the host backend's) of values in segments of `lengths` (empty ones included)
/// equals the sequential fold of each segment, `empty` for the empty ones. About half the
/// values come from 16 keys of the type's strategy (so some are equal in order but not in
/// bytes: the fold must keep the first), the rest are the type's specials and random bit
/// patterns, all from `seed`; a float `Sum` is compared bit for bit, so it fits integer types
/// only.
pub fn segmented_reduce<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, lengths: &[usize], seed: u64, reduction: crate::Reduction, comp: C) -> PropertyResult {
    let offsets: Vec<usize> = std::iter::once(0).chain(lengths.iter().scan(0, |end, &l| {
        *end += l;
        Some(*end)
    })).collect();
    let count = *offsets.last().unwrap();
    let starts: Vec<u32> = offsets[..lengths.len()].iter().map(|&o| o as u32).collect();
    let values: Vec<K> = seeded_values(count, seed);
    let empty = seeded_key(&K::specials(), !seed);
    let want = cpu::segmented_reduce(&values, &offsets, empty, crate::reduce::fold_op(reduction, comp));
    let op = format!("segmented_reduce {reduction:?}");
    let segments = lengths.len();
    let got: Vec<Vec<K>> = match backend {
        Backend::Host => {
            let mut out = vec![empty; segments];
            crate::host::segmented_reduce(&starts, &values, &mut out, reduction, empty, comp).map_err(|e| op_error(&op, backend, e))?;
            vec![out]
        }
        Backend::Gpu(gpu) => on_gpu(&op, backend, || {
            let wide: Vec<u64> = starts.iter().map(|&s| s as u64).collect();
            let (narrow_starts, wide_starts, device_values) = (gpu.upload(&starts)?, gpu.upload(&wide)?, gpu.upload(&values)?);
            let mut results = Vec::new();
            let mut out = gpu.upload(&vec![empty; segments.max(1)])?;
            crate::segmented_reduce(gpu, &narrow_starts, &device_values, &mut out, reduction, empty, comp)?;
            results.push(gpu.download(&out)?[..segments].to_vec());
            let mut out = gpu.upload(&vec![empty; segments.max(1)])?;
            crate::segmented_reduce(gpu, &wide_starts, &device_values, &mut out, reduction, empty, comp)?;
            results.push(gpu.download(&out)?[..segments].to_vec());
            let mut host_slices = vec![empty; segments];
            gpu.segmented_reduce(&starts, &values, &mut host_slices, reduction, empty, comp)?;
            results.push(host_slices);
            Ok(results)
        })?,
    };
    for (variant, out) in got.iter().enumerate() {
        assert_same_bits(&format!("{op} on {} (variant {variant})", backend.name()), out, &want)?;
    }
    Ok(())
}

/// [`crate::unique`], [`crate::run_length_encode`] and [`crate::reduce_by_key`] (sums and
/// maxima of `u32` values; on the GPU also the host-slice methods, or the host backend's) of
/// `keys` as given and sorted by `comp` (long runs) equal the sequential runs (`chunk_by`); and
/// the keys reduced by key as values, minima by `comp`, are the runs' first keys (the first of
/// the least of equal keys, values of the key's own width).
pub fn runs<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, keys: &[K], comp: C) -> PropertyResult {
    let mut sorted = keys.to_vec();
    sorted.sort_by(|a, b| crate::key::ordering_by(|x: &K, y: &K| comp.is_less(x, y), a, b));
    for keys in [keys, &sorted[..]] {
        let values: Vec<u32> = (0..keys.len() as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let (want_keys, lengths) = cpu::run_length_encode(keys, comp);
        let want_lengths: Vec<u32> = lengths.iter().map(|&l| l as u32).collect();
        let runs = want_keys.len();
        let (_, want_sums) = cpu::reduce_by_key(keys, &values, u32::wrapping_add, comp);
        let (_, want_maxima) = cpu::reduce_by_key(keys, &values, u32::max, comp);
        // Each variant: (what, run count, keys, lengths or folds).
        let mut got: Vec<(String, usize, Vec<K>, Vec<u32>)> = Vec::new();
        let mut minima: Vec<(String, usize, Vec<K>)> = Vec::new();
        let n = keys.len();
        let err = |e| op_error("runs", backend, e);
        match backend {
            Backend::Host => {
                let (mut k, mut l) = (vec![keys.first().copied().unwrap_or_else(K::zeroed); n], vec![0u32; n]);
                let r = crate::host::unique(keys, &mut k, comp).map_err(err)?;
                got.push(("unique".into(), r, k[..r].to_vec(), want_lengths.clone()));
                let r = crate::host::run_length_encode(keys, &mut k, &mut l, comp).map_err(err)?;
                got.push(("run_length_encode".into(), r, k[..r].to_vec(), l[..r].to_vec()));
                let r = crate::host::reduce_by_key(keys, &values, &mut k, &mut l, crate::Reduction::Sum, comp, crate::Less).map_err(err)?;
                got.push(("reduce_by_key Sum".into(), r, k[..r].to_vec(), l[..r].to_vec()));
                let r = crate::host::reduce_by_key(keys, &values, &mut k, &mut l, crate::Reduction::Max, comp, crate::Less).map_err(err)?;
                got.push(("reduce_by_key Max".into(), r, k[..r].to_vec(), l[..r].to_vec()));
                let mut m = k.clone();
                let r = crate::host::reduce_by_key(keys, keys, &mut k, &mut m, crate::Reduction::Min, comp, comp).map_err(err)?;
                minima.push(("reduce_by_key Min of the keys".into(), r, m[..r].to_vec()));
            }
            Backend::Gpu(gpu) => on_gpu("runs", backend, || {
                let (dk, dv) = (gpu.upload(&if n == 0 { vec![K::zeroed()] } else { keys.to_vec() })?, gpu.upload(&values)?);
                let dk = dk.slice(..n);
                let (mut k, mut l) = (gpu.upload(&vec![K::zeroed(); n.max(1)])?, gpu.alloc_zeros::<u32>(n.max(1))?);
                let prefix = |gpu: &Gpu, k: &cudarc::driver::CudaSlice<K>, r: usize| gpu.download(k).map(|v| v[..r].to_vec());
                let r = crate::unique(gpu, &dk, &mut k, comp)?;
                got.push(("unique".into(), r, prefix(gpu, &k, r)?, want_lengths.clone()));
                let r = crate::run_length_encode(gpu, &dk, &mut k, &mut l, comp)?;
                got.push(("run_length_encode".into(), r, prefix(gpu, &k, r)?, gpu.download(&l)?[..r].to_vec()));
                let r = crate::reduce_by_key(gpu, &dk, &dv, &mut k, &mut l, crate::Reduction::Sum, comp, crate::Less)?;
                got.push(("reduce_by_key Sum".into(), r, prefix(gpu, &k, r)?, gpu.download(&l)?[..r].to_vec()));
                let mut m = gpu.upload(&vec![K::zeroed(); n.max(1)])?;
                let r = crate::reduce_by_key(gpu, &dk, &dk, &mut k, &mut m, crate::Reduction::Min, comp, comp)?;
                minima.push(("reduce_by_key Min of the keys".into(), r, prefix(gpu, &m, r)?));
                let (mut hk, mut hl) = (vec![K::zeroed(); n], vec![0u32; n]);
                let r = gpu.reduce_by_key(keys, &values, &mut hk, &mut hl, crate::Reduction::Max, comp, crate::Less)?;
                got.push(("reduce_by_key Max (host slices)".into(), r, hk[..r].to_vec(), hl[..r].to_vec()));
                let r = gpu.run_length_encode(keys, &mut hk, &mut hl, comp)?;
                got.push(("run_length_encode (host slices)".into(), r, hk[..r].to_vec(), hl[..r].to_vec()));
                Ok(())
            })?,
        }
        for (what, r, k, l) in got {
            let want = match what.as_str() {
                w if w.starts_with("reduce_by_key Sum") => &want_sums,
                w if w.starts_with("reduce_by_key Max") => &want_maxima,
                _ => &want_lengths,
            };
            if r != runs {
                return Err(TestCaseError::fail(format!("{what} on {}: {r} runs, want {runs}", backend.name())));
            }
            assert_same_bits(&format!("{what} keys on {}", backend.name()), &k, &want_keys)?;
            assert_same_bits(&format!("{what} lengths or folds on {}", backend.name()), &l, want)?;
        }
        for (what, r, m) in minima {
            if r != runs {
                return Err(TestCaseError::fail(format!("{what} on {}: {r} runs, want {runs}", backend.name())));
            }
            assert_same_bits(&format!("{what} on {}", backend.name()), &m, &want_keys)?;
        }
    }
    Ok(())
}

/// `count` keys from `seed`: about half from a pool of 16 that the key type's strategy draws
/// (derived keys' fields from small ranges, so some are equal in order but not in bytes, and
/// which of equal keys a fold keeps shows), the others [`seeded_key`]s.
fn seeded_values<K: TestKey>(count: usize, seed: u64) -> Vec<K> {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed.to_le_bytes(); 4].concat());
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = K::key_strategy();
    let pool: Vec<K> = (0..16).map(|_| strategy.new_tree(&mut runner).map_or_else(|_| K::zeroed(), |tree| tree.current())).collect();
    let specials = K::specials();
    (0..count as u64)
        .map(|i| {
            let at = seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            match split_mix(at) {
                z if z % 2 == 0 => pool[(z >> 8) as usize % pool.len()],
                _ => seeded_key(&specials, at),
            }
        })
        .collect()
}

/// SplitMix64's output function.
fn split_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A key from `seed`: one of `specials`, or a random bit pattern.
fn seeded_key<K: TestKey>(specials: &[K], seed: u64) -> K {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut next = || {
        z = split_mix(z);
        z
    };
    let pick = next();
    if pick % 4 == 0 && !specials.is_empty() {
        return specials[(pick >> 8) as usize % specials.len()];
    }
    let mut key = K::zeroed();
    for chunk in bytemuck::bytes_of_mut(&mut key).chunks_mut(8) {
        chunk.copy_from_slice(&next().to_le_bytes()[..chunk.len()]);
    }
    key
}

/// [`crate::merge_keys`] (or [`crate::host::merge_keys`]) of `a` and `b`, sorted by `comp`,
/// equals the stable sequential merge.
pub fn merge_keys<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, a: &[K], b: &[K], comp: C) -> PropertyResult {
    let want = cpu::merge_keys(a, b, comp);
    let got = match backend {
        Backend::Host => {
            let mut out = vec![K::zeroed(); a.len() + b.len()];
            crate::host::merge_keys(a, b, &mut out, comp).map_err(|e| op_error("merge_keys", backend, e))?;
            out
        }
        Backend::Gpu(gpu) => on_gpu("merge_keys", backend, || {
            let (da, db) = (gpu.upload(a)?, gpu.upload(b)?);
            let mut out = gpu.upload(&vec![K::zeroed(); a.len() + b.len()])?;
            crate::merge_keys(gpu, &da, &db, &mut out, comp)?;
            gpu.download(&out)
        })?,
    };
    assert_same_bits(&format!("merge_keys on {}", backend.name()), &got, &want)
}

/// [`crate::merge_pairs`] with positions as values: keys and values equal the stable
/// sequential merge's (so equal keys keep A's first, each input in its order).
pub fn merge_pairs<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, a: &[K], b: &[K], comp: C) -> PropertyResult {
    let (av, bv) = (positions(0, a.len()), positions(a.len(), b.len()));
    let (want_k, want_v) = cpu::merge_pairs(a, &av, b, &bv, comp);
    let n = a.len() + b.len();
    let (got_k, got_v) = match backend {
        Backend::Host => {
            let (mut k, mut v) = (vec![K::zeroed(); n], vec![0u32; n]);
            crate::host::merge_pairs(a, &av, b, &bv, &mut k, &mut v, comp).map_err(|e| op_error("merge_pairs", backend, e))?;
            (k, v)
        }
        Backend::Gpu(gpu) => on_gpu("merge_pairs", backend, || {
            let (da, dav, db, dbv) = (gpu.upload(a)?, gpu.upload(&av)?, gpu.upload(b)?, gpu.upload(&bv)?);
            let (mut k, mut v) = (gpu.upload(&vec![K::zeroed(); n])?, gpu.upload(&vec![0u32; n])?);
            crate::merge_pairs(gpu, &da, &dav, &db, &dbv, &mut k, &mut v, comp)?;
            Ok((gpu.download(&k)?, gpu.download(&v)?))
        })?,
    };
    let name = format!("merge_pairs on {}", backend.name());
    assert_same_bits(&format!("{name}: keys"), &got_k, &want_k)?;
    assert_same_bits(&format!("{name}: values (positions)"), &got_v, &want_v)
}

/// [`crate::sort_keys`] equals a stable sort by `comp`.
pub fn sort_keys<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, keys: &[K], comp: C) -> PropertyResult {
    let want = cpu::sort_keys(keys, comp);
    let got = match backend {
        Backend::Host => {
            let mut k = keys.to_vec();
            crate::host::sort_keys(&mut k, comp).map_err(|e| op_error("sort_keys", backend, e))?;
            k
        }
        Backend::Gpu(gpu) => on_gpu("sort_keys", backend, || {
            let mut k = gpu.upload(keys)?;
            crate::sort_keys(gpu, &mut k, comp)?;
            gpu.download(&k)
        })?,
    };
    assert_same_bits(&format!("sort_keys on {}", backend.name()), &got, &want)
}

/// [`crate::sort_pairs`] with positions as values, and [`crate::sort_indices`]: both equal a
/// stable sort (equal keys keep their input order, which the positions show).
pub fn sort_pairs<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, keys: &[K], comp: C) -> PropertyResult {
    let values = positions(0, keys.len());
    let (want_k, want_v) = cpu::sort_pairs(keys, &values, comp);
    let (got_k, got_v, idx_k, idx_v) = match backend {
        Backend::Host => {
            let (mut k, mut v) = (keys.to_vec(), values.clone());
            crate::host::sort_pairs(&mut k, &mut v, comp).map_err(|e| op_error("sort_pairs", backend, e))?;
            let (mut ik, mut iv) = (keys.to_vec(), vec![0u32; keys.len()]);
            crate::host::sort_indices(&mut ik, &mut iv, comp).map_err(|e| op_error("sort_indices", backend, e))?;
            (k, v, ik, iv)
        }
        Backend::Gpu(gpu) => on_gpu("sort_pairs", backend, || {
            let (mut k, mut v) = (gpu.upload(keys)?, gpu.upload(&values)?);
            crate::sort_pairs(gpu, &mut k, &mut v, comp)?;
            let (mut ik, mut iv) = (gpu.upload(keys)?, gpu.upload(&vec![0u32; keys.len()])?);
            crate::sort_indices(gpu, &mut ik, &mut iv, comp)?;
            Ok((gpu.download(&k)?, gpu.download(&v)?, gpu.download(&ik)?, gpu.download(&iv)?))
        })?,
    };
    let b = backend.name();
    assert_same_bits(&format!("sort_pairs on {b}: keys"), &got_k, &want_k)?;
    assert_same_bits(&format!("sort_pairs on {b}: values (positions)"), &got_v, &want_v)?;
    assert_same_bits(&format!("sort_indices on {b}: keys"), &idx_k, &want_k)?;
    assert_same_bits(&format!("sort_indices on {b}: indices"), &idx_v, &want_v)
}

/// [`crate::sorted_search`] (lower and upper bounds), [`crate::sorted_search_range`],
/// [`crate::sorted_search_count`] and [`crate::sorted_search_contains`] of `needles` in
/// `haystack` (both sorted by `comp`) equal a binary search per needle.
pub fn sorted_search<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, needles: &[K], haystack: &[K], comp: C) -> PropertyResult {
    let as_u32 = |v: Vec<usize>| v.into_iter().map(|i| i as u32).collect::<Vec<u32>>();
    let lower = as_u32(cpu::sorted_search(needles, haystack, Bound::Lower, comp));
    let upper = as_u32(cpu::sorted_search(needles, haystack, Bound::Upper, comp));
    let count: Vec<u32> = lower.iter().zip(&upper).map(|(l, u)| u - l).collect();
    let contains: Vec<u8> = count.iter().map(|&c| (c > 0) as u8).collect();
    let n = needles.len();
    let got = match backend {
        Backend::Host => {
            let err = |e| op_error("sorted_search", backend, e);
            let mut out = [vec![0u32; n], vec![0u32; n], vec![0u32; n], vec![0u32; n], vec![0u32; n]];
            let [lo, up, range_lo, range_up, cnt] = &mut out;
            crate::host::sorted_search(needles, haystack, Bound::Lower, lo, comp).map_err(err)?;
            crate::host::sorted_search(needles, haystack, Bound::Upper, up, comp).map_err(err)?;
            crate::host::sorted_search_range(needles, haystack, range_lo, range_up, comp).map_err(err)?;
            crate::host::sorted_search_count(needles, haystack, cnt, comp).map_err(err)?;
            let mut found = vec![0u8; n];
            crate::host::sorted_search_contains(needles, haystack, &mut found, comp).map_err(err)?;
            (out, found)
        }
        Backend::Gpu(gpu) => on_gpu("sorted_search", backend, || {
            let (dn, dh) = (gpu.upload(needles)?, gpu.upload(haystack)?);
            let zeros = vec![0u32; n];
            let mut d = [gpu.upload(&zeros)?, gpu.upload(&zeros)?, gpu.upload(&zeros)?, gpu.upload(&zeros)?, gpu.upload(&zeros)?];
            let [lo, up, range_lo, range_up, cnt] = &mut d;
            crate::sorted_search(gpu, &dn, &dh, Bound::Lower, lo, comp)?;
            crate::sorted_search(gpu, &dn, &dh, Bound::Upper, up, comp)?;
            crate::sorted_search_range(gpu, &dn, &dh, range_lo, range_up, comp)?;
            crate::sorted_search_count(gpu, &dn, &dh, cnt, comp)?;
            let mut found = gpu.upload(&vec![0u8; n])?;
            crate::sorted_search_contains(gpu, &dn, &dh, &mut found, comp)?;
            let mut out: [Vec<u32>; 5] = Default::default();
            for (o, buf) in out.iter_mut().zip(&d) {
                *o = gpu.download(buf)?;
            }
            Ok((out, gpu.download(&found)?))
        })?,
    };
    let b = backend.name();
    let ([lo, up, range_lo, range_up, cnt], found) = got;
    assert_same_bits(&format!("sorted_search lower bounds on {b}"), &lo, &lower)?;
    assert_same_bits(&format!("sorted_search upper bounds on {b}"), &up, &upper)?;
    assert_same_bits(&format!("sorted_search_range lower bounds on {b}"), &range_lo, &lower)?;
    assert_same_bits(&format!("sorted_search_range upper bounds on {b}"), &range_up, &upper)?;
    assert_same_bits(&format!("sorted_search_count on {b}"), &cnt, &count)?;
    assert_same_bits(&format!("sorted_search_contains on {b}"), &found, &contains)
}

/// Every [`SetOperation`] on `a` and `b` (sorted by `comp`): [`crate::set_operation_keys`],
/// [`crate::set_operation_pairs`] with positions as values (which items go out) and
/// [`crate::set_operation_len`] equal C++'s sequential `std::set_*` loop.
pub fn set_operations<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, a: &[K], b: &[K], comp: C) -> PropertyResult {
    let (av, bv) = (positions(0, a.len()), positions(a.len(), b.len()));
    for op in SetOperation::ALL {
        let want_k = cpu::set_operation_keys(op, a, b, comp);
        let (_, want_v) = cpu::set_operation_pairs(op, a, &av, b, &bv, comp);
        let cap = op.max_len(a.len(), b.len());
        let name = format!("set_operation {op:?}");
        let (keys, pair_k, pair_v, len) = match backend {
            Backend::Host => {
                let err = |e| op_error(&name, backend, e);
                let mut k = vec![K::zeroed(); cap];
                let n = crate::host::set_operation_keys(op, a, b, &mut k, comp).map_err(err)?;
                k.truncate(n);
                let (mut pk, mut pv) = (vec![K::zeroed(); cap], vec![0u32; cap]);
                let n = crate::host::set_operation_pairs(op, a, &av, b, &bv, &mut pk, &mut pv, comp).map_err(err)?;
                pk.truncate(n);
                pv.truncate(n);
                (k, pk, pv, crate::host::set_operation_len(op, a, b, comp).map_err(err)?)
            }
            Backend::Gpu(gpu) => on_gpu(&name, backend, || {
                let (da, db, dav, dbv) = (gpu.upload(a)?, gpu.upload(b)?, gpu.upload(&av)?, gpu.upload(&bv)?);
                let mut k = gpu.upload(&vec![K::zeroed(); cap])?;
                let n = crate::set_operation_keys(gpu, op, &da, &db, &mut k, comp)?.read(gpu)?;
                let (mut pk, mut pv) = (gpu.upload(&vec![K::zeroed(); cap])?, gpu.upload(&vec![0u32; cap])?);
                let pn = crate::set_operation_pairs(gpu, op, &da, &dav, &db, &dbv, &mut pk, &mut pv, comp)?.read(gpu)?;
                let len = crate::set_operation_len(gpu, op, &da, &db, comp)?.read(gpu)?;
                let mut keys = gpu.download(&k)?;
                keys.truncate(n);
                let (mut pk, mut pv) = (gpu.download(&pk)?, gpu.download(&pv)?);
                pk.truncate(pn);
                pv.truncate(pn);
                Ok((keys, pk, pv, len))
            })?,
        };
        let b = backend.name();
        assert_same_bits(&format!("{name} keys on {b}"), &keys, &want_k)?;
        assert_same_bits(&format!("{name} pairs on {b}: keys"), &pair_k, &want_k)?;
        assert_same_bits(&format!("{name} pairs on {b}: values (positions)"), &pair_v, &want_v)?;
        if len != want_k.len() {
            return Err(TestCaseError::fail(format!("set_operation_len {op:?} on {b}: got {len}, want {}", want_k.len())));
        }
    }
    Ok(())
}

/// [`crate::sort_segments_keys`] and [`crate::sort_segments_pairs`] (positions as values) with
/// `offsets` equal a stable sort of each segment, the items outside every segment unmoved.
pub fn sort_segments<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, keys: &[K], offsets: &[usize], comp: C) -> PropertyResult {
    let values = positions(0, keys.len());
    let want_keys = cpu::sort_segments_keys(keys, offsets, comp);
    let (want_k, want_v) = cpu::sort_segments_pairs(keys, &values, offsets, comp);
    let (got, got_k, got_v) = match backend {
        Backend::Host => {
            let err = |e| op_error("sort_segments", backend, e);
            let mut k = keys.to_vec();
            crate::host::sort_segments_keys(&mut k, offsets, comp).map_err(err)?;
            let (mut pk, mut pv) = (keys.to_vec(), values.clone());
            crate::host::sort_segments_pairs(&mut pk, &mut pv, offsets, comp).map_err(err)?;
            (k, pk, pv)
        }
        Backend::Gpu(gpu) => on_gpu("sort_segments", backend, || {
            let mut k = gpu.upload(keys)?;
            crate::sort_segments_keys(gpu, &mut k, offsets, comp)?;
            let (mut pk, mut pv) = (gpu.upload(keys)?, gpu.upload(&values)?);
            crate::sort_segments_pairs(gpu, &mut pk, &mut pv, offsets, comp)?;
            Ok((gpu.download(&k)?, gpu.download(&pk)?, gpu.download(&pv)?))
        })?,
    };
    let b = backend.name();
    assert_same_bits(&format!("sort_segments_keys on {b}"), &got, &want_keys)?;
    assert_same_bits(&format!("sort_segments_pairs on {b}: keys"), &got_k, &want_k)?;
    assert_same_bits(&format!("sort_segments_pairs on {b}: values (positions)"), &got_v, &want_v)
}

/// [`crate::merge_multiway_keys`] and [`crate::merge_multiway_pairs`] (positions as values) of
/// `inputs` (each sorted by `comp`) equal the stable merge: of equal keys, those of a lower
/// input first. On the GPU the device calls and the host-slice methods (with positions as
/// `u32` words and as 12-byte values, which travel by position), on the host the host
/// backend's.
pub fn merge_multiway<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, inputs: &[Vec<K>], comp: C) -> PropertyResult {
    let keys: Vec<&[K]> = inputs.iter().map(|v| v.as_slice()).collect();
    let mut first = 0;
    let values: Vec<Vec<u32>> = inputs
        .iter()
        .map(|v| {
            first += v.len();
            positions(first - v.len(), v.len())
        })
        .collect();
    let value_refs: Vec<&[u32]> = values.iter().map(|v| v.as_slice()).collect();
    let want = cpu::merge_multiway_keys(&keys, comp);
    let (want_k, want_v) = cpu::merge_multiway_pairs(&keys, &value_refs, comp);
    let wide: Vec<Vec<[u32; 3]>> = values.iter().map(|v| v.iter().map(|&p| item12(p as usize)).collect()).collect();
    let wide_refs: Vec<&[[u32; 3]]> = wide.iter().map(|v| v.as_slice()).collect();
    let want_wide: Vec<[u32; 3]> = want_v.iter().map(|&p| item12(p as usize)).collect();
    let b = backend.name();
    let check = |variant: &str, (got, got_k, got_v): (Vec<K>, Vec<K>, Vec<u32>)| -> PropertyResult {
        assert_same_bits(&format!("merge_multiway_keys on {b}, {variant} ({} inputs)", inputs.len()), &got, &want)?;
        assert_same_bits(&format!("merge_multiway_pairs on {b}, {variant}: keys"), &got_k, &want_k)?;
        assert_same_bits(&format!("merge_multiway_pairs on {b}, {variant}: values (positions)"), &got_v, &want_v)
    };
    let err = |e| op_error("merge_multiway", backend, e);
    match backend {
        Backend::Host => check("host slices", multiway_on_slices(&crate::Host, &keys, &value_refs, comp).map_err(err)?),
        Backend::Gpu(gpu) => {
            check("device buffers", on_gpu("merge_multiway", backend, || {
                let dk = keys.iter().map(|k| gpu.upload(k)).collect::<crate::Result<Vec<_>>>()?;
                let dv = value_refs.iter().map(|v| gpu.upload(v)).collect::<crate::Result<Vec<_>>>()?;
                let (kr, vr): (Vec<_>, Vec<_>) = (dk.iter().collect(), dv.iter().collect());
                let mut out = gpu.upload(&vec![K::zeroed(); want.len()])?;
                crate::merge_multiway_keys(gpu, &kr, &mut out, comp)?;
                let (mut ok, mut ov) = (gpu.upload(&vec![K::zeroed(); want.len()])?, gpu.upload(&vec![0u32; want.len()])?);
                crate::merge_multiway_pairs(gpu, &kr, &vr, &mut ok, &mut ov, comp)?;
                Ok((gpu.download(&out)?, gpu.download(&ok)?, gpu.download(&ov)?))
            })?)?;
            check("host slices", multiway_on_slices(gpu, &keys, &value_refs, comp).map_err(err)?)?;
            let (mut ok, mut ov) = (vec![K::zeroed(); want.len()], vec![[0u32; 3]; want.len()]);
            crate::Backend::merge_multiway_pairs(gpu, &keys, &wide_refs, &mut ok, &mut ov, comp).map_err(err)?;
            assert_same_bits(&format!("merge_multiway_pairs on {b}, host slices: keys (12-byte values)"), &ok, &want_k)?;
            assert_same_bits(&format!("merge_multiway_pairs on {b}, host slices: 12-byte values"), &ov, &want_wide)
        }
    }
}

/// The host-slice multiway merges of `keys` (and `values`) through `backend`: the keys alone,
/// then the pairs' keys and values.
fn multiway_on_slices<K: TestKey, C: Comparator<K>, B: crate::Backend>(backend: &B, keys: &[&[K]], values: &[&[u32]], comp: C) -> crate::Result<(Vec<K>, Vec<K>, Vec<u32>)> {
    let n = keys.iter().map(|k| k.len()).sum();
    let mut out = vec![K::zeroed(); n];
    backend.merge_multiway_keys(keys, &mut out, comp)?;
    let (mut k, mut v) = (vec![K::zeroed(); n], vec![0u32; n]);
    backend.merge_multiway_pairs(keys, values, &mut k, &mut v, comp)?;
    Ok((out, k, v))
}

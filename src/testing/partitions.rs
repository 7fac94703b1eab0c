//! Properties of a two-phase kernel's partitions and tile loop, for users' own kernels: checked
//! on the CPU, against what a kernel of yours (or [`crate::merge_path_partitions`]) computed.

use super::keys::TestKey;
use super::properties::{assert_same_bits, on_gpu, Backend, PropertyResult};
use crate::key::Comparator;
use crate::partition::{merge_path_tie, partition_count, visit_merge_tiles_cpu, Source, TileShape};
use crate::types::Tie;
use proptest::test_runner::TestCaseError;

fn fail(msg: String) -> Result<(), TestCaseError> {
    Err(TestCaseError::fail(msg))
}

/// Checks coarse Merge Path partitions of `a` and `b` (sorted by `is_less`) every `spacing`
/// outputs, as [`crate::merge_path_partitions`] writes them (entry `p`: the A index where the
/// path crosses diagonal `min(p * spacing, total)`): the count is
/// [`partition_count`]`(total, spacing)`; each entry is a split of its diagonal within both
/// inputs; the splits never go back in A or in B (so every item of A and B falls in exactly one
/// tile, and every tile but the last has `spacing` items); and each is the merge path's split with
/// equal items ordered as `tie` says (A's before B's for [`Tie::AFirst`]), the only one a stable
/// merge allows. Fails with the first entry that breaks a rule.
pub fn check_merge_partitions<T: std::fmt::Debug>(
    a: &[T],
    b: &[T],
    spacing: usize,
    partitions: &[i64],
    tie: Tie,
    is_less: impl Fn(&T, &T) -> bool,
) -> PropertyResult {
    if spacing == 0 {
        return fail("spacing must be positive".into());
    }
    let total = a.len() + b.len();
    let count = partition_count(total, spacing);
    if partitions.len() != count {
        return fail(format!("{} partitions, want {count} for {total} items every {spacing}", partitions.len()));
    }
    let mut prev = (0usize, 0usize);
    for (p, &i) in partitions.iter().enumerate() {
        let diag = (p * spacing).min(total);
        if i < 0 || i as usize > diag.min(a.len()) || diag - i as usize > b.len() {
            return fail(format!("partition {p}: A index {i} is not a split of diagonal {diag} ({} + {} items)", a.len(), b.len()));
        }
        let (i, j) = (i as usize, diag - i as usize);
        if i < prev.0 || j < prev.1 {
            return fail(format!("partition {p}: split ({i}, {j}) goes back from ({}, {}): items would be in two tiles", prev.0, prev.1));
        }
        prev = (i, j);
        // Stable with A first: a[i - 1] does not go after b[j], and b[j - 1] goes strictly
        // before a[i]; B first swaps the roles.
        let (ok_before, ok_after) = match tie {
            Tie::AFirst => (i == 0 || j == b.len() || !is_less(&b[j], &a[i - 1]), j == 0 || i == a.len() || is_less(&b[j - 1], &a[i])),
            Tie::BFirst => (i == 0 || j == b.len() || is_less(&a[i - 1], &b[j]), j == 0 || i == a.len() || !is_less(&a[i], &b[j - 1])),
        };
        if !ok_before || !ok_after {
            let (x, y) = if !ok_before { (format!("a[{}] = {:?}", i - 1, a[i - 1]), format!("b[{j}] = {:?}", b[j])) } else { (format!("b[{}] = {:?}", j - 1, b[j - 1]), format!("a[{i}] = {:?}", a[i])) };
            return fail(format!("partition {p}: split ({i}, {j}) of diagonal {diag} is not on the merge path ({tie:?}): {x} and {y} are on the wrong sides"));
        }
    }
    Ok(())
}

/// Checks the tile loop of a two-phase merge kernel of `shape` on `a` and `b` (sorted by
/// `is_less`), run on the CPU by [`visit_merge_tiles_cpu`]: outputs come in order, once each;
/// every item of A and B goes out exactly once; no thread merges more than
/// `shape.items_per_thread` items and no tile more than `shape.tile()`; every tile but the
/// last is full; the items come out in the stable merge's order. With
/// [`check_merge_partitions`], the properties a kernel's tiling must have; a kernel of yours can
/// compare its own per-thread output with the visits.
pub fn check_merge_tiles<T: std::fmt::Debug>(a: &[T], b: &[T], shape: TileShape, is_less: impl Fn(&T, &T) -> bool) -> PropertyResult {
    if shape.tile() == 0 {
        return fail("a tile shape needs threads and items per thread".into());
    }
    let total = a.len() + b.len();
    let (mut seen_a, mut seen_b) = (vec![false; a.len()], vec![false; b.len()]);
    let mut per_thread = std::collections::HashMap::<(usize, usize), usize>::new();
    let mut per_tile = vec![0usize; total.div_ceil(shape.tile())];
    let mut next_out = 0;
    let mut error: Option<String> = None;
    let want = merge_sources(a, b, &is_less);
    visit_merge_tiles_cpu(a, b, shape, &is_less, |out, source, index, thread, tile| {
        if error.is_some() {
            return;
        }
        let seen = match source {
            Source::A => &mut seen_a,
            Source::B => &mut seen_b,
        };
        if out != next_out {
            error = Some(format!("output {out} came where {next_out} was due"));
        } else if std::mem::replace(&mut seen[index], true) {
            error = Some(format!("{source:?}[{index}] went out twice"));
        } else if want[out] != (source, index) {
            error = Some(format!("output {out} is {source:?}[{index}], the stable merge has {:?}[{}]", want[out].0, want[out].1));
        } else if tile >= per_tile.len() {
            error = Some(format!("tile {tile} is past the last tile"));
        } else {
            *per_tile.get_mut(tile).unwrap() += 1;
            let n = per_thread.entry((tile, thread)).or_default();
            *n += 1;
            if *n > shape.items_per_thread as usize {
                error = Some(format!("thread {thread} of tile {tile} merged more than {} items", shape.items_per_thread));
            }
        }
        next_out += 1;
    });
    if let Some(e) = error {
        return fail(e);
    }
    if next_out != total {
        return fail(format!("{next_out} outputs of {total}"));
    }
    if let Some(t) = per_tile.iter().rev().skip(1).position(|&n| n != shape.tile()) {
        let t = per_tile.len() - 2 - t;
        return fail(format!("tile {t} holds {} items, not a full tile of {}", per_tile[t], shape.tile()));
    }
    Ok(())
}

/// The stable merge's sources, output by output.
fn merge_sources<T>(a: &[T], b: &[T], is_less: &impl Fn(&T, &T) -> bool) -> Vec<(Source, usize)> {
    let from_a: Vec<(Source, usize)> = (0..a.len()).map(|i| (Source::A, i)).collect();
    let from_b: Vec<(Source, usize)> = (0..b.len()).map(|j| (Source::B, j)).collect();
    let key = |s: &(Source, usize)| match s.0 {
        Source::A => &a[s.1],
        Source::B => &b[s.1],
    };
    crate::cpu::merge_by(&from_a, &from_b, |x, y| is_less(key(x), key(y)))
}

/// [`crate::merge_path_partitions_tie_into`] (on the GPU) or the CPU mirror
/// [`crate::merge_path_tie`] (on the host) of `a` and `b` (sorted by `comp`) every `spacing`
/// outputs, for both ties, pass [`check_merge_partitions`].
pub fn merge_path_partitions<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, a: &[K], b: &[K], spacing: usize, comp: C) -> PropertyResult {
    let total = a.len() + b.len();
    let count = partition_count(total, spacing.max(1));
    for tie in [Tie::AFirst, Tie::BFirst] {
        let parts: Vec<i64> = match backend {
            Backend::Host => (0..count).map(|p| merge_path_tie(a, b, (p * spacing).min(total), tie, |x, y| comp.is_less(x, y)) as i64).collect(),
            Backend::Gpu(gpu) => on_gpu("merge_path_partitions", backend, || {
                let (da, db) = (gpu.upload(a)?, gpu.upload(b)?);
                let mut out = gpu.alloc_zeros::<i64>(count)?;
                crate::merge_path_partitions_tie_into(gpu, &da, &db, spacing, tie, comp, &mut out)?;
                gpu.download(&out)
            })?,
        };
        check_merge_partitions(a, b, spacing, &parts, tie, |x, y| comp.is_less(x, y))
            .map_err(|e| TestCaseError::fail(format!("merge_path_partitions ({tie:?}) on {}: {e}", backend.name())))?;
    }
    Ok(())
}

/// [`crate::partition::multiway_partitions`] (on the GPU) or its CPU mirror
/// [`crate::partition::multiway_partitions_cpu`] (on the host) of `inputs` (each sorted by
/// `comp`) every `spacing` outputs are exact: every row is the split of its rank (its entries
/// within the inputs and summing to the rank, no item of a later input's prefix going after an
/// item left out of an earlier one), rows never go back, and on the GPU they equal the mirror.
pub fn multiway_partitions<K: TestKey, C: Comparator<K>>(backend: Backend<'_>, inputs: &[Vec<K>], spacing: usize, comp: C) -> PropertyResult {
    let refs: Vec<&[K]> = inputs.iter().map(|v| v.as_slice()).collect();
    let is_less = |x: &K, y: &K| comp.is_less(x, y);
    let mirror: Vec<i64> = crate::partition::multiway_partitions_cpu(&refs, spacing, is_less).into_iter().map(|s| s as i64).collect();
    check_multiway_partitions(&refs, spacing, &mirror, is_less).map_err(|e| TestCaseError::fail(format!("multiway_partitions on the CPU mirror: {e}")))?;
    let Backend::Gpu(gpu) = backend else { return Ok(()) };
    let rows = on_gpu("multiway_partitions", backend, || {
        let d = refs.iter().map(|k| gpu.upload(k)).collect::<crate::Result<Vec<_>>>()?;
        let r: Vec<_> = d.iter().collect();
        let splits = crate::partition::multiway_partitions(gpu, &r, spacing, comp)?;
        gpu.download(&splits)
    })?;
    // Exact splits are unique: the GPU's rows pass the check exactly when they are the mirror's.
    assert_same_bits("multiway_partitions on gpu: the CPU mirror's rows", &rows, &mirror)
}

/// Checks multiway partitions (row-major, `inputs.len()` splits a row, as
/// [`crate::partition::multiway_partitions`] writes them) of `inputs` sorted by `is_less`: the
/// row count; each row within the inputs and summing to its rank `min(p * spacing, total)`;
/// rows never going back (every item in exactly one tile, every tile but the last full); and
/// each row the stable merge's prefix: no item left out of an input goes before (or, for a
/// lower input, equals) an item taken from another.
pub fn check_multiway_partitions<T: std::fmt::Debug>(inputs: &[&[T]], spacing: usize, rows: &[i64], is_less: impl Fn(&T, &T) -> bool) -> PropertyResult {
    let k = inputs.len();
    let total: usize = inputs.iter().map(|s| s.len()).sum();
    let count = partition_count(total, spacing.max(1));
    if rows.len() != count * k {
        return fail(format!("{} split entries, want {count} rows of {k}", rows.len()));
    }
    for p in 0..count {
        let row = &rows[p * k..(p + 1) * k];
        let rank = (p * spacing).min(total);
        if row.iter().zip(inputs).any(|(&s, input)| s < 0 || s as usize > input.len()) {
            return fail(format!("row {p} ({row:?}) is not inside the inputs"));
        }
        if row.iter().sum::<i64>() as usize != rank {
            return fail(format!("row {p} sums to {}, not its rank {rank}", row.iter().sum::<i64>()));
        }
        if p > 0 && rows[(p - 1) * k..p * k].iter().zip(row).any(|(a, b)| b < a) {
            return fail(format!("row {p} goes back from row {}", p - 1));
        }
        // The last item taken from t and the first left out of u: taken goes first (equal
        // keys: the lower input's first).
        for (t, &st) in row.iter().enumerate() {
            let Some(taken) = (st as usize).checked_sub(1).map(|i| &inputs[t][i]) else { continue };
            for (u, &su) in row.iter().enumerate() {
                let Some(left) = inputs[u].get(su as usize) else { continue };
                let out_of_order = is_less(left, taken) || (u < t && !is_less(taken, left));
                if u != t && out_of_order {
                    return fail(format!("row {p}: input {u}'s item {left:?} (left out) goes before input {t}'s item {taken:?} (taken)"));
                }
            }
        }
    }
    Ok(())
}

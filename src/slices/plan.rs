//! The plan of the host-slice calls: chunk, range and slot sizes, the chunks and merge levels of
//! a sort, merge-path splits made safe, the device buffers' lanes, temporary memory bounds.

use crate::device::buffers::CheckedBuffer;
use crate::device::temp::temp_aligned;
use std::ops::Range;

/// Bytes of keys and values per sort chunk: the chunk sorts of a 2^26 u32 sort (eight chunks)
/// keep pace with the upload, and the chunk left to sort after the last byte arrives is short.
pub(super) const SORT_CHUNK_BYTES: usize = 32 << 20;
/// Bytes of keys and values per output range of a sort's last merge and of a host-slice
/// merge: ranges short enough that the first download starts soon, long enough that a merge
/// launch fills the GPU.
pub(super) const RANGE_BYTES: usize = 16 << 20;
/// Ranges of a host-slice merge in flight at once (device buffers for each).
pub(super) const MERGE_SLOTS: usize = 3;

/// Items of `item_bytes` in a piece of work of about `bytes` (at least one).
pub(super) fn items_per(bytes: usize, item_bytes: usize) -> usize {
    (bytes / item_bytes.max(1)).max(1)
}

/// How a host-slice sort of `n` items runs: `chunks` (a power of two) chunks of `chunk` items
/// (the last ones possibly shorter or empty), each sorted on arrival; the runs are merged
/// pairwise, level `l` merging runs of `chunk << (l - 1)` items, up to `levels = log2(chunks)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SortPlan {
    pub n: usize,
    pub chunk: usize,
    pub chunks: usize,
}

impl SortPlan {
    /// The plan for `n >= 1` items of `item_bytes` (key and value) in chunks of about
    /// `chunk_bytes`.
    pub fn new(n: usize, item_bytes: usize, chunk_bytes: usize) -> Self {
        let chunks = n.div_ceil(items_per(chunk_bytes, item_bytes)).next_power_of_two();
        SortPlan { n, chunk: n.div_ceil(chunks), chunks }
    }

    /// Merge levels: log2(chunks).
    pub fn levels(&self) -> u32 {
        self.chunks.trailing_zeros()
    }

    /// The items of run `j` at merge level `level` (level 0: the chunks).
    pub fn run(&self, level: u32, j: usize) -> Range<usize> {
        let len = self.chunk << level;
        (j * len).min(self.n)..((j + 1) * len).min(self.n)
    }

    /// The merges (level, index of the merged run) that can run once chunk `i` is sorted,
    /// below the last level: level `l` merges runs `2j` and `2j + 1` of level `l - 1` into run
    /// `j`, once chunk `(j + 1) * 2^l - 1` has arrived.
    pub fn merges_after(&self, i: usize) -> impl Iterator<Item = (u32, usize)> {
        (1..self.levels()).take_while(move |&l| (i + 1) % (1 << l) == 0).map(move |l| (l, (i + 1) / (1 << l) - 1))
    }
}

/// A merge path split at each of the ascending `diags` of a merge of `a_len` and `b_len`
/// items, made safe: each split inside the inputs, and consecutive splits taking at most their
/// diagonals' difference from A and nothing back from either input. The splits of a real
/// merge path (sorted inputs, a strict weak order) are left as they are.
pub(super) fn clamp_splits(splits: &mut [usize], diags: &[usize], a_len: usize, b_len: usize) {
    let mut prev: Option<(usize, usize)> = None;
    for (s, &d) in splits.iter_mut().zip(diags) {
        let (mut lo, mut hi) = (d.saturating_sub(b_len), d.min(a_len));
        if let Some((pa, pd)) = prev {
            lo = lo.max(pa);
            hi = hi.min(pa + (d - pd));
        }
        *s = (*s).clamp(lo, hi);
        prev = Some((*s, d));
    }
}

/// A device buffer of keys and (optionally) values for `n` items: the keys' lane, then the
/// values', each aligned as a temp region.
#[derive(Clone, Copy)]
pub(super) struct Lanes {
    pub(super) keys: u64,
    pub(super) values: u64,
    key_bytes: usize,
    pub(super) word: usize,
}

impl Lanes {
    pub(super) fn bytes(n: usize, key_bytes: usize, word: usize) -> usize {
        temp_aligned(n * key_bytes) + temp_aligned(n * word)
    }

    pub(super) fn at(base: u64, n: usize, key_bytes: usize, word: usize) -> Self {
        Lanes { keys: base, values: base + temp_aligned(n * key_bytes) as u64, key_bytes, word }
    }

    /// Items `r` of the keys.
    pub(super) fn keys(&self, r: Range<usize>) -> CheckedBuffer<'static> {
        CheckedBuffer::raw(self.keys + (r.start * self.key_bytes) as u64, r.len(), self.key_bytes)
    }

    /// Items `r` of the values.
    pub(super) fn values(&self, r: Range<usize>) -> CheckedBuffer<'static> {
        CheckedBuffer::raw(self.values + (r.start * self.word) as u64, r.len(), self.word)
    }
}

/// The bytes a device search of `needles` in `haystack` items takes from the temp pool at most:
/// its partitions.
pub(super) fn search_temp_bytes(needles: usize, haystack: usize) -> usize {
    8 * ((needles + haystack) / 256 + 2)
}

/// The bytes of a slice of `Pod` values.
pub(super) fn bytes_mut<T: bytemuck::Pod>(v: &mut [T]) -> &mut [u8] {
    bytemuck::cast_slice_mut(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu;
    use crate::partition::{merge_path, partition_count};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Chunks are a power of two, each at most the chunk bytes, and cover the input once;
        /// every merge below the last level runs exactly once, after both its runs exist, and
        /// the last level's two runs are the whole input.
        #[test]
        fn sort_plans_cover_the_input_and_merge_each_run_once(n in 1usize..100_000, item in 1usize..40, chunk_bytes in 1usize..20_000) {
            let plan = SortPlan::new(n, item, chunk_bytes);
            prop_assert!(plan.chunks.is_power_of_two());
            prop_assert!(plan.chunk <= items_per(chunk_bytes, item));
            let mut next = 0;
            for i in 0..plan.chunks {
                let r = plan.run(0, i);
                prop_assert_eq!(r.start, next);
                next = r.end;
            }
            prop_assert_eq!(next, n);
            let levels = plan.levels();
            // made[l][j]: run j of level l exists.
            let mut made: Vec<Vec<bool>> = (0..=levels).map(|l| vec![false; plan.chunks >> l]).collect();
            for i in 0..plan.chunks {
                made[0][i] = true;
                for (l, j) in plan.merges_after(i) {
                    let l = l as usize;
                    prop_assert!(l >= 1 && (l as u32) < levels);
                    prop_assert!(made[l - 1][2 * j] && made[l - 1][2 * j + 1] && !made[l][j]);
                    made[l][j] = true;
                    let (a, b, m) = (plan.run(l as u32 - 1, 2 * j), plan.run(l as u32 - 1, 2 * j + 1), plan.run(l as u32, j));
                    prop_assert_eq!((a.start, a.end, b.end), (m.start, b.start, m.end));
                }
            }
            for (l, level) in made.iter().enumerate().take(levels as usize).skip(1) {
                prop_assert!(level.iter().all(|&m| m), "level {} incomplete", l);
            }
            if levels > 0 {
                let (a, b) = (plan.run(levels - 1, 0), plan.run(levels - 1, 1));
                prop_assert_eq!((a.start, a.end, b.end), (0, b.start, n));
            }
        }

        /// The last merge's ranges, cut by merge path (the device partitions' answer) and
        /// clamped, merge to exactly the whole merge, range by range.
        #[test]
        fn ranges_cut_by_merge_path_split_the_output_exactly(
            mut a in proptest::collection::vec(0u8..20, 0..300),
            mut b in proptest::collection::vec(0u8..20, 0..300),
            spacing in 1usize..50,
        ) {
            a.sort();
            b.sort();
            let n = a.len() + b.len();
            let is_less = |x: &u8, y: &u8| x < y;
            let diags: Vec<usize> = (0..partition_count(n, spacing)).map(|p| (p * spacing).min(n)).collect();
            let mut splits: Vec<usize> = diags.iter().map(|&d| merge_path(&a, &b, d, is_less)).collect();
            let exact = splits.clone();
            clamp_splits(&mut splits, &diags, a.len(), b.len());
            prop_assert_eq!(&splits, &exact);
            let want = cpu::merge_keys(&a, &b, crate::Less);
            let mut got = Vec::new();
            for p in 0..diags.len() - 1 {
                let (d0, d1, a0, a1) = (diags[p], diags[p + 1], splits[p], splits[p + 1]);
                got.extend(cpu::merge_keys(&a[a0..a1], &b[d0 - a0..d1 - a1], crate::Less));
            }
            prop_assert_eq!(got, want);
        }

        /// Any splits (a comparator that is not a strict weak order) are clamped into ranges
        /// inside the inputs that tile the output.
        #[test]
        fn clamped_splits_always_tile_the_output(
            a_len in 0usize..200,
            b_len in 0usize..200,
            spacing in 1usize..40,
            raw in proptest::collection::vec(0usize..500, 0..20),
        ) {
            let n = a_len + b_len;
            let diags: Vec<usize> = (0..partition_count(n, spacing)).map(|p| (p * spacing).min(n)).collect();
            let mut splits: Vec<usize> = (0..diags.len()).map(|i| raw.get(i).copied().unwrap_or(i * 7)).collect();
            clamp_splits(&mut splits, &diags, a_len, b_len);
            prop_assert_eq!((splits[0], *splits.last().unwrap()), (0, a_len));
            for p in 0..diags.len() - 1 {
                let (d0, d1, a0, a1) = (diags[p], diags[p + 1], splits[p], splits[p + 1]);
                prop_assert!(a0 <= a1 && a1 <= a_len);
                prop_assert!(d0 - a0 <= d1 - a1 && d1 - a1 <= b_len);
            }
        }
    }

    #[test]
    fn a_2_26_u32_sort_runs_eight_chunks() {
        let plan = SortPlan::new(1 << 26, 4, SORT_CHUNK_BYTES);
        assert_eq!((plan.chunks, plan.chunk, plan.levels()), (8, 1 << 23, 3));
        assert_eq!(SortPlan::new(5, 4, SORT_CHUNK_BYTES).chunks, 1);
    }
}

//! The plan of the host-slice calls: chunk, range and slot sizes, the chunks and merge levels of
//! a sort, merge-path splits made safe, the device buffers' lanes, temporary memory bounds.

use crate::device::buffers::CheckedBuffer;
use crate::device::temp::temp_aligned;
use crate::device::transfer::work_bytes;
use crate::tuning::{MERGE_SLOTS, RANGE_BYTES, SORT_CHUNK_BYTES};
use std::ops::Range;


/// The fewest items a host-slice merge's range is cut to where the device budget is small.
const MIN_MERGE_RANGE: usize = 1 << 12;

/// How a host-slice merge of `total` items runs: output ranges of `range` items, `slots` of
/// them in flight (each with device buffers for its inputs and its output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MergePlan {
    pub range: usize,
    pub slots: usize,
}

impl MergePlan {
    /// The plan for `total >= 1` items of `key_bytes` keys and `word`-byte values in `budget`
    /// bytes of device memory: ranges of about `range_bytes` and [`MERGE_SLOTS`] slots where
    /// they fit, else fewer slots (down to two, which still overlap copies with merges), then
    /// shorter ranges (down to [`MIN_MERGE_RANGE`] items, and one slot); `Err(needed bytes)`
    /// where even that does not fit.
    pub fn new(total: usize, key_bytes: usize, word: usize, range_bytes: usize, budget: usize) -> Result<Self, usize> {
        let full = items_per(range_bytes, key_bytes + word).min(total);
        let most_slots = MERGE_SLOTS.min(total.div_ceil(full));
        let fits = |plan: &MergePlan| plan.device_bytes(key_bytes, word) <= budget;
        let mut plan = MergePlan { range: full, slots: most_slots };
        while plan.slots > 2.min(most_slots) && !fits(&plan) {
            plan.slots -= 1;
        }
        if fits(&plan) {
            return Ok(plan);
        }
        // The longest range that fits, by halving; one slot at the shortest.
        let floor = MIN_MERGE_RANGE.min(full);
        while plan.range > floor && !fits(&plan) {
            plan.range = (plan.range / 2).max(floor);
        }
        if !fits(&plan) {
            plan.slots = 1;
        }
        match fits(&plan) {
            true => Ok(plan),
            false => Err(plan.device_bytes(key_bytes, word)),
        }
    }

    /// The device memory the plan takes: each slot's input and output lanes, and the merge's
    /// partitions (8 bytes per 256 items, two more).
    pub fn device_bytes(&self, key_bytes: usize, word: usize) -> usize {
        Slots::bytes(self.slots, self.range, key_bytes, word) + 8 * (self.range / 256 + 2)
    }
}

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
        (1..self.levels()).take_while(move |&l| (i + 1).is_multiple_of(1 << l)).map(move |l| (l, (i + 1) / (1 << l) - 1))
    }
}

/// Device memory an external sort's merge keeps aside for the small tables a batch's merge of
/// `ways` runs allocates outside the temp pool (four of `ways` words: input addresses and
/// lengths, value addresses, boundary starts), each rounded up generously.
fn table_bytes(ways: usize) -> usize {
    4 * (8 * ways + 4096)
}
/// Most runs an external sort merges: the inputs one multiway merge takes.
pub(super) const MAX_RUNS: usize = crate::device::contract::MULTIWAY_MAX_WAYS;

/// The device bytes an in-core host-slice sort of `n` items (keys of `key_bytes`, values of
/// `word` bytes) takes at most: the data, a buffer as large for the merges (more than one
/// chunk), the sort temporaries of a full chunk and the last merge's partitions. Never less
/// for more items, so the largest `n` under a budget can be searched.
pub(super) fn in_core_bytes(n: usize, key_bytes: usize, word: usize, chunk_bytes: usize, range_bytes: usize) -> usize {
    let chunk = items_per(chunk_bytes, key_bytes + word);
    let data = Lanes::bytes(n, key_bytes, word);
    let merge = if n > chunk { data } else { 0 };
    let partitions = 8 * (n / items_per(range_bytes, key_bytes + word) + 2);
    data + merge + crate::sort::sort_temp_bytes(chunk.min(n), key_bytes, word) + temp_aligned(partitions)
}

/// [`in_core_bytes`] at this thread's work sizes ([`work_bytes`]): what the in-core sort of `n`
/// items takes on the device, the test of whether a host-slice sort runs in core.
pub(super) fn in_core_bytes_now(n: usize, key_bytes: usize, word: usize) -> usize {
    in_core_bytes(n, key_bytes, word, work_bytes(SORT_CHUNK_BYTES), work_bytes(RANGE_BYTES))
}

/// How an external sort runs: `runs` runs of `run` items (the last one shorter), each sorted
/// in core and written to host memory, then merged in batches ([`MergeBatches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ExternalPlan {
    /// Items in all.
    pub n: usize,
    /// Items per run.
    pub run: usize,
    /// Runs.
    pub runs: usize,
    /// How the runs' merge is cut.
    pub merge: MergeBatches,
}

impl ExternalPlan {
    /// The plan for `n` items of `key_bytes` keys and `word`-byte values in `budget` bytes of
    /// device memory: runs as large as an in-core sort fits (`in_core(items)`, its device
    /// bytes), of equal lengths, merged as [`MergeBatches::new`] cuts them. `Err(bytes)`, the
    /// budget the smallest plan would need, where no run fits, more than [`MAX_RUNS`] runs
    /// would be needed or no batch fits; one run where the whole sort fits in core.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        key_bytes: usize,
        word: usize,
        budget: usize,
        batch_bytes: usize,
        max_slots: usize,
        in_core: impl Fn(usize) -> usize,
        merge_temp: impl Fn(usize, usize) -> usize,
    ) -> Result<Self, usize> {
        let largest_run = largest_fitting(&|r| in_core(r) <= budget, n);
        let fewest_runs_need = in_core(n.div_ceil(MAX_RUNS));
        if largest_run == 0 || n.div_ceil(largest_run) > MAX_RUNS {
            return Err(fewest_runs_need);
        }
        let runs = n.div_ceil(largest_run);
        // Equal runs (no longer than the largest).
        let run = n.div_ceil(runs);
        let merge = MergeBatches::new(n, runs, key_bytes, word, budget, batch_bytes, max_slots, merge_temp)?;
        Ok(ExternalPlan { n, run, runs, merge })
    }

    /// The items of run `r`.
    pub fn run_range(&self, r: usize) -> Range<usize> {
        (r * self.run).min(self.n)..((r + 1) * self.run).min(self.n)
    }
}

/// The largest count up to `most` that `fits` (monotone: true up to some count) takes, 0 if
/// none.
fn largest_fitting(fits: &dyn Fn(usize) -> bool, most: usize) -> usize {
    // lo fits (0 stands for none), hi does not.
    let (mut lo, mut hi) = (0usize, most + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// How a merge of sorted runs in host memory is cut: batches of `batch` items of the output,
/// `slots` of them on the device at once (each batch's slice of every run uploaded, merged and
/// downloaded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MergeBatches {
    /// Items in all.
    pub n: usize,
    /// Items per batch.
    pub batch: usize,
    /// Batches on the device at once.
    pub slots: usize,
}

impl MergeBatches {
    /// The batches of a merge of `ways` runs of `n` items in all (keys of `key_bytes`, values
    /// of `word` bytes) in `budget` bytes of device memory: batches of at most `batch_bytes`,
    /// as many as fit with `merge_temp(items, ways)` (a batch merge's temporaries) in up to
    /// `max_slots` slots; `Err(bytes)`, what a batch of one item would need, where none fits.
    #[allow(clippy::too_many_arguments)]
    pub fn new(n: usize, ways: usize, key_bytes: usize, word: usize, budget: usize, batch_bytes: usize, max_slots: usize, merge_temp: impl Fn(usize, usize) -> usize) -> Result<Self, usize> {
        let batch_items = items_per(batch_bytes, key_bytes + word).min(n);
        let slot_bytes = |b: usize| 2 * Lanes::bytes(b, key_bytes, word) + merge_temp(b, ways) + table_bytes(ways);
        for slots in (1..=max_slots).rev() {
            let batch = largest_fitting(&|b| slots * slot_bytes(b) <= budget, batch_items);
            // Fewer slots only when a batch would be shorter than half the largest.
            if batch > 0 && (2 * batch >= batch_items || slots == 1) {
                return Ok(MergeBatches { n, batch, slots });
            }
        }
        Err(slot_bytes(1))
    }

    /// Batches.
    pub fn batches(&self) -> usize {
        self.n.div_ceil(self.batch)
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
pub(crate) struct Lanes {
    pub(super) keys: u64,
    pub(super) values: u64,
    key_bytes: usize,
    pub(crate) word: usize,
}

impl Lanes {
    pub(crate) fn bytes(n: usize, key_bytes: usize, word: usize) -> usize {
        temp_aligned(n * key_bytes) + temp_aligned(n * word)
    }

    pub(crate) fn at(base: u64, n: usize, key_bytes: usize, word: usize) -> Self {
        Lanes { keys: base, values: base + temp_aligned(n * key_bytes) as u64, key_bytes, word }
    }

    /// Keys at `keys` and values (of `word` bytes; 0 for none) at `values`, two buffers.
    pub(crate) fn separate(keys: u64, key_bytes: usize, values: u64, word: usize) -> Self {
        Lanes { keys, values, key_bytes, word }
    }

    /// Items `r` of the keys.
    pub(crate) fn keys(&self, r: Range<usize>) -> CheckedBuffer<'static> {
        CheckedBuffer::raw(self.keys + (r.start * self.key_bytes) as u64, r.len(), self.key_bytes)
    }

    /// Items `r` of the values.
    pub(crate) fn values(&self, r: Range<usize>) -> CheckedBuffer<'static> {
        CheckedBuffer::raw(self.values + (r.start * self.word) as u64, r.len(), self.word)
    }
}

/// The device slots of a streamed merge in one buffer: slot s's input lanes, then its output
/// lanes, each holding `items` items (keys of `key_bytes`, values of `word` bytes).
#[derive(Clone, Copy)]
pub(super) struct Slots {
    base: u64,
    items: usize,
    key_bytes: usize,
    word: usize,
}

impl Slots {
    /// The bytes of `slots` slots of `items` items.
    pub(super) fn bytes(slots: usize, items: usize, key_bytes: usize, word: usize) -> usize {
        2 * slots * Lanes::bytes(items, key_bytes, word)
    }

    /// Slots laid out from device address `base`.
    pub(super) fn at(base: u64, items: usize, key_bytes: usize, word: usize) -> Self {
        Slots { base, items, key_bytes, word }
    }

    /// Slot `s`'s input lanes.
    pub(super) fn input(&self, s: usize) -> Lanes {
        self.lanes(2 * s)
    }

    /// Slot `s`'s output lanes.
    pub(super) fn output(&self, s: usize) -> Lanes {
        self.lanes(2 * s + 1)
    }

    fn lanes(&self, i: usize) -> Lanes {
        let lane_bytes = Lanes::bytes(self.items, self.key_bytes, self.word);
        Lanes::at(self.base + (i * lane_bytes) as u64, self.items, self.key_bytes, self.word)
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
    use crate::partition::{clamp_multiway_splits, merge_path, partition_count};
    use proptest::prelude::*;

    /// A merge of two 16 M-key u32 inputs, keys alone or with values, has a plan under a 32 MiB
    /// cap.
    #[test]
    fn a_merge_larger_than_a_small_cap_has_a_plan() {
        for word in [0, 4, 8] {
            assert!(MergePlan::new(32 << 20, 4, word, RANGE_BYTES, 32 << 20).is_ok(), "word {word}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A host-slice merge's plan fits its budget (or says how much it needs, more than the
        /// budget); with room for the full plan it is the full plan; ranges never exceed the
        /// merge, slots are one to three.
        #[test]
        fn merge_plans_fit_the_budget(total in 1usize..1 << 32, key in prop::sample::select(vec![1usize, 2, 4, 8, 16]), word in prop::sample::select(vec![0usize, 4, 8, 16]), range_bytes in 1usize..1 << 26, budget in 0usize..1 << 28) {
            let full = MergePlan { range: items_per(range_bytes, key + word).min(total), slots: 0 };
            let full = MergePlan { slots: MERGE_SLOTS.min(total.div_ceil(full.range)), ..full };
            match MergePlan::new(total, key, word, range_bytes, budget) {
                Ok(plan) => {
                    prop_assert!(plan.device_bytes(key, word) <= budget, "{plan:?}");
                    prop_assert!(plan.range >= 1 && plan.range <= total && (1..=MERGE_SLOTS).contains(&plan.slots), "{plan:?}");
                    if full.device_bytes(key, word) <= budget {
                        prop_assert_eq!(plan, full);
                    }
                }
                Err(needed) => prop_assert!(needed > budget && full.device_bytes(key, word) > budget),
            }
        }

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

    /// A multiway merge's temporaries for the plan tests: what the real one takes, in shape.
    fn merge_temp(items: usize, ways: usize) -> usize {
        8 * ways * (items / 512 + 2) + 8 * (ways + 1) * (items / 256 + 1)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// An external plan's runs fit the budget in core, are equal but the last, cover the
        /// input once and are few enough to merge; its batches (in their slots, with the merge's
        /// temporaries) fit the budget too. No plan only with a need over the budget.
        #[test]
        fn external_plans_fit_the_budget(
            n in 1usize..50_000_000,
            key_bytes in prop_oneof![Just(1usize), Just(4), Just(8), Just(16)],
            word in prop_oneof![Just(0usize), Just(4), Just(8), Just(16)],
            budget in 1usize..2_000_000_000,
            batch_bytes in 1usize..(128 << 20),
            chunk_bytes in 1usize..(64 << 20),
        ) {
            let in_core = |items: usize| in_core_bytes(items, key_bytes, word, chunk_bytes, RANGE_BYTES);
            let lane_bytes = |items: usize| Lanes::bytes(items, key_bytes, word);
            match ExternalPlan::new(n, key_bytes, word, budget, batch_bytes, MERGE_SLOTS, in_core, merge_temp) {
                Ok(plan) => {
                    prop_assert!(plan.runs >= 1 && plan.runs <= MAX_RUNS);
                    prop_assert!(in_core(plan.run) <= budget, "run {} needs {} of {}", plan.run, in_core(plan.run), budget);
                    prop_assert_eq!(plan.runs, n.div_ceil(plan.run));
                    let mut next = 0;
                    for r in 0..plan.runs {
                        let range = plan.run_range(r);
                        prop_assert_eq!(range.start, next);
                        prop_assert!(range.len() == plan.run || r == plan.runs - 1);
                        next = range.end;
                    }
                    prop_assert_eq!(next, n);
                    let merge = plan.merge;
                    prop_assert!(merge.batch >= 1 && merge.batch <= items_per(batch_bytes, key_bytes + word).min(n));
                    prop_assert!(merge.slots >= 1 && merge.slots <= MERGE_SLOTS);
                    prop_assert!(merge.slots * (2 * lane_bytes(merge.batch) + merge_temp(merge.batch, plan.runs) + table_bytes(plan.runs)) <= budget);
                    prop_assert_eq!(merge.batches(), n.div_ceil(merge.batch));
                }
                Err(needed) => prop_assert!(needed > budget, "needs {} of {}", needed, budget),
            }
        }

        /// The multiway splits of sorted runs at every batch boundary, clamped, are the exact
        /// splits, and merging the runs batch by batch gives the stable merge of all of them.
        #[test]
        fn batches_cut_by_multiway_splits_merge_to_the_whole(
            runs in proptest::collection::vec(proptest::collection::vec(0u8..16, 0..120), 1..9),
            batch in 1usize..60,
        ) {
            let runs: Vec<Vec<u8>> = runs.into_iter().map(|mut r| { r.sort(); r }).collect();
            let refs: Vec<&[u8]> = runs.iter().map(|r| &r[..]).collect();
            let lengths: Vec<usize> = runs.iter().map(|r| r.len()).collect();
            let n: usize = lengths.iter().sum();
            let ranks: Vec<usize> = (0..=n.div_ceil(batch)).map(|b| (b * batch).min(n)).collect();
            let mut rows: Vec<Vec<usize>> = ranks.iter().map(|&r| crate::partition::multiway_split(&refs, r, |x, y| x < y)).collect();
            let exact = rows.clone();
            clamp_multiway_splits(&mut rows, &ranks, &lengths);
            prop_assert_eq!(&rows, &exact);
            // Stable: equal keys by run, then position; tagged with (run, position) to see it.
            let mut want: Vec<(u8, usize, usize)> = runs.iter().enumerate().flat_map(|(t, r)| r.iter().enumerate().map(move |(i, &k)| (k, t, i))).collect();
            want.sort();
            let mut got = Vec::new();
            for b in 0..ranks.len() - 1 {
                let mut piece: Vec<(u8, usize, usize)> = (0..runs.len()).flat_map(|t| (rows[b][t]..rows[b + 1][t]).map(move |i| (t, i))).map(|(t, i)| (runs[t][i], t, i)).collect();
                prop_assert_eq!(piece.len(), ranks[b + 1] - ranks[b]);
                piece.sort();
                got.extend(piece);
            }
            prop_assert_eq!(got, want);
        }

        /// Any splits (unsorted runs, a comparator that is not a strict weak order) are clamped
        /// into rows inside the runs, never taking back, each taking exactly its rank.
        #[test]
        fn clamped_multiway_splits_always_cut_every_item_once(
            lengths in proptest::collection::vec(0usize..50, 1..8),
            raw in proptest::collection::vec(proptest::collection::vec(0usize..80, 0..10), 0..12),
            batch in 1usize..40,
        ) {
            let n: usize = lengths.iter().sum();
            let ranks: Vec<usize> = (0..=n.div_ceil(batch)).map(|b| (b * batch).min(n)).collect();
            let mut rows: Vec<Vec<usize>> = (0..ranks.len()).map(|b| raw.get(b).cloned().unwrap_or_default()).collect();
            clamp_multiway_splits(&mut rows, &ranks, &lengths);
            for (b, row) in rows.iter().enumerate() {
                prop_assert_eq!(row.len(), lengths.len());
                prop_assert_eq!(row.iter().sum::<usize>(), ranks[b]);
                for t in 0..lengths.len() {
                    prop_assert!(row[t] <= lengths[t]);
                    if b > 0 {
                        prop_assert!(row[t] >= rows[b - 1][t]);
                    }
                }
            }
            prop_assert_eq!(&rows[rows.len() - 1], &lengths);
        }
    }

    #[test]
    fn a_2_26_u32_sort_runs_eight_chunks() {
        let plan = SortPlan::new(1 << 26, 4, SORT_CHUNK_BYTES);
        assert_eq!((plan.chunks, plan.chunk, plan.levels()), (8, 1 << 23, 3));
        assert_eq!(SortPlan::new(5, 4, SORT_CHUNK_BYTES).chunks, 1);
    }
}

#[cfg(test)]
mod run_counts {
    use super::*;
    use crate::tuning::BATCH_BYTES;

    /// The runs a u32 sort of `gib` GiB makes in `budget` bytes, as docs/guide.md states them.
    fn runs(gib: usize, budget: usize) -> Result<usize, usize> {
        let n = gib << 28;
        let in_core = |items| in_core_bytes(items, 4, 0, SORT_CHUNK_BYTES, RANGE_BYTES);
        ExternalPlan::new(n, 4, 0, budget, BATCH_BYTES, MERGE_SLOTS, in_core, |items, _| 4 * items).map(|p| p.runs)
    }

    #[test]
    fn runs_hold_about_half_the_budget() {
        assert_eq!(runs(48, 79 << 30), Ok(2));
        assert_eq!(runs(48, 1 << 30), Ok(100));
        // 1,024 runs at most: under 64 MiB a 48 GiB sort needs a budget of ~129 MiB.
        assert!(matches!(runs(48, 64 << 20), Err(needed) if (128 << 20..130 << 20).contains(&needed)), "{:?}", runs(48, 64 << 20));
        assert_eq!(MAX_RUNS, 1024);
    }
}

//! The host<->device contract, declared once: the constants both sides use, the device structs
//! whose sizes host temp layouts depend on, and one parameter struct per kernel entry point.
//! [`contract_header`] writes them for the kernels (`mergepath/contract.cuh`: constants, structs,
//! parameter templates and `static_assert`s on every size and field offset); [`contract_rust`]
//! writes them for the host (`#[repr(C)]` structs with the same sizes and offsets, asserted at
//! compile time). The numbers in both assertions come from [`Layout`], C's layout rules.

use std::fmt::Write as _;

/// An integer constant of both sides.
pub struct Constant {
    /// Name on both sides (`mergepath::NAME`, `contract::NAME`).
    pub name: &'static str,
    /// The value.
    pub value: i64,
    /// What it is, for both sides' comments.
    pub doc: &'static str,
}

/// Merge levels the segmented sort's progress counters have room for (two phases each).
const SEGMENTED_MAX_LEVELS: usize = 64;

/// Elements a record's packed order holds (each at least 8 bits, in as many 64-bit words as
/// they take).
const RECORD_MAX_FIELDS: usize = 32;

/// The constants of the contract.
pub const CONSTANTS: &[Constant] = &[
    Constant { name: "PARTITION_THREADS", value: 128, doc: "Threads per CTA of the partition kernels: one thread per partition." },
    Constant { name: "SET_A_ONLY", value: 1, doc: "Set-operation emit flag: an A item with no partner in B goes out." },
    Constant { name: "SET_B_ONLY", value: 2, doc: "Set-operation emit flag: a B item with no partner in A goes out." },
    Constant { name: "SET_MATCHED", value: 4, doc: "Set-operation emit flag: a matched pair goes out (its A item)." },
    Constant {
        name: "LADDER_TILE_BYTES",
        value: 20480,
        doc: "Shared memory of one input's tile in the tiled and circular merge ladder kernels (A's and B's tiles together fit 40 KB).",
    },
    Constant { name: "LADDER_BLOCK_TILES", value: 8, doc: "Tiles per CTA of the tiled and circular merge ladder kernels." },
    Constant { name: "SEGMENTED_MAX_LEVELS", value: SEGMENTED_MAX_LEVELS as i64, doc: "Merge levels the segmented sort's progress counters have room for." },
    Constant {
        name: "MULTIWAY_MAX_WAYS",
        value: 1024,
        doc: "Inputs one multiway pass merges: the partition CTA holds a candidate per input, the merge tile each input's start, in shared memory (more inputs merge in groups).",
    },
    Constant { name: "MERGE_FALLBACK_THREADS", value: 256, doc: "Threads per CTA of the merges' fallback kernels for unsorted inputs (kernel/unsorted.cuh)." },
    Constant { name: "MERGE_FALLBACK_CTAS", value: 264, doc: "CTAs of a merge's fallback kernel for unsorted inputs: two per SM of an H100; each returns at once where no tile reported." },
    Constant { name: "MULTIWAY_PARTITION_THREADS", value: 128, doc: "Threads per CTA of the multiway boundary kernel: one CTA per sample boundary, MULTIWAY_MAX_WAYS / 128 inputs per thread." },
    Constant {
        name: "MULTIWAY_SEARCH_ROUNDS",
        value: 160,
        doc: "Rounds of the multiway split search: each removes at least a quarter of the inputs' total range width, so 155 settle any 64-bit width on sorted inputs; the cap bounds the work on unsorted ones.",
    },
    Constant {
        name: "SAMPLESORT_SPLITTERS",
        value: 255,
        doc: "Splitters of one sample sort distribution pass (2^8 - 1: the classification is an unrolled 8-step binary search). Each splits off an open bucket below it and an equality bucket of the keys equal to it.",
    },
    Constant { name: "SAMPLESORT_BUCKETS", value: 511, doc: "Buckets of one sample sort distribution pass: 2 * SAMPLESORT_SPLITTERS + 1 (even: open, odd: equal to a splitter)." },
    Constant { name: "JOIN_THREADS", value: 256, doc: "Threads per CTA of the join's scan kernel." },
    Constant { name: "JOIN_ITEMS", value: 8, doc: "Rows per thread of the join's scan." },
    Constant { name: "JOIN_MATCHES", value: 0, doc: "Join count mode: a row's matches (inner and right joins' rows of A)." },
    Constant { name: "JOIN_AT_LEAST_ONE", value: 1, doc: "Join count mode: a row's matches, one where there are none (left and full joins' rows of A)." },
    Constant { name: "JOIN_UNMATCHED", value: 2, doc: "Join count mode: one for a row without matches (right and full joins' rows of B)." },
    Constant { name: "SAMPLESORT_SCAN_THREADS", value: 256, doc: "Threads per CTA of the sample sort's scan of bucket counts." },
    Constant { name: "SAMPLESORT_SCAN_ITEMS", value: 16, doc: "Counts per thread of the sample sort's scan." },
    Constant { name: "SAMPLESORT_FINISH_SORT", value: 1 << 30, doc: "Flag of a sample sort finishing job (in its length word): sort the piece (else copy it)." },
    Constant { name: "SAMPLESORT_FINISH_FROM_TEMP", value: 1 << 29, doc: "Flag of a sample sort finishing job: the piece is in the temporary buffer (else already in the output)." },
    Constant {
        name: "RECORD_MAX_FIELDS",
        value: RECORD_MAX_FIELDS as i64,
        doc: "Elements of a record's packed order (each at least 8 bits): the order fields of a record wider than the key tiles, packed into as many u64 words as they take (an element never straddles two), sorted by the first word, then each later word inside the runs the words before it tie in.",
    },
    Constant { name: "RECORD_TIES_THREADS", value: 256, doc: "Threads per CTA of the record sort's tie kernels (mergepath_record_heads, mergepath_record_segments)." },
    Constant {
        name: "RECORD_ADDRESS_REVERSED_BIT",
        value: 63,
        doc: "Records compared by a custom comparator go by their device addresses (uint64 keys, mergepath::by_address): this bit set in the addresses of a call reverses the order (a segmented maximum's sort).",
    },
    Constant { name: "RECORD_TIES_CHUNKS", value: 1024, doc: "Most CTAs (chunks of the items) of the record sort's tie kernels: each segments CTA sums the counts of the chunks before it." },
    Constant { name: "RECORD_FIELD_WORD_SHIFT", value: 52, doc: "A record order element's word: which u64 word of the packed order it goes in (0: the most significant), from this bit." },
    Constant { name: "RECORD_FIELD_KIND_SHIFT", value: 32, doc: "A record order element's word: its byte offset in bits 0..32, its kind from this bit." },
    Constant { name: "RECORD_FIELD_BITS_SHIFT", value: 40, doc: "A record order element's word: where its bits go in the packed order (a shift) from this bit." },
    Constant { name: "RECORD_FIELD_DESCENDING_BIT", value: 48, doc: "A record order element's word: this bit set where the element is descending (its bits complemented)." },
    Constant { name: "RECORD_KIND_SIGNED", value: 16, doc: "A record order element's kind: its size in bytes (1, 2, 4, 8), plus this for signed integers." },
    Constant { name: "RECORD_KIND_FLOAT", value: 32, doc: "A record order element's kind: plus this for floats (IEEE total order)." },
    Constant {
        name: "RUNS_DEFERRED_SHARE",
        value: 8,
        doc: "A runs tile other than the first whose heads are at most 1 / RUNS_DEFERRED_SHARE of its keys does not wait on its look-back: it leaves its heads in a slot of its own (room for a tile's keys / RUNS_DEFERRED_SHARE) for mergepath_run_deferred_{4,8} to write out.",
    },
    Constant { name: "RUNS_GROUP_TILES", value: 64, doc: "Runs tiles a group sums the counts of, and groups a span does, for the deferred tiles' offsets (runs_params' deferred_counts)." },
    Constant { name: "REDUCE_SPINE_THREADS", value: 512, doc: "Threads of a CTA of the segmented reduction's spine, which scans the tiles' partial folds in order." },
    Constant { name: "REDUCE_SPINE_TILES", value: 4, doc: "Tiles' partials a spine thread takes: a spine CTA takes REDUCE_SPINE_THREADS times as many." },
    Constant { name: "REDUCE_SPINE_CARRY_BYTES", value: 96, doc: "Room for one spine CTA's carry in the segmented reduction's look-back (its own fold and the fold it carries on, REDUCE_PARTIAL_BYTES each, and a flag)." },
    Constant { name: "REDUCE_PARTIAL_BYTES", value: 32, doc: "Room for one tile's partial fold in the segmented reduction (a key of at most 16 bytes and a flag, as the key aligns them)." },
    Constant {
        name: "TEMP_ALIGN",
        value: 256,
        doc: "Alignment of every region of a temporary device buffer (the driver's allocation alignment; more than any vector access of the kernels needs).",
    },
];

/// The kind of a field: its C type and its Rust type follow from it.
#[derive(Clone, Copy)]
pub enum Field {
    /// `int64_t` / `i64`.
    I64,
    /// `int` / `i32`.
    I32,
    /// A device pointer (`u64` on the host) of the C type given (`const K*`, `mergepath::split4*`).
    Ptr(&'static str),
    /// `N` of the C type given, which must be `int64_t`, `unsigned long long` or `unsigned int`
    /// (device structs only).
    Array(&'static str, usize),
    /// `unsigned long long` / `u64`.
    U64,
}

impl Field {
    fn size_align(self) -> (usize, usize) {
        match self {
            Field::I64 | Field::U64 | Field::Ptr(_) => (8, 8),
            Field::I32 => (4, 4),
            Field::Array(c, n) => {
                let s = if c == "unsigned int" { 4 } else { 8 };
                (s * n, s)
            }
        }
    }

    fn rust(self) -> String {
        match self {
            Field::I64 => "i64".into(),
            Field::I32 => "i32".into(),
            Field::U64 | Field::Ptr(_) => "u64".into(),
            Field::Array(c, n) => format!(
                "[{}; {n}]",
                match c {
                    "int64_t" => "i64",
                    "unsigned long long" => "u64",
                    _ => "u32",
                }
            ),
        }
    }
}

/// A struct of the contract: a device struct (in `mergepath`) or an entry point's parameters.
pub struct Struct {
    /// C name (`split4`, `merge_pairs_params`); the Rust name is its CamelCase.
    pub name: &'static str,
    /// Template parameters of the C struct (`K`: key type, `V`: value word, others as the
    /// fields use them); the layout never depends on them (they only type pointers).
    pub templates: &'static [&'static str],
    /// What it is.
    pub doc: &'static str,
    /// Fields in order.
    pub fields: &'static [(&'static str, Field)],
}

/// C's layout of a struct: its size, alignment and each field's offset.
pub struct Layout {
    /// `sizeof`.
    pub size: usize,
    /// `alignof`.
    pub align: usize,
    /// `offsetof` of each field, in order.
    pub offsets: Vec<usize>,
}

impl Struct {
    /// Its layout by C's rules: each field at the next multiple of its alignment, the size
    /// rounded up to the largest alignment.
    pub fn layout(&self) -> Layout {
        let (mut at, mut align, mut offsets) = (0usize, 1, Vec::new());
        for (_, f) in self.fields {
            let (s, a) = f.size_align();
            at = at.div_ceil(a) * a;
            offsets.push(at);
            at += s;
            align = align.max(a);
        }
        Layout { size: at.div_ceil(align) * align, align, offsets }
    }

    fn rust_name(&self) -> String {
        rust_type_name(self.name)
    }
}

use Field::{Ptr, I32, I64};

/// Device structs whose sizes host temp layouts use.
pub const DEVICE_STRUCTS: &[Struct] = &[
    Struct {
        name: "split4",
        templates: &[],
        doc: "Items of each of a four-way frame's four runs that go out before a boundary or a tile (frame-local).",
        fields: &[("at", Field::Array("int64_t", 4))],
    },
    Struct {
        name: "sort4_frame",
        templates: &[],
        doc: "A frame of a four-way pass over runs the host lists (the multiway merge's passes): its four runs' keys and values (byte offsets from the kernel's `keys` and `values` parameters, the pass's first run) and item counts, where its output starts, and its first coarse boundary and first output tile among the pass's.",
        fields: &[
            ("keys", Field::Array("unsigned long long", 4)),
            ("values", Field::Array("unsigned long long", 4)),
            ("count", Field::Array("int64_t", 4)),
            ("out_begin", I64),
            ("first_boundary", I64),
            ("first_tile", I64),
        ],
    },
    Struct {
        name: "merge_guard",
        templates: &[],
        doc: "Whether a guarded merge's tile found its share inexact (unsorted inputs), and the fallback kernel's CTAs done: zero between launches (cta/guard.cuh, kernel/unsorted.cuh).",
        fields: &[("done", I32), ("unsorted", I32)],
    },
    Struct { name: "set_split", templates: &[], doc: "Where a balanced-path split falls: a items of A and b of B before it.", fields: &[("a", I64), ("b", I64)] },
    Struct {
        name: "segment_bound",
        templates: &[],
        doc: "Where tile t starts, the segment holding that position and where that segment ends (INT64_MAX for none), so a tile learns from its two bounds alone whether it lies inside one segment.",
        fields: &[("pos", I64), ("segment", I64), ("segment_end", I64)],
    },
    Struct {
        name: "segment_tile_jobs",
        templates: &[],
        doc: "What the merge levels do in a tile: the long segments crossing a tile start that hold the tile's first and last items (-1: none; the two may be the same), and the most levels either needs.",
        fields: &[("segment", Field::Array("int64_t", 2)), ("levels", I64)],
    },
    Struct {
        name: "segment_offsets_check",
        templates: &[],
        doc: "What the check of host offsets found: the first offset out of order (one above the next, or the last past the keys; all ones: none), and the most tiles a segment longer than `small` touches (0: none).",
        fields: &[("first_invalid", Field::U64), ("max_pieces", Field::U64)],
    },
    Struct {
        name: "segment_merge",
        templates: &[],
        doc: "What one CTA merges for one job at a merge level: the input slices and where the output starts (out_begin < 0: nothing).",
        fields: &[("a_begin", I64), ("a_end", I64), ("b_begin", I64), ("b_end", I64), ("out_begin", I64)],
    },
    Struct {
        name: "samplesort_segment",
        templates: &[],
        doc: "A piece a sample sort distribution pass splits into buckets: where it starts, its length, its first chunk among the pass's chunks, and `base` = start minus the pieces before it in the pass (the scan of bucket counts runs over all pieces' counts at once).",
        fields: &[("start", I64), ("length", I64), ("first_chunk", I64), ("base", I64)],
    },
    Struct {
        name: "segmented_levels_progress",
        templates: &[],
        doc: "How far the segmented sort's merge levels have got: work items handed out, and the items finished in each phase (phase 2 l: level l's splits, 2 l + 1: its merges). Zeroed by the bounds kernel.",
        fields: &[("handed", Field::U64), ("done", Field::Array("unsigned int", 2 * SEGMENTED_MAX_LEVELS))],
    },
];

const KEYS: &str = "const K*";
const KEYS_OUT: &str = "K*";
const VALS: &str = "const V*";
const VALS_OUT: &str = "V*";
const PARTS: &str = "const int64_t*";
const GUARD: &str = "mergepath::merge_guard*";
const BYTES: &str = "const unsigned char*";
const BYTES_OUT: &str = "unsigned char*";

/// One parameter struct per kind of entry point (`mergepath_NAME` or `mergepath_NAME_{4,8,16}`
/// takes `NAME_params`, unless its comment in the entry files says otherwise).
pub const KERNEL_PARAMS: &[Struct] = &[
    Struct {
        name: "partitions_params",
        templates: &["K"],
        doc: "mergepath_partitions and mergepath_partitions_b_first: the merge path's split every `spacing` outputs of merging a and b.",
        fields: &[("a", Ptr(KEYS)), ("a_count", I64), ("b", Ptr(KEYS)), ("b_count", I64), ("spacing", I64), ("num_partitions", I64), ("partitions", Ptr("int64_t*"))],
    },
    Struct {
        name: "merge_keys_params",
        templates: &["K"],
        doc: "mergepath_merge_keys: the two-phase merge of a and b over the partitions.",
        fields: &[
            ("a", Ptr(KEYS)),
            ("a_count", I64),
            ("b", Ptr(KEYS)),
            ("b_count", I64),
            ("partitions", Ptr(PARTS)),
            ("out", Ptr(KEYS_OUT)),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "merge_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_merge_pairs_{4,8,16}: as merge_keys_params with values.",
        fields: &[
            ("a", Ptr(KEYS)),
            ("a_vals", Ptr(VALS)),
            ("a_count", I64),
            ("b", Ptr(KEYS)),
            ("b_vals", Ptr(VALS)),
            ("b_count", I64),
            ("partitions", Ptr(PARTS)),
            ("out", Ptr(KEYS_OUT)),
            ("out_vals", Ptr(VALS_OUT)),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "merge_ladder_params",
        templates: &["K"],
        doc: "mergepath_merge_{basic,tiled,circular}: the merge ladder's kernels.",
        fields: &[("a", Ptr(KEYS)), ("a_count", I64), ("b", Ptr(KEYS)), ("b_count", I64), ("out", Ptr(KEYS_OUT))],
    },
    Struct {
        name: "sort_partitions_params",
        templates: &["K"],
        doc: "mergepath_sort_partitions: a two-way merge pass's partitions over runs of `run` keys.",
        fields: &[("keys", Ptr(KEYS)), ("count", I64), ("spacing", I64), ("run", I64), ("num_partitions", I64), ("partitions", Ptr("int64_t*"))],
    },
    Struct {
        name: "blocksort_keys_params",
        templates: &["K"],
        doc: "mergepath_blocksort{,2}_keys and the packed-key blocksorts (whose output is packed u64 except for pack_unpack).",
        fields: &[("input", Ptr(KEYS)), ("count", I64), ("out", Ptr(KEYS_OUT))],
    },
    Struct {
        name: "blocksort_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_blocksort_pairs_{4,8,16}, and with V = uint32_t the zipped pairs' blocksorts (entry/zipped.cuh: mergepath_blocksort{,2}_zip write u64 words to `out`, mergepath_blocksort_zip_unzip keys and values).",
        fields: &[("input", Ptr(KEYS)), ("input_vals", Ptr(VALS)), ("count", I64), ("out", Ptr(KEYS_OUT)), ("out_vals", Ptr(VALS_OUT))],
    },
    Struct {
        name: "sort_merge_keys_params",
        templates: &["K", "P"],
        doc: "A merge pass: mergepath_sort_merge_keys and mergepath_sort_merge_unpack (two-way, P = int64_t; partitions null: searched in the kernel), mergepath_sort4_merge_keys and mergepath_sort4_merge_unpack (four-way, P = split4); the unpack passes read packed u64. Four-way passes of the multiway merge (mergepath_multiway4_merge_keys): `frames`, the pass's `num_frames` frames (instead of runs of `run` items of `input`), their runs' addresses byte offsets from `input`; tiles that cannot put out their share's items report to `guard` (cta/guard.cuh). The sort's kernels take neither: null.",
        fields: &[
            ("input", Ptr(KEYS)),
            ("count", I64),
            ("run", I64),
            ("partitions", Ptr("const P*")),
            ("out", Ptr(KEYS_OUT)),
            ("frames", Ptr("const mergepath::sort4_frame*")),
            ("num_frames", I64),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "sort_merge_pairs_params",
        templates: &["K", "V", "P"],
        doc: "mergepath_sort_merge_pairs_{4,8,16} (P = int64_t), mergepath_sort4_merge_pairs_{4,8,16} and mergepath_multiway4_merge_pairs_{4,8,16} (P = split4), as sort_merge_keys_params; the zipped pairs' last passes mergepath_sort_merge_unzip and mergepath_sort4_merge_unzip (V = uint32_t) read u64 words from `input` (no input_vals) and write keys and values.",
        fields: &[
            ("input", Ptr(KEYS)),
            ("input_vals", Ptr(VALS)),
            ("count", I64),
            ("run", I64),
            ("partitions", Ptr("const P*")),
            ("out", Ptr(KEYS_OUT)),
            ("out_vals", Ptr(VALS_OUT)),
            ("frames", Ptr("const mergepath::sort4_frame*")),
            ("num_frames", I64),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "sort4_boundaries_params",
        templates: &["K"],
        doc: "mergepath_sort4_boundaries and mergepath_multiway4_boundaries: a four-way pass's coarse boundaries, each searched by a group of `lanes` threads (a power of two up to 32; frames as in sort_merge_keys_params).",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("count", I64),
            ("spacing", I64),
            ("run", I64),
            ("num_boundaries", I64),
            ("lanes", I32),
            ("splits", Ptr("mergepath::split4*")),
            ("frames", Ptr("const mergepath::sort4_frame*")),
            ("num_frames", I64),
        ],
    },
    Struct {
        name: "sort4_tile_splits_params",
        templates: &["K"],
        doc: "mergepath_sort4_tile_splits and mergepath_multiway4_tile_splits: each output tile's exact split (tiles of `tile` items, a multiple of the boundaries' `spacing`), searched by a group of `lanes` threads (a power of two up to 32; frames as in sort_merge_keys_params).",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("count", I64),
            ("spacing", I64),
            ("tile", I64),
            ("run", I64),
            ("coarse", Ptr("const mergepath::split4*")),
            ("num_tiles", I64),
            ("lanes", I32),
            ("splits", Ptr("mergepath::split4*")),
            ("frames", Ptr("const mergepath::sort4_frame*")),
            ("num_frames", I64),
        ],
    },
    Struct {
        name: "compare_all_params",
        templates: &["K"],
        doc: "mergepath_compare_all: out[i * count + j] = comp(keys[i], keys[j]) (1 or 0), the comparator's CUDA twin on every ordered pair (mergepath::testing::check_comparator).",
        fields: &[("keys", Ptr(KEYS)), ("count", I64), ("out", Ptr("uint8_t*"))],
    },
    Struct {
        name: "multiway_boundaries_params",
        templates: &["K"],
        doc: "mergepath_multiway_boundaries: the items at every `spacing`-th position (after the first) of every input, in merge order: row s of `rows` (`ways` entries) is the split before boundary s, ranks[s] its sum (one CTA per boundary; boundary_starts[t]: the boundaries of inputs before t, `ways` entries).",
        fields: &[
            ("inputs", Ptr("const K* const*")),
            ("counts", Ptr("const int64_t*")),
            ("ways", I64),
            ("spacing", I64),
            ("boundary_starts", Ptr("const int64_t*")),
            ("num_boundaries", I64),
            ("rows", Ptr("int64_t*")),
            ("ranks", Ptr("int64_t*")),
        ],
    },
    Struct {
        name: "multiway_partitions_params",
        templates: &["K"],
        doc: "mergepath_multiway_partitions: splits[p * ways + t] = input t's items before output rank min(p * spacing, total) of the stable merge of the inputs, found inside the bracket of mergepath_multiway_boundaries' rows around that rank (one CTA of the sort shape per partition).",
        fields: &[
            ("inputs", Ptr("const K* const*")),
            ("counts", Ptr("const int64_t*")),
            ("ways", I64),
            ("total", I64),
            ("spacing", I64),
            ("num_partitions", I64),
            ("boundary_rows", Ptr("const int64_t*")),
            ("boundary_ranks", Ptr("const int64_t*")),
            ("num_boundaries", I64),
            ("splits", Ptr("int64_t*")),
        ],
    },
    Struct {
        name: "multiway_merge_keys_params",
        templates: &["K"],
        doc: "mergepath_multiway_merge_keys: output tile blockIdx.x of the stable merge of the inputs, between its two rows of splits.",
        fields: &[
            ("inputs", Ptr("const K* const*")),
            ("counts", Ptr("const int64_t*")),
            ("ways", I64),
            ("total", I64),
            ("splits", Ptr("const int64_t*")),
            ("out", Ptr(KEYS_OUT)),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "multiway_merge_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_multiway_merge_pairs_{4,8,16}: as multiway_merge_keys_params, values following their keys.",
        fields: &[
            ("inputs", Ptr("const K* const*")),
            ("values", Ptr("const V* const*")),
            ("counts", Ptr("const int64_t*")),
            ("ways", I64),
            ("total", I64),
            ("splits", Ptr("const int64_t*")),
            ("out", Ptr(KEYS_OUT)),
            ("out_vals", Ptr(VALS_OUT)),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "merge_fallback_params",
        templates: &[],
        doc: "mergepath_merge_fallback: where a tile of the two-way merge before it reported unsorted inputs, a's then b's items (keys of key_bytes, values of value_bytes, 0: none) over the output.",
        fields: &[
            ("guard", Ptr(GUARD)),
            ("a", Ptr(BYTES)),
            ("a_vals", Ptr(BYTES)),
            ("a_count", I64),
            ("b", Ptr(BYTES)),
            ("b_vals", Ptr(BYTES)),
            ("b_count", I64),
            ("key_bytes", I64),
            ("value_bytes", I64),
            ("out", Ptr(BYTES_OUT)),
            ("out_vals", Ptr(BYTES_OUT)),
        ],
    },
    Struct {
        name: "multiway_fallback_params",
        templates: &[],
        doc: "mergepath_multiway_fallback: as merge_fallback_params for the multiway merge before it, its inputs (and values: null for none) in order.",
        fields: &[
            ("guard", Ptr(GUARD)),
            ("inputs", Ptr("const unsigned char* const*")),
            ("values", Ptr("const unsigned char* const*")),
            ("counts", Ptr("const int64_t*")),
            ("ways", I64),
            ("key_bytes", I64),
            ("value_bytes", I64),
            ("out", Ptr(BYTES_OUT)),
            ("out_vals", Ptr(BYTES_OUT)),
        ],
    },
    Struct {
        name: "samplesort_samples_params",
        templates: &["K"],
        doc: "mergepath_samplesort_samples: for each piece (one CTA each), `samples` keys taken at evenly spaced positions of it, sorted, to sorted[piece * samples ..].",
        fields: &[("keys", Ptr(KEYS)), ("segments", Ptr("const mergepath::samplesort_segment*")), ("num_segments", I64), ("samples", I64), ("sorted", Ptr(KEYS_OUT))],
    },
    Struct {
        name: "samplesort_count_params",
        templates: &["K"],
        doc: "mergepath_samplesort_count: chunk c (`chunk_items` consecutive keys of piece chunk_segments[c], one CTA) classifies its keys by its piece's splitters and writes its count of every bucket, bucket-major per piece: counts[first_chunk * BUCKETS + bucket * chunks + c - first_chunk]; zeroes the scan's states.",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("sorted_samples", Ptr(KEYS)),
            ("samples", I64),
            ("segments", Ptr("const mergepath::samplesort_segment*")),
            ("chunk_segments", Ptr("const int*")),
            ("num_chunks", I64),
            ("chunk_items", I64),
            ("counts", Ptr("unsigned int*")),
            ("scan_states", Ptr("uint64_t*")),
            ("num_scan_states", I64),
        ],
    },
    Struct {
        name: "samplesort_scan_params",
        templates: &[],
        doc: "mergepath_samplesort_scan: offsets = the exclusive prefix sum of counts, in one pass (decoupled look-back over scan tiles; scan_states: tiles + 1 zeroed slots, the last the ticket counter).",
        fields: &[("counts", Ptr("const unsigned int*")), ("num_counts", I64), ("offsets", Ptr("int64_t*")), ("scan_states", Ptr("uint64_t*"))],
    },
    Struct {
        name: "samplesort_scatter_keys_params",
        templates: &["K"],
        doc: "mergepath_samplesort_scatter_keys: chunk c classifies its keys again, a tile at a time, and writes each, stably, to its bucket's place in keys_out (its piece's base + the scanned offset of its bucket and chunk + the bucket's keys in the chunk before it); a piece's first chunk writes its buckets' starts to bucket_starts[piece * BUCKETS ..].",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("sorted_samples", Ptr(KEYS)),
            ("samples", I64),
            ("segments", Ptr("const mergepath::samplesort_segment*")),
            ("chunk_segments", Ptr("const int*")),
            ("num_chunks", I64),
            ("chunk_items", I64),
            ("offsets", Ptr("const int64_t*")),
            ("bucket_starts", Ptr("int64_t*")),
            ("keys_out", Ptr(KEYS_OUT)),
        ],
    },
    Struct {
        name: "samplesort_scatter_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_samplesort_scatter_pairs_{4,8,16}: as samplesort_scatter_keys_params, values following their keys.",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("values", Ptr(VALS)),
            ("sorted_samples", Ptr(KEYS)),
            ("samples", I64),
            ("segments", Ptr("const mergepath::samplesort_segment*")),
            ("chunk_segments", Ptr("const int*")),
            ("num_chunks", I64),
            ("chunk_items", I64),
            ("offsets", Ptr("const int64_t*")),
            ("bucket_starts", Ptr("int64_t*")),
            ("keys_out", Ptr(KEYS_OUT)),
            ("values_out", Ptr(VALS_OUT)),
        ],
    },
    Struct {
        name: "samplesort_finish_keys_params",
        templates: &["K"],
        doc: "mergepath_samplesort_finish_keys: job j (one CTA each) takes the piece at starts[j] of jobs[j] & (SAMPLESORT_FINISH_FROM_TEMP - 1) keys (at most a blocksort tile: consecutive finished buckets) from temp (flag SAMPLESORT_FINISH_FROM_TEMP) or out and writes it to the same place of out, sorted (flag SAMPLESORT_FINISH_SORT) or copied.",
        fields: &[("temp", Ptr(KEYS)), ("out", Ptr(KEYS_OUT)), ("starts", Ptr("const int64_t*")), ("jobs", Ptr("const int*")), ("num_jobs", I64)],
    },
    Struct {
        name: "samplesort_finish_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_samplesort_finish_pairs_{4,8,16}: as samplesort_finish_keys_params, values following their keys.",
        fields: &[
            ("temp", Ptr(KEYS)),
            ("temp_values", Ptr(VALS)),
            ("out", Ptr(KEYS_OUT)),
            ("out_values", Ptr(VALS_OUT)),
            ("starts", Ptr("const int64_t*")),
            ("jobs", Ptr("const int*")),
            ("num_jobs", I64),
        ],
    },
    Struct {
        name: "iota_params",
        templates: &["V"],
        doc: "mergepath_iota_{4,8}: out[i] = first + i * step.",
        fields: &[("out", Ptr(VALS_OUT)), ("first", I64), ("step", I64), ("count", I64)],
    },
    Struct {
        name: "load_balancing_params",
        templates: &["I"],
        doc: "mergepath_load_balancing_partitions_{4,8} (one thread per partition: the merge of the boundaries starts[1..segments) with the items 0..count, tiles of `spacing` outputs) and mergepath_load_balancing_{4,8} (one CTA per tile: segment_out[j] and, where rank_out is not null, rank_out[j] for the tile's items); mergepath_interval_expand_{word}_{4,8} (the same tiles writing value_out[j], the item's segment's value of `words` words of `word` bytes from `values`, instead).",
        fields: &[
            ("starts", Ptr("const I*")),
            ("segments", I64),
            ("count", I64),
            ("spacing", I64),
            ("num_partitions", I64),
            ("partitions", Ptr("int64_t*")),
            ("segment_out", Ptr("I*")),
            ("rank_out", Ptr("I*")),
            ("values", Ptr(BYTES)),
            ("value_out", Ptr(BYTES_OUT)),
            ("words", I64),
        ],
    },
    Struct {
        name: "segmented_reduce_params",
        templates: &["I"],
        doc: "mergepath_segmented_reduce_{sum,min,max}_{4,8} (one CTA per tile of the load-balancing search's merge, tiles of `spacing` outputs, partitions from mergepath_load_balancing_partitions_{4,8} at that spacing): out[s] = the fold of segment s's values (count keys, segments by starts as the search's) for the segments that begin and end in the tile, the tile's head and tail folds in heads[tile] and tails[tile] (REDUCE_PARTIAL_BYTES each); then mergepath_segmented_reduce_spine_{sum,min,max} (CTAs of REDUCE_SPINE_THREADS, one per REDUCE_SPINE_THREADS * REDUCE_SPINE_TILES tiles' partials and at least one, chained by a look-back: spine_states, their count + 1 zeroed slots, the last a ticket; spine_carries, REDUCE_SPINE_CARRY_BYTES each) writes the others. `empty` holds the key (at most 16 bytes) given to segments with no values. mergepath_reduce_runs_{sum,min,max}_{4,8} (one CTA per tile of the reduce_runs shape over the `count` values, `tiles` of them) takes the segments as runs (none empty) from their boundary words instead of starts (boundary_bits[w]: bit i where value 32w + i begins a run other than the first; boundaries_before[w]: the bits set in the words before w, from mergepath_run_starts_{4,8}), writes the runs that begin and end in the tile, the partials as the tiles above, and partitions[tile] = the boundaries before the tile (the last tile also partitions[tiles] = segments - 1), for the same spine.",
        fields: &[
            ("starts", Ptr("const I*")),
            ("boundary_bits", Ptr("const unsigned*")),
            ("boundaries_before", Ptr("const I*")),
            ("segments", I64),
            ("count", I64),
            ("values", Ptr(BYTES)),
            ("spacing", I64),
            ("partitions", Ptr("int64_t*")),
            ("tiles", I64),
            ("heads", Ptr(BYTES_OUT)),
            ("tails", Ptr(BYTES_OUT)),
            ("spine_states", Ptr("uint64_t*")),
            ("spine_carries", Ptr(BYTES_OUT)),
            ("out", Ptr(BYTES_OUT)),
            ("empty", Field::Array("unsigned long long", 2)),
        ],
    },
    Struct {
        name: "runs_params",
        templates: &["I"],
        doc: "mergepath_run_starts_{4,8} (one CTA per tile of the runs shape, `num_tiles` of them, tiles taking their indices from the ticket tile_states[num_tiles]; tile_states: num_tiles + 1 zeroed slots): starts[j] (where not null) = the position of the j-th run of equal keys among `count` keys, and where `heads` is not null heads[j] = its first key (room for `count`), *runs = the number of runs (and *runs_host, where not null: mapped pinned host memory the host polls); where boundary_bits is not null, the runs' boundaries as mergepath_reduce_runs_{sum,min,max}_{4,8} reads them (boundary_bits: a word for each 32 keys, boundaries_before: one I per word); where `lengths` is not null, lengths[j] = run j's length (room for `count`; tile_lasts: num_tiles slots, the look-back's last run head before each tile); where deferred_positions is not null, a tile of few heads (RUNS_DEFERRED_SHARE) leaves them (their positions in the tile, and their keys in deferred_heads where `heads` is not null) in its slot, every tile adding its count to deferred_counts (num_tiles + groups + spans zeroed slots: its own, its group's of RUNS_GROUP_TILES tiles, its span's of RUNS_GROUP_TILES groups) and, with the lengths, its last head + 1 to the maxima of deferred_lasts (groups + spans zeroed slots); then mergepath_run_deferred_{4,8} (CTAs of the runs shape's threads, a warp a tile, a programmatic dependent of the first kernel, with the same parameters) writes those tiles' outputs (and the run count where the last tile was deferred); mergepath_run_lengths_{4,8} (one thread per run, *runs of them, from the starts): lengths[j] = run j's length.",
        fields: &[
            ("keys", Ptr(BYTES)),
            ("count", I64),
            ("num_tiles", I64),
            ("tile_states", Ptr("uint64_t*")),
            ("starts", Ptr("I*")),
            ("heads", Ptr(BYTES_OUT)),
            ("runs", Ptr("uint64_t*")),
            ("runs_host", Ptr("uint64_t*")),
            ("lengths", Ptr("I*")),
            ("tile_lasts", Ptr("int64_t*")),
            ("boundary_bits", Ptr("unsigned*")),
            ("boundaries_before", Ptr("I*")),
            ("deferred_positions", Ptr("uint16_t*")),
            ("deferred_heads", Ptr(BYTES_OUT)),
            ("deferred_counts", Ptr("unsigned*")),
            ("deferred_lasts", Ptr("uint64_t*")),
        ],
    },
    Struct {
        name: "scatter_params",
        templates: &["P"],
        doc: "mergepath_scatter_{4,8} (position bytes): out[positions[i]] = values[i] for i below count, positions a permutation of 0..count (a gather's inverse: each record's rank put back at its position).",
        fields: &[("values", Ptr("const uint64_t*")), ("positions", Ptr("const P*")), ("out", Ptr("uint64_t*")), ("count", I64)],
    },
    Struct {
        name: "gather_params",
        templates: &["P"],
        doc: "mergepath_gather_{1,2,4,8,16}_{4,8} (word bytes, position bytes): item i of out (words words) = item positions[i] of a, or item positions[i] - split of b where positions[i] >= split.",
        fields: &[
            ("a", Ptr("const void*")),
            ("b", Ptr("const void*")),
            ("positions", Ptr("const P*")),
            ("out", Ptr("void*")),
            ("split", I64),
            ("count", I64),
            ("words", I64),
        ],
    },
    Struct {
        name: "record_order_params",
        templates: &["P"],
        doc: "mergepath_record_order_{4,8} (position bytes): order[i] = word `word` of the packed order (num_fields elements, each a word of offset, kind, shift, direction and packed word: the RECORD_ constants) of record i, positions[i] = i written (gather 0), or of record positions[i] (gather 1: a later word's pass, the positions sorted by the earlier); nothing where `runs` (the tied runs' offsets from mergepath_record_segments, or null) say no items tie (runs[0] = count).",
        fields: &[
            ("records", Ptr("const unsigned char*")),
            ("record_bytes", I64),
            ("count", I64),
            ("fields", Field::Array("int64_t", RECORD_MAX_FIELDS)),
            ("num_fields", I64),
            ("word", I64),
            ("gather", I64),
            ("order", Ptr("uint64_t*")),
            ("positions", Ptr("P*")),
            ("runs", Ptr("const uint64_t*")),
        ],
    },
    Struct {
        name: "record_heads_params",
        templates: &[],
        doc: "mergepath_record_heads: over chunks of `chunk` items (one CTA each), heads[i] = 1 where order[i] starts a run of equal words (i = 0 or order[i] != order[i - 1]) or, unless `first`, heads[i] was already 1; chunk_heads[c] = the heads of chunk c.",
        fields: &[
            ("order", Ptr("const uint64_t*")),
            ("count", I64),
            ("chunk", I64),
            ("first", I64),
            ("heads", Ptr("unsigned char*")),
            ("chunk_heads", Ptr("int64_t*")),
        ],
    },
    Struct {
        name: "interval_move_params",
        templates: &["I"],
        doc: "mergepath_interval_{gather,scatter,move}_{word}_{4,8} (the load-balancing search's tiles, in the interval shape, over `count` items in `segments` intervals by `starts`, partitions from mergepath_load_balancing_partitions_{4,8}): item j, of rank r in interval s, copied from input[sources[s] + r] (gather and move; scatter reads input[j] and ignores sources) to output[destinations[s] + r] (scatter and move; gather writes output[j] and ignores destinations), values of `words` words of `word` bytes (`words` 1; the `_words_` kernels, compiled apart, for 2 or more), moves outside input_len or output_len values skipped.",
        fields: &[
            ("starts", Ptr("const I*")),
            ("segments", I64),
            ("count", I64),
            ("partitions", Ptr("const int64_t*")),
            ("sources", Ptr("const I*")),
            ("destinations", Ptr("const I*")),
            ("input", Ptr(BYTES)),
            ("input_len", I64),
            ("output", Ptr(BYTES_OUT)),
            ("output_len", I64),
            ("words", I64),
        ],
    },
    Struct {
        name: "bulk_params",
        templates: &["I"],
        doc: "mergepath_bulk_partitions_{4,8} (one thread per partition: the merge of the `count` positions with the array's positions 0..n, ties to the positions, tiles of `spacing` outputs); mergepath_bulk_insert_{word}_{4,8} and mergepath_bulk_remove_{word}_{4,8} (one CTA per tile, of the load-balancing search's shape for the positions' width): insert writes out[o] for the tile's merge outputs, values[h] for position h and array[k] for the array's item k; remove (distinct positions, `values` unused) writes the tile's kept items of the array to their places in out, none at or past out_len; values of `words` words of `word` bytes. A tile whose partitions, threads' shares or (remove) split and slots are not exact (unsorted positions) writes nothing and reports to `guard`, for mergepath_merge_fallback after it.",
        fields: &[
            ("positions", Ptr("const I*")),
            ("count", I64),
            ("n", I64),
            ("spacing", I64),
            ("num_partitions", I64),
            ("partitions", Ptr("int64_t*")),
            ("array", Ptr(BYTES)),
            ("values", Ptr(BYTES)),
            ("out", Ptr(BYTES_OUT)),
            ("out_len", I64),
            ("words", I64),
            ("guard", Ptr(GUARD)),
        ],
    },
    Struct {
        name: "join_params",
        templates: &[],
        doc: "mergepath_join_scan (one CTA of JOIN_THREADS per tile of JOIN_THREADS * JOIN_ITEMS rows, `tiles` of them, tiles taking their indices from the ticket tile_states[tiles]; tile_states: tiles + 1 zeroed slots): offsets[i] = the outputs of rows 0..i under `mode`, a row's matches being lower[i]..upper[i] cut at other_rows, and *total their sum; mergepath_join_expand (the load-balancing search's tiles for 8-byte indices over the `outputs` outputs in `rows` rows starting at `offsets`, partitions from mergepath_load_balancing_partitions_8): output k's pair at out_first + k in out_a and out_b (-1: no row).",
        fields: &[
            ("lower", Ptr("const uint64_t*")),
            ("upper", Ptr("const uint64_t*")),
            ("rows", I64),
            ("other_rows", I64),
            ("mode", I64),
            ("tiles", I64),
            ("tile_states", Ptr("uint64_t*")),
            ("offsets", Ptr("int64_t*")),
            ("total", Ptr("int64_t*")),
            ("outputs", I64),
            ("out_first", I64),
            ("out_a", Ptr("int64_t*")),
            ("out_b", Ptr("int64_t*")),
            ("partitions", Ptr("const int64_t*")),
        ],
    },
    Struct {
        name: "comparator_heads_params",
        templates: &[],
        doc: "mergepath_comparator_heads: as mergepath_record_heads (the same chunks, one CTA each) over `count` keys of the module, heads[i] = 1 where keys[i] starts a run of keys equal under its comparator (i = 0, or keys[i - 1] < keys[i] or keys[i] < keys[i - 1]); chunk_heads[c] = the heads of chunk c, for mergepath_record_segments.",
        fields: &[("keys", Ptr(BYTES)), ("count", I64), ("chunk", I64), ("heads", Ptr("unsigned char*")), ("chunk_heads", Ptr("int64_t*"))],
    },
    Struct {
        name: "record_segments_params",
        templates: &[],
        doc: "mergepath_record_segments: offsets[j] = the position of the j-th head (heads and chunk_heads from mergepath_record_heads, the same chunks), and offsets[heads] = count; where every item is a head (no ties), every offset is count (empty segments: nothing to sort).",
        fields: &[
            ("heads", Ptr("const unsigned char*")),
            ("count", I64),
            ("chunk", I64),
            ("chunk_heads", Ptr("const int64_t*")),
            ("offsets", Ptr("uint64_t*")),
        ],
    },
    Struct {
        name: "segmented_bounds_params",
        templates: &[],
        doc: "mergepath_segmented_bounds: the tile starts, the level count and the zeroed progress counters.",
        fields: &[
            ("offsets", Ptr(PARTS)),
            ("num_segments", I64),
            ("count", I64),
            ("stride", I64),
            ("small", I64),
            ("num_tiles", I64),
            ("bounds", Ptr("mergepath::segment_bound*")),
            ("max_levels", Ptr("int*")),
            ("progress", Ptr("mergepath::segmented_levels_progress*")),
        ],
    },
    Struct {
        name: "segment_offsets_check_params",
        templates: &[],
        doc: "mergepath_segment_offsets_check: host offsets (num_offsets of them, unsigned) checked against count keys, and their tiles counted for tiles every `stride` positions, into *result (first_invalid lowered, max_pieces raised).",
        fields: &[
            ("offsets", Ptr("const unsigned long long*")),
            ("num_offsets", I64),
            ("count", I64),
            ("stride", I64),
            ("small", I64),
            ("result", Ptr("mergepath::segment_offsets_check*")),
        ],
    },
    Struct {
        name: "segmented_blocksort_keys_params",
        templates: &["K"],
        doc: "mergepath_segmented_blocksort_{one_,,items_}keys: the tile sorts of one kind.",
        fields: &[
            ("keys", Ptr(KEYS_OUT)),
            ("count", I64),
            ("offsets", Ptr(PARTS)),
            ("num_segments", I64),
            ("stride", I64),
            ("bounds", Ptr("const mergepath::segment_bound*")),
            ("kinds", Ptr("unsigned char*")),
            ("jobs", Ptr("mergepath::segment_tile_jobs*")),
            ("max_levels", Ptr("int*")),
        ],
    },
    Struct {
        name: "segmented_blocksort_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_segmented_blocksort_{one_,,items_}pairs_{4,8,16}.",
        fields: &[
            ("keys", Ptr(KEYS_OUT)),
            ("values", Ptr(VALS_OUT)),
            ("count", I64),
            ("offsets", Ptr(PARTS)),
            ("num_segments", I64),
            ("stride", I64),
            ("bounds", Ptr("const mergepath::segment_bound*")),
            ("kinds", Ptr("unsigned char*")),
            ("jobs", Ptr("mergepath::segment_tile_jobs*")),
            ("max_levels", Ptr("int*")),
        ],
    },
    Struct {
        name: "segmented_level_splits_params",
        templates: &["K"],
        doc: "mergepath_segmented_level_splits: each tile's share of its jobs' merges at one level.",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("count", I64),
            ("offsets", Ptr(PARTS)),
            ("stride", I64),
            ("small", I64),
            ("jobs", Ptr("const mergepath::segment_tile_jobs*")),
            ("max_levels", Ptr("const int*")),
            ("level", I64),
            ("merges", Ptr("mergepath::segment_merge*")),
        ],
    },
    Struct {
        name: "segmented_merge_keys_params",
        templates: &["K"],
        doc: "mergepath_segmented_merge_keys: one level's merges.",
        fields: &[("keys_in", Ptr(KEYS)), ("max_levels", Ptr("const int*")), ("level", I64), ("merges", Ptr("const mergepath::segment_merge*")), ("keys_out", Ptr(KEYS_OUT))],
    },
    Struct {
        name: "segmented_merge_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_segmented_merge_pairs_{4,8,16}.",
        fields: &[
            ("keys_in", Ptr(KEYS)),
            ("values_in", Ptr(VALS)),
            ("max_levels", Ptr("const int*")),
            ("level", I64),
            ("merges", Ptr("const mergepath::segment_merge*")),
            ("keys_out", Ptr(KEYS_OUT)),
            ("values_out", Ptr(VALS_OUT)),
        ],
    },
    Struct {
        name: "segmented_levels_keys_params",
        templates: &["K"],
        doc: "mergepath_segmented_levels_keys: the levels from first_level on and the copy back, in one launch.",
        fields: &[
            ("keys", Ptr(KEYS_OUT)),
            ("tmp_keys", Ptr(KEYS_OUT)),
            ("count", I64),
            ("offsets", Ptr(PARTS)),
            ("stride", I64),
            ("jobs", Ptr("const mergepath::segment_tile_jobs*")),
            ("max_levels", Ptr("const int*")),
            ("first_level", I64),
            ("merges", Ptr("mergepath::segment_merge*")),
            ("progress", Ptr("mergepath::segmented_levels_progress*")),
        ],
    },
    Struct {
        name: "segmented_levels_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_segmented_levels_pairs_{4,8,16}.",
        fields: &[
            ("keys", Ptr(KEYS_OUT)),
            ("values", Ptr(VALS_OUT)),
            ("tmp_keys", Ptr(KEYS_OUT)),
            ("tmp_values", Ptr(VALS_OUT)),
            ("count", I64),
            ("offsets", Ptr(PARTS)),
            ("stride", I64),
            ("jobs", Ptr("const mergepath::segment_tile_jobs*")),
            ("max_levels", Ptr("const int*")),
            ("first_level", I64),
            ("merges", Ptr("mergepath::segment_merge*")),
            ("progress", Ptr("mergepath::segmented_levels_progress*")),
        ],
    },
    Struct {
        name: "key_bounds_params",
        templates: &["K"],
        doc: "mergepath_key_bounds: lower[i] / upper[i] = the keys of keys[0..count) before needles[i] / not after it, by binary search (needles in any order).",
        fields: &[
            ("keys", Ptr(KEYS)),
            ("count", I64),
            ("needles", Ptr(KEYS)),
            ("needle_count", I64),
            ("lower", Ptr("int64_t*")),
            ("upper", Ptr("int64_t*")),
        ],
    },
    Struct {
        name: "sorted_search_params",
        templates: &["K", "O"],
        doc: "mergepath_sorted_search_*: O the output's type; `upper` is written by the range entries only.",
        fields: &[
            ("needles", Ptr(KEYS)),
            ("needle_count", I64),
            ("haystack", Ptr(KEYS)),
            ("haystack_count", I64),
            ("partitions", Ptr(PARTS)),
            ("out", Ptr("O*")),
            ("upper", Ptr("O*")),
        ],
    },
    Struct {
        name: "set_partitions_params",
        templates: &["K"],
        doc: "mergepath_set_partitions: the Balanced Path splits, and the tile states zeroed.",
        fields: &[
            ("a", Ptr(KEYS)),
            ("a_count", I64),
            ("b", Ptr(KEYS)),
            ("b_count", I64),
            ("spacing", I64),
            ("num_splits", I64),
            ("splits", Ptr("mergepath::set_split*")),
            ("tile_states", Ptr("uint64_t*")),
        ],
    },
    Struct {
        name: "set_keys_params",
        templates: &["K"],
        doc: "mergepath_set_keys: the compacted result of a set operation (`emit`: SET_* flags) and its length.",
        fields: &[
            ("a", Ptr(KEYS)),
            ("b", Ptr(KEYS)),
            ("splits", Ptr("const mergepath::set_split*")),
            ("num_tiles", I64),
            ("emit", I32),
            ("tile_states", Ptr("uint64_t*")),
            ("out", Ptr(KEYS_OUT)),
            ("capacity", I64),
            ("out_count", Ptr("uint64_t*")),
        ],
    },
    Struct {
        name: "set_pairs_params",
        templates: &["K", "V"],
        doc: "mergepath_set_pairs_{4,8,16}.",
        fields: &[
            ("a", Ptr(KEYS)),
            ("a_vals", Ptr(VALS)),
            ("b", Ptr(KEYS)),
            ("b_vals", Ptr(VALS)),
            ("splits", Ptr("const mergepath::set_split*")),
            ("num_tiles", I64),
            ("emit", I32),
            ("tile_states", Ptr("uint64_t*")),
            ("out", Ptr(KEYS_OUT)),
            ("out_vals", Ptr(VALS_OUT)),
            ("capacity", I64),
            ("out_count", Ptr("uint64_t*")),
        ],
    },
    Struct {
        name: "set_count_params",
        templates: &["K"],
        doc: "mergepath_set_count: only the length of a set operation's result.",
        fields: &[("a", Ptr(KEYS)), ("b", Ptr(KEYS)), ("splits", Ptr("const mergepath::set_split*")), ("emit", I32), ("out_count", Ptr("unsigned long long*"))],
    },
];

/// The tile of the tiled and circular ladder kernels of `nt` threads and `vt` items per thread
/// with keys of `key_bytes`, the same rule in both languages: the shape's tile, shrunk in whole
/// threads' worth to fit LADDER_TILE_BYTES, at least one item per thread.
const LADDER_TILE_DOC: &str = "// The tile of the tiled and circular merge ladder kernels (nt threads, vt items per thread):\n\
                               // nt * vt, shrunk in whole threads' worth so it fits LADDER_TILE_BYTES, at least nt.";
const LADDER_TILE_CUDA: &str = "const int fit = LADDER_TILE_BYTES / key_bytes / nt * nt;\n  \
                                return nt * vt < fit ? nt * vt : fit > nt ? fit : nt;";
const LADDER_TILE_RUST: &str = "let fit = LADDER_TILE_BYTES / key_bytes / nt * nt;\n    \
                                if nt * vt < fit { nt * vt } else if fit > nt { fit } else { nt }";

/// How the variants of a kernel entry point are named after `mergepath_NAME`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variants {
    /// `mergepath_NAME` alone.
    One,
    /// `mergepath_NAME_{4,8,16}`: values moved as words of that many bytes.
    Words,
    /// `mergepath_NAME_{4,8}`: indices or positions of that many bytes.
    Indices,
    /// `mergepath_NAME_{1,2,4,8,16}_{4,8}`: values of that many bytes, by positions of 4 or 8.
    WordsByIndices,
}

/// A kernel entry point of every module: `mergepath_NAME` (and its [`Variants`]) takes the
/// parameter struct `params` (one of [`KERNEL_PARAMS`]). `key_independent` entry points do not
/// read keys, so a record's module (another key's kernels) may run them.
#[derive(Clone, Copy, Debug)]
pub struct EntryPoint {
    /// The name after `mergepath_`, and the accessor's.
    pub name: &'static str,
    /// Its parameter struct (a [`KERNEL_PARAMS`] name).
    pub params: &'static str,
    /// How its variants are named.
    pub variants: Variants,
    /// Whether it reads no keys.
    pub key_independent: bool,
}

const fn entry(name: &'static str, params: &'static str, variants: Variants) -> EntryPoint {
    EntryPoint { name, params, variants, key_independent: false }
}

const fn key_independent(name: &'static str, params: &'static str, variants: Variants) -> EntryPoint {
    EntryPoint { name, params, variants, key_independent: true }
}

use Variants::{Indices, One, Words, WordsByIndices};

/// Every entry point the library launches (`kernels/mergepath/entry/`): the host reaches each
/// only through the typed accessor generated from this table (`Kernels::NAME`), which takes its
/// variant's sizes and launches with its own parameter struct.
pub const KERNEL_ENTRIES: &[EntryPoint] = &[
    entry("partitions", "partitions_params", One),
    entry("partitions_b_first", "partitions_params", One),
    entry("merge_keys", "merge_keys_params", One),
    entry("merge_pairs", "merge_pairs_params", Words),
    entry("merge_fallback", "merge_fallback_params", One),
    entry("merge_basic", "merge_ladder_params", One),
    entry("merge_tiled", "merge_ladder_params", One),
    entry("merge_circular", "merge_ladder_params", One),
    entry("blocksort_keys", "blocksort_keys_params", One),
    entry("blocksort2_keys", "blocksort_keys_params", One),
    entry("blocksort_pack", "blocksort_keys_params", One),
    entry("blocksort2_pack", "blocksort_keys_params", One),
    entry("blocksort_pack_unpack", "blocksort_keys_params", One),
    entry("blocksort_pairs", "blocksort_pairs_params", Words),
    entry("blocksort_zip", "blocksort_pairs_params", One),
    entry("blocksort2_zip", "blocksort_pairs_params", One),
    entry("blocksort_zip_unzip", "blocksort_pairs_params", One),
    entry("sort_partitions", "sort_partitions_params", One),
    entry("sort_merge_keys", "sort_merge_keys_params", One),
    entry("sort_merge_unpack", "sort_merge_keys_params", One),
    entry("sort_merge_pairs", "sort_merge_pairs_params", Words),
    entry("sort_merge_unzip", "sort_merge_pairs_params", One),
    entry("sort4_boundaries", "sort4_boundaries_params", One),
    entry("sort4_tile_splits", "sort4_tile_splits_params", One),
    entry("sort4_merge_keys", "sort_merge_keys_params", One),
    entry("sort4_merge_unpack", "sort_merge_keys_params", One),
    entry("sort4_merge_pairs", "sort_merge_pairs_params", Words),
    entry("sort4_merge_unzip", "sort_merge_pairs_params", One),
    entry("multiway4_boundaries", "sort4_boundaries_params", One),
    entry("multiway4_tile_splits", "sort4_tile_splits_params", One),
    entry("multiway4_merge_keys", "sort_merge_keys_params", One),
    entry("multiway4_merge_pairs", "sort_merge_pairs_params", Words),
    entry("multiway_boundaries", "multiway_boundaries_params", One),
    entry("multiway_partitions", "multiway_partitions_params", One),
    entry("multiway_merge_keys", "multiway_merge_keys_params", One),
    entry("multiway_merge_pairs", "multiway_merge_pairs_params", Words),
    entry("multiway_fallback", "multiway_fallback_params", One),
    entry("samplesort_samples", "samplesort_samples_params", One),
    entry("samplesort_count", "samplesort_count_params", One),
    entry("samplesort_scan", "samplesort_scan_params", One),
    entry("samplesort_scatter_keys", "samplesort_scatter_keys_params", One),
    entry("samplesort_scatter_pairs", "samplesort_scatter_pairs_params", Words),
    entry("samplesort_finish_keys", "samplesort_finish_keys_params", One),
    entry("samplesort_finish_pairs", "samplesort_finish_pairs_params", Words),
    key_independent("segment_offsets_check", "segment_offsets_check_params", One),
    entry("segmented_bounds", "segmented_bounds_params", One),
    entry("segmented_blocksort_one_keys", "segmented_blocksort_keys_params", One),
    entry("segmented_blocksort_keys", "segmented_blocksort_keys_params", One),
    entry("segmented_blocksort_items_keys", "segmented_blocksort_keys_params", One),
    entry("segmented_blocksort_one_pairs", "segmented_blocksort_pairs_params", Words),
    entry("segmented_blocksort_pairs", "segmented_blocksort_pairs_params", Words),
    entry("segmented_blocksort_items_pairs", "segmented_blocksort_pairs_params", Words),
    entry("segmented_level_splits", "segmented_level_splits_params", One),
    entry("segmented_merge_keys", "segmented_merge_keys_params", One),
    entry("segmented_merge_pairs", "segmented_merge_pairs_params", Words),
    entry("segmented_levels_keys", "segmented_levels_keys_params", One),
    entry("segmented_levels_pairs", "segmented_levels_pairs_params", Words),
    entry("set_partitions", "set_partitions_params", One),
    entry("set_count", "set_count_params", One),
    entry("set_keys", "set_keys_params", One),
    entry("set_pairs", "set_pairs_params", Words),
    entry("sorted_search_lower", "sorted_search_params", Indices),
    entry("sorted_search_upper", "sorted_search_params", Indices),
    entry("sorted_search_range", "sorted_search_params", Indices),
    entry("sorted_search_count", "sorted_search_params", Indices),
    entry("sorted_search_contains", "sorted_search_params", One),
    entry("compare_all", "compare_all_params", One),
    entry("key_bounds", "key_bounds_params", One),
    key_independent("iota", "iota_params", Indices),
    key_independent("gather", "gather_params", WordsByIndices),
    key_independent("scatter", "scatter_params", Indices),
    key_independent("load_balancing_partitions", "load_balancing_params", Indices),
    key_independent("load_balancing", "load_balancing_params", Indices),
    key_independent("interval_expand", "load_balancing_params", WordsByIndices),
    entry("segmented_reduce_sum", "segmented_reduce_params", Indices),
    entry("segmented_reduce_min", "segmented_reduce_params", Indices),
    entry("segmented_reduce_max", "segmented_reduce_params", Indices),
    entry("reduce_runs_sum", "segmented_reduce_params", Indices),
    entry("reduce_runs_min", "segmented_reduce_params", Indices),
    entry("reduce_runs_max", "segmented_reduce_params", Indices),
    entry("segmented_reduce_spine_sum", "segmented_reduce_params", One),
    entry("segmented_reduce_spine_min", "segmented_reduce_params", One),
    entry("segmented_reduce_spine_max", "segmented_reduce_params", One),
    entry("run_starts", "runs_params", Indices),
    entry("run_deferred", "runs_params", Indices),
    key_independent("run_lengths", "runs_params", Indices),
    key_independent("record_order", "record_order_params", Indices),
    key_independent("record_heads", "record_heads_params", One),
    key_independent("record_segments", "record_segments_params", One),
    entry("comparator_heads", "comparator_heads_params", One),
    key_independent("join_scan", "join_params", One),
    key_independent("join_expand", "join_params", One),
    key_independent("interval_gather", "interval_move_params", WordsByIndices),
    key_independent("interval_scatter", "interval_move_params", WordsByIndices),
    key_independent("interval_move", "interval_move_params", WordsByIndices),
    key_independent("interval_gather_words", "interval_move_params", WordsByIndices),
    key_independent("interval_scatter_words", "interval_move_params", WordsByIndices),
    key_independent("interval_move_words", "interval_move_params", WordsByIndices),
    key_independent("bulk_partitions", "bulk_params", Indices),
    key_independent("bulk_insert", "bulk_params", WordsByIndices),
    key_independent("bulk_remove", "bulk_params", WordsByIndices),
];

/// The Rust type name of contract struct `name` (`sort_merge_keys_params` →
/// `SortMergeKeysParams`).
fn rust_type_name(name: &str) -> String {
    name.split('_').map(|w| w[..1].to_uppercase() + &w[1..]).collect()
}

/// The typed accessors of the entry points, as methods of the host's `Kernels` (its module
/// `device::kernels`): each returns an `Entry` of its parameter struct, so a launch with
/// another struct does not compile and no kernel name is written anywhere else.
fn entry_accessors(s: &mut String) {
    s.push_str("\n/// The library's kernel entry points, each with its own parameter struct.\nimpl super::kernels::Kernels {\n");
    for e in KERNEL_ENTRIES {
        let (ty, name, ki) = (rust_type_name(e.params), e.name, e.key_independent);
        let (args, suffix, doc) = match e.variants {
            One => ("", String::new(), String::new()),
            Words => (", word: usize", "_{word}".to_string(), " for values moved as `word`-byte words (4, 8 or 16)".to_string()),
            Indices => (", index_bytes: usize", "_{index_bytes}".to_string(), " for indices of `index_bytes` (4 or 8)".to_string()),
            WordsByIndices => (", word: usize, index_bytes: usize", "_{word}_{index_bytes}".to_string(), " for values of `word` bytes (1, 2, 4, 8 or 16) by positions of `index_bytes` (4 or 8)".to_string()),
        };
        let lookup = if suffix.is_empty() { format!("\"mergepath_{name}\"") } else { format!("&format!(\"mergepath_{name}{suffix}\")") };
        writeln!(
            s,
            "    /// `mergepath_{name}`{doc}.\n    #[allow(dead_code)]\n    pub(crate) fn {name}(&self{args}) -> crate::error::Result<super::kernels::Entry<{ty}>> {{\n        self.entry({lookup}, {ki})\n    }}"
        )
        .unwrap();
    }
    s.push_str("}\n");
}

fn c_field(name: &str, f: Field) -> String {
    match f {
        Field::I64 => format!("int64_t {name};"),
        Field::I32 => format!("int {name};"),
        Field::U64 => format!("unsigned long long {name};"),
        Field::Ptr(c) => format!("{c} {name};"),
        Field::Array(c, n) => format!("{c} {name}[{n}];"),
    }
}

fn c_struct(s: &Struct, out: &mut String) {
    writeln!(out, "// {}", s.doc).unwrap();
    if !s.templates.is_empty() {
        let params: Vec<String> = s.templates.iter().map(|t| format!("class {t}")).collect();
        writeln!(out, "template <{}>", params.join(", ")).unwrap();
    }
    writeln!(out, "struct {} {{", s.name).unwrap();
    for (name, f) in s.fields {
        writeln!(out, "  {}", c_field(name, *f)).unwrap();
    }
    out.push_str("};\n");
}

fn c_asserts(s: &Struct, out: &mut String) {
    let layout = s.layout();
    let ty = if s.templates.is_empty() {
        format!("mergepath::{}", s.name)
    } else {
        format!("mergepath::{}<{}>", s.name, vec!["void"; s.templates.len()].join(", "))
    };
    writeln!(out, "using {} = {ty};", s.name).unwrap();
    writeln!(out, "static_assert(sizeof({0}) == {1} && alignof({0}) == {2}, \"{0}\");", s.name, layout.size, layout.align).unwrap();
    for ((field, _), at) in s.fields.iter().zip(&layout.offsets) {
        writeln!(out, "static_assert(offsetof({0}, {field}) == {at}, \"{0}::{field}\");", s.name).unwrap();
    }
}

/// `mergepath/contract.cuh`: the constants, the device structs and the entry points' parameter
/// templates in namespace `mergepath`, with their layouts asserted.
pub fn contract_header() -> String {
    let mut s = String::from(
        "// Generated from mergepath_build's contract module (mergepath-build/src/contract.rs). Do not edit.\n\
         // The host<->device contract: constants, device structs of host temp layouts, and the one\n\
         // parameter struct each entry point takes by value.\n#pragma once\n#include <stddef.h>\n#include <stdint.h>\n\nnamespace mergepath {\n",
    );
    for c in CONSTANTS {
        writeln!(s, "// {}\nconstexpr int {} = {};", c.doc, c.name, c.value).unwrap();
    }
    writeln!(s, "{LADDER_TILE_DOC}\n__host__ __device__ constexpr int ladder_tile(int nt, int vt, int key_bytes) {{\n  {LADDER_TILE_CUDA}\n}}").unwrap();
    for st in DEVICE_STRUCTS.iter().chain(KERNEL_PARAMS) {
        s.push('\n');
        c_struct(st, &mut s);
    }
    s.push_str("}  // namespace mergepath\n\n// The layouts the host's structs have (the generator's C layout).\nnamespace mergepath_contract_layout {\n");
    for st in DEVICE_STRUCTS.iter().chain(KERNEL_PARAMS) {
        c_asserts(st, &mut s);
    }
    s.push_str("}  // namespace mergepath_contract_layout\n");
    s
}

/// The attribute of the contract's items that only the sample sort (a feature of mergepath)
/// uses.
const SAMPLESORT_ONLY: &str = "#[cfg_attr(not(feature = \"samplesort\"), allow(dead_code))]\n";

/// The contract for the host: the constants (`usize`, and `i32` for the `SET_*` flags, the
/// kernels' `int emit`), the device structs and parameter structs as `#[repr(C)]` structs with
/// `cudarc::driver::DeviceRepr` and the trait `KernelParams` (implemented by the parameter
/// structs only), and compile-time assertions of every size and field offset.
pub fn contract_rust() -> String {
    let mut s = String::from("// Generated from mergepath_build's contract module (mergepath-build/src/contract.rs).\n\n");
    for c in CONSTANTS {
        let ty = if c.name.starts_with("SET_") { "i32" } else { "usize" };
        let only = if c.name.starts_with("SAMPLESORT_") { SAMPLESORT_ONLY } else { "" };
        writeln!(s, "/// {}\n{only}pub(crate) const {}: {ty} = {};", c.doc, c.name, c.value).unwrap();
    }
    writeln!(s, "\n{}\npub(crate) const fn ladder_tile(nt: usize, vt: usize, key_bytes: usize) -> usize {{\n    {LADDER_TILE_RUST}\n}}", LADDER_TILE_DOC.replace("//", "///")).unwrap();
    s.push_str(
        "\n/// The parameter struct of a kernel entry point, passed by value as its one argument.\npub(crate) trait KernelParams: cudarc::driver::DeviceRepr {}\n",
    );
    for (st, params) in DEVICE_STRUCTS.iter().map(|d| (d, false)).chain(KERNEL_PARAMS.iter().map(|k| (k, true))) {
        let name = st.rust_name();
        let layout = st.layout();
        writeln!(s, "\n/// `mergepath::{}`: {}", st.name, st.doc).unwrap();
        s.push_str("#[repr(C)]\n#[derive(Clone, Copy)]\n");
        if params && st.name.starts_with("samplesort") {
            s.push_str(SAMPLESORT_ONLY);
        } else if !params {
            s.push_str("#[allow(dead_code)] // most are only sized on the host: the device writes and reads them\n");
        }
        writeln!(s, "pub(crate) struct {name} {{").unwrap();
        for (field, f) in st.fields {
            writeln!(s, "    pub(crate) {field}: {},", f.rust()).unwrap();
        }
        s.push_str("}\n");
        writeln!(
            s,
            "// SAFETY: #[repr(C)] of integers, laid out as the kernels' `mergepath::{}` (asserted on both sides), so its bytes are what the device reads.\nunsafe impl cudarc::driver::DeviceRepr for {name} {{}}",
            st.name
        )
        .unwrap();
        if params {
            writeln!(s, "impl KernelParams for {name} {{}}").unwrap();
        }
        writeln!(s, "const _: () = assert!(core::mem::size_of::<{name}>() == {} && core::mem::align_of::<{name}>() == {});", layout.size, layout.align).unwrap();
        for ((field, _), at) in st.fields.iter().zip(&layout.offsets) {
            writeln!(s, "const _: () = assert!(core::mem::offset_of!({name}, {field}) == {at});").unwrap();
        }
    }
    entry_accessors(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_c_rules() {
        let set_keys = KERNEL_PARAMS.iter().find(|s| s.name == "set_keys_params").unwrap().layout();
        // emit (int) at 32, then the pointer after it at 40.
        assert_eq!(set_keys.offsets[4..6], [32, 40]);
        assert_eq!(set_keys.size, 72);
        let progress = DEVICE_STRUCTS.iter().find(|s| s.name == "segmented_levels_progress").unwrap().layout();
        assert_eq!((progress.size, progress.align), (520, 8));
    }

    #[test]
    fn every_entry_point_takes_a_parameter_struct_of_the_contract_and_is_named_once() {
        for (i, e) in KERNEL_ENTRIES.iter().enumerate() {
            assert!(KERNEL_PARAMS.iter().any(|p| p.name == e.params), "{}: no parameter struct {}", e.name, e.params);
            assert!(KERNEL_ENTRIES[..i].iter().all(|f| f.name != e.name), "{} twice", e.name);
        }
        // The entry files declare each entry point with its struct (macros paste the variants).
        let entries: String = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/mergepath/entry"))
            .unwrap()
            .map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap())
            .collect();
        for e in KERNEL_ENTRIES {
            assert!(entries.contains(&format!("mergepath::{}", e.params)), "{}: {} in no entry file", e.name, e.params);
        }
        let generated = contract_rust();
        assert!(generated.contains("pub(crate) fn sort_merge_pairs(&self, word: usize) -> crate::error::Result<super::kernels::Entry<SortMergePairsParams>>"));
        assert!(generated.contains("self.entry(&format!(\"mergepath_gather_{word}_{index_bytes}\"), true)"));
    }

    #[test]
    fn progress_has_a_phase_pair_per_level() {
        let levels = CONSTANTS.iter().find(|c| c.name == "SEGMENTED_MAX_LEVELS").unwrap().value as usize;
        let progress = DEVICE_STRUCTS.iter().find(|s| s.name == "segmented_levels_progress").unwrap();
        assert!(matches!(progress.fields[1].1, Field::Array(_, n) if n == 2 * levels));
    }
}

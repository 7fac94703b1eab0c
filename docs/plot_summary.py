"""The summary of one device call: the TSV lines of the benches (sort, merge, search, sets,
multiway, host_roundtrip), `.gpu/run anchors` and `.gpu/run torch-anchors` (format: op impl
type n ms gkeys_s gbytes_s ...), concatenated into one file.

Writes PNG (sort throughput against n: mergepath beside CUB's radix and merge sorts and
PyTorch's stable sort, for u32 keys, u64 keys and u32 -> u32 pairs), PNG with `_bandwidth`
before its extension (merge, sorted search and CUB's and Thrust's merges as a fraction of the
device copy of the same bytes, against n) and prints the summary table
in Markdown: each case's time, its anchors' times, and mergepath's time over each anchor's
(below 1: mergepath is faster).

With a third argument, MULTI_TSV (the multi bench's lines with `benches/cub/multi.cu`'s, from a
machine of 4 GPUs), also PNG with `_gpus` before its extension: u32 keys sorted on 1, 2 and 4
GPUs against CUB's sorts on one.

Run: python3 docs/plot_summary.py TSV PNG [MULTI_TSV]   (needs matplotlib; the summary in
BENCHMARKS.md was made by `python3 docs/plot_summary.py docs/summary_2026-11-27.tsv
docs/summary_sort.png docs/summary_multi_2026-11-26.tsv`)
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = {}
gbytes = {}
device = "?"
for line in open(sys.argv[1]):
    if line.startswith("# device"):
        device = line[len("# device "):].strip()
    f = line.rstrip("\n").split("\t")
    if len(f) >= 5 and f[3].isdigit():
        try:
            rows[(f[0], f[1], f[2], int(f[3]))] = float(f[4])
            gbytes[(f[0], f[1], f[2], int(f[3]))] = float(f[6])
        except (ValueError, IndexError):
            pass


def ms(op, impl, ty, n):
    """A line's time; `op` may be a tuple of ops whose times add up (h2d + d2h)."""
    if isinstance(op, tuple):
        parts = [rows.get((o, impl, ty, n)) for o in op]
        return None if None in parts else sum(parts)
    return rows.get((op, impl, ty, n))


# (case, (op, impl, type, n) of mergepath, [(anchor, (op, impl, type, n))])
M = 1 << 20
CASES = [
    ("u32 keys, 2^26", ("sort_keys", "mergepath", "u32", 64 * M),
     [("CUB radix", ("sort_keys", "cub_radix_sort", "u32", 64 * M)), ("CUB merge sort", ("sort_keys", "cub_merge_sort", "u32", 64 * M)), ("PyTorch (i32)", ("sort_keys", "torch_sort_stable", "i32", 64 * M))]),
    ("u32 keys, 2^28", ("sort_keys", "mergepath", "u32", 256 * M),
     [("CUB radix", ("sort_keys", "cub_radix_sort", "u32", 256 * M)), ("CUB merge sort", ("sort_keys", "cub_merge_sort", "u32", 256 * M))]),
    ("u32 keys, 2^20", ("sort_keys", "mergepath", "u32", M),
     [("CUB radix", ("sort_keys", "cub_radix_sort", "u32", M)), ("CUB merge sort", ("sort_keys", "cub_merge_sort", "u32", M))]),
    ("u32 -> u32 pairs, 2^26", ("sort_pairs", "mergepath", "u32", 64 * M),
     [("CUB radix", ("sort_pairs", "cub_radix_sort", "u32", 64 * M)), ("CUB merge sort", ("sort_pairs", "cub_merge_sort", "u32", 64 * M)), ("PyTorch argsort (i32)", ("sort_pairs_index", "torch_sort_stable", "i32", 64 * M))]),
    ("u64 keys, 2^26", ("sort_keys", "mergepath", "u64", 64 * M),
     [("CUB radix", ("sort_keys", "cub_radix_sort", "u64", 64 * M)), ("CUB merge sort", ("sort_keys", "cub_merge_sort", "u64", 64 * M)), ("PyTorch (i64)", ("sort_keys", "torch_sort_stable", "i64", 64 * M))]),
    ("u64 -> u32 pairs, 2^26", ("sort_pairs", "mergepath", "u64", 64 * M),
     [("CUB radix", ("sort_pairs", "cub_radix_sort", "u64", 64 * M)), ("CUB merge sort", ("sort_pairs", "cub_merge_sort", "u64", 64 * M))]),
    ("{f32, i32} struct, custom order, 2^26", ("sort_keys", "mergepath", "struct_f32_i32", 64 * M),
     [("CUB merge sort", ("sort_keys", "cub_merge_sort", "struct_f32_i32", 64 * M))]),
    ("merge u32 keys, 2^26", ("merge_keys", "mergepath", "u32", 64 * M),
     [("CUB merge", ("merge_keys", "cub_merge", "u32", 64 * M)), ("Thrust merge", ("merge_keys", "thrust_merge", "u32", 64 * M)), ("device copy", ("copy", "cudaMemcpy", "u32", 64 * M))]),
    ("sorted search u32, 2^26", ("sorted_search", "mergepath", "u32", 64 * M),
     [("Thrust lower_bound", ("sorted_search", "thrust_lower_bound", "u32", 64 * M)), ("CUB", ("sorted_search", "cub_lower_bound_sorted_values", "u32", 64 * M))]),
    ("set union u32, 2^26", ("set_union", "mergepath", "u32", 64 * M),
     [("Thrust", ("set_union", "thrust", "u32", 64 * M))]),
    ("set intersection u32, 2^26", ("set_intersection", "mergepath", "u32", 64 * M),
     [("Thrust", ("set_intersection", "thrust", "u32", 64 * M))]),
    ("u32 keys from a Vec and back, 2^26", ("host_sort_keys", "mergepath_pageable", "u32", 64 * M),
     [("PyTorch from numpy (i32)", ("host_sort_keys", "torch_pageable", "i32", 64 * M)), ("PyTorch from pinned (i32)", ("host_sort_keys", "torch_pinned", "i32", 64 * M)), ("rayon par_sort_unstable", ("host_sort_keys", "rayon_par_sort_unstable", "u32", 64 * M)), ("PCIe h2d + d2h (pinned)", (("copy_h2d", "copy_d2h"), "pinned", "u32", 64 * M))]),
    ("multiway merge, 64 x 2^20 u32", ("multiway_keys_k64", "mergepath", "u32", 64 * M),
     [("device copy", ("copy", "cudaMemcpy", "u32", 64 * M))]),
]


def fmt(x):
    return "—" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


print(f"Device: {device}. Times in ms; the ratio is mergepath's time over the anchor's (below 1: mergepath is faster).\n")
print("| case | mergepath | anchors (ms) | mergepath / anchor |")
print("|---|---|---|---|")
for case, key, anchors in CASES:
    mine = ms(*key)
    if mine is None:
        continue
    found = [(name, ms(*a)) for name, a in anchors if ms(*a) is not None]
    times = ", ".join(f"{name} {fmt(t)}" for name, t in found) or "—"
    ratios = ", ".join(f"{mine / t:.2f}× {name}" for name, t in found) or "—"
    print(f"| {case} | {fmt(mine)} | {times} | {ratios} |")

# The plot: Gkeys/s against n for the sorts.
panels = [
    ("u32 keys", "sort_keys", "u32", [("mergepath", "mergepath", "u32"), ("CUB radix sort", "cub_radix_sort", "u32"), ("CUB merge sort", "cub_merge_sort", "u32"), ("PyTorch stable sort (i32)", "torch_sort_stable", "i32")]),
    ("u64 keys", "sort_keys", "u64", [("mergepath", "mergepath", "u64"), ("CUB radix sort", "cub_radix_sort", "u64"), ("CUB merge sort", "cub_merge_sort", "u64"), ("PyTorch stable sort (i64)", "torch_sort_stable", "i64")]),
    ("u32 -> u32 pairs", "sort_pairs", "u32", [("mergepath", "mergepath", "u32"), ("CUB radix sort", "cub_radix_sort", "u32"), ("CUB merge sort", "cub_merge_sort", "u32"), ("PyTorch stable argsort (i32)", "torch_sort_stable", "i32")]),
]
fig, axes = plt.subplots(1, len(panels), figsize=(15, 4.6), sharey=False)
for ax, (title, op, _, series) in zip(axes, panels):
    for label, impl, ty in series:
        op_here = "sort_pairs_index" if (impl.startswith("torch") and op == "sort_pairs") else op
        pts = sorted((n, n / t / 1e6) for (o, i, t_, n), t in rows.items() if o == op_here and i == impl and t_ == ty)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("keys")
    ax.set_ylabel("Gkeys/s (higher is better)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle(f"Sort throughput on the GPU (device buffers), {device.split(' sms')[0]}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)

# Bandwidth: each case's bytes read and written once per ms, over the device copy's at the same
# n and key type.
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for ax, ty in zip(axes, ["u32", "u64"]):
    for label, op, impl in [("mergepath merge_keys", "merge_keys", "mergepath"), ("mergepath merge_pairs", "merge_pairs", "mergepath"),
                            ("CUB merge (keys)", "merge_keys", "cub_merge"), ("Thrust merge (keys)", "merge_keys", "thrust_merge"),
                            ("mergepath sorted_search", "sorted_search", "mergepath"), ("Thrust lower_bound", "sorted_search", "thrust_lower_bound")]:
        pts = sorted((n, g / gbytes[("copy", "cudaMemcpy", ty, n)]) for (o, i, t_, n), g in gbytes.items()
                     if o == op and i == impl and t_ == ty and ("copy", "cudaMemcpy", ty, n) in gbytes)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("items")
    ax.set_ylabel("fraction of the device copy's bandwidth")
    ax.set_title(f"{ty} keys")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle(f"Merge and sorted search against the copy, {device.split(' sms')[0]}")
fig.tight_layout()
fig.savefig(sys.argv[2].replace(".png", "_bandwidth.png"), dpi=110)

# Scaling over GPUs, from the multi bench's lines (a machine of 4 GPUs).
if len(sys.argv) > 3:
    multi = {}
    for line in open(sys.argv[3]):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 5 and f[3].isdigit():
            multi[(f[0], f[1], int(f[3]))] = float(f[4])
    fig, ax = plt.subplots(figsize=(6.5, 4.4))
    for label, op, impl in [("mergepath, 1 GPU", "multi_sort_keys_1gpu", "mergepath"), ("mergepath, 2 GPUs", "multi_sort_keys_2gpu", "mergepath"),
                            ("mergepath, 4 GPUs", "multi_sort_keys_4gpu", "mergepath"), ("CUB radix sort, 1 GPU", "sort_keys", "cub_radix_sort"),
                            ("CUB merge sort, 1 GPU", "sort_keys", "cub_merge_sort")]:
        pts = sorted((n, n / t / 1e6) for (o, i, n), t in multi.items() if o == op and i == impl)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("u32 keys (device-resident)")
    ax.set_ylabel("Gkeys/s (higher is better)")
    ax.set_title("Sorts across GPUs (4 x H100, NVLink, 2026-11-26)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2].replace(".png", "_gpus.png"), dpi=110)

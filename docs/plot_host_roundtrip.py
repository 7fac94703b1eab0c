"""Plots a host-slice GPU run (the host_roundtrip bench, `.gpu/run anchors` and
`.gpu/run torch-anchors` lines of one device call, in the anchors' TSV format) as end-to-end
time against n for u32 keys from host memory and back: mergepath from a Vec and from pinned
memory, PyTorch pageable and pinned, rayon, and the copy bounds (h2d + d2h pinned, and both at
once).

Run: python3 docs/plot_host_roundtrip.py TSV PNG   (needs matplotlib)
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) >= 7 and f[3].isdigit():
        rows.append((f[0], f[1], f[2], int(f[3]), float(f[4])))


def series(op, impl, types):
    pts = sorted((n, ms) for o, i, t, n, ms in rows if o == op and i == impl and t in types)
    return [n for n, _ in pts], [ms for _, ms in pts]


fig, ax = plt.subplots(figsize=(8, 5))
for op, impl, types, style, label in [
    ("host_sort_keys", "mergepath_pageable", {"u32"}, "o-", "mergepath, from a Vec"),
    ("host_sort_keys", "mergepath_pinned", {"u32"}, "s-", "mergepath, from a PinnedBuffer"),
    ("host_sort_keys", "torch_pageable", {"i32"}, "v--", "PyTorch, pageable"),
    ("host_sort_keys", "torch_pinned", {"i32"}, "^--", "PyTorch, pinned"),
    ("host_sort_keys", "rayon_par_sort_unstable", {"u32"}, "x:", "rayon par_sort_unstable, 16 cores"),
]:
    x, y = series(op, impl, types)
    if x:
        ax.plot(x, y, style, label=label)
h2d, d2h = dict(zip(*series("copy_h2d", "pinned", {"u32"}))), dict(zip(*series("copy_d2h", "pinned", {"u32"})))
ns = sorted(set(h2d) & set(d2h))
ax.plot(ns, [h2d[n] + d2h[n] for n in ns], "k--", label="bound: copy_h2d + copy_d2h (pinned)")
x, y = series("copy_roundtrip_duplex", "pinned", {"u32"})
ax.plot(x, y, "k:", label="copy_roundtrip_duplex (merge's bound)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("n (u32 keys)")
ax.set_ylabel("ms, host memory to host memory")
ax.set_title("Sorting u32 keys held in host memory (H100)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)

"""Plots docs/merge_ladder.tsv (the merge_ladder bench and the anchors' copy lines from one GPU
run) as docs/merge_ladder.png: keys/s against n, one line per merge strategy, and the copy
ceiling (the device-to-device copy's bytes/s over the merge's 2 x key bytes per key).

Run: python3 docs/plot_merge_ladder.py   (needs matplotlib)
"""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "merge_ladder.tsv")), delimiter="\t"))
key_bytes = {"u32": 4, "u64": 8}
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, ty in zip(axes, ["u32", "u64"]):
    for impl, style in [("twophase", "o-"), ("circular", "s-"), ("tiled", "^-"), ("basic", "v-")]:
        pts = sorted((int(r["n"]), float(r["gkeys_s"])) for r in rows if r["op"] == "merge_keys" and r["impl"] == impl and r["type"] == ty)
        ax.plot([n for n, _ in pts], [k for _, k in pts], style, label=impl)
    copy = sorted((int(r["n"]), float(r["gbytes_s"]) / (2 * key_bytes[ty])) for r in rows if r["op"] == "copy" and r["type"] == ty)
    ax.plot([n for n, _ in copy], [k for _, k in copy], "k--", label="copy ceiling")
    ax.set_xscale("log", base=2)
    ax.set_title(f"merge_keys, {ty} keys")
    ax.set_xlabel("n (keys in both inputs)")
    ax.grid(True, alpha=0.3)
axes[0].set_ylabel("G keys / s")
axes[0].legend()
fig.suptitle("The co-rank merge ladder (Kirk & Hwu) and the two-phase merge, NVIDIA H100, 2026-11-21")
fig.tight_layout()
fig.savefig(os.path.join(here, "merge_ladder.png"), dpi=110)

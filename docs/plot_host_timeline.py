"""Plots a timeline TSV of host-slice calls as a timeline: a row per lane (host copy threads,
upload DMAs, kernels, download DMAs), a bar per span, colored by what ran, one panel per case.
`examples/host_timeline` writes cases `pageable` and `pinned` (one 2^26 u32 sort each);
`examples/out_of_core --timeline` writes one sort without the case column (its case is the
file's name).

Run: python3 docs/plot_host_timeline.py TSV PNG   (needs matplotlib)
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

lines = open(sys.argv[1]).read().splitlines()
# Skip what precedes the header (the GPU runner prints the device first).
lines = lines[next(i for i, l in enumerate(lines) if l.startswith("case\t") or l.startswith("lane\t")):]
rows = list(csv.DictReader(lines, delimiter="\t"))
for r in rows:
    r.setdefault("case", sys.argv[1].rsplit("/", 1)[-1].rsplit(".", 1)[0])
lanes = [l for l in ["host copy", "host helpers", "upload", "kernels", "download"] if l in {r["lane"] for r in rows} or l != "host helpers"]
colors = {
    "copy in": "tab:blue", "copy out": "tab:cyan", "staged upload": "tab:green", "direct upload": "tab:green", "pinned upload": "tab:green",
    "sort chunk": "tab:orange", "merge runs": "tab:red", "partitions": "tab:gray", "merge range": "tab:purple",
    "staged download": "tab:olive", "direct download": "tab:olive", "pinned download": "tab:olive",
    "run buffers": "tab:pink", "multiway splits": "tab:brown", "merge batch": "tab:purple", "restore": "k",
}
cases = list(dict.fromkeys(r["case"] for r in rows))
end = max(float(r["end_ms"]) for r in rows)
fig, axes = plt.subplots(len(cases), 1, figsize=(12, 2.2 * len(cases) + 0.6), sharex=True, squeeze=False)
for ax, case in zip(axes[:, 0], cases):
    spans = [r for r in rows if r["case"] == case]
    seen = set()
    # Thin white edges separate a few spans; with thousands they would hide the bars.
    edge = 0.3 if len(spans) < 2000 else 0
    for r in spans:
        y = lanes.index(r["lane"])
        s, e = float(r["start_ms"]), float(r["end_ms"])
        label = r["what"] if r["what"] not in seen else None
        seen.add(r["what"])
        ax.broken_barh([(s, max(e - s, 0.005))], (y - 0.38, 0.76), color=colors.get(r["what"], "k"), label=label, edgecolor="white", linewidth=edge)
    last = max(float(r["end_ms"]) for r in spans)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_title(f"{case}: done at {last:.2f} ms")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
axes[-1, 0].set_xlabel("ms since the call began")
axes[-1, 0].set_xlim(0, end * 1.02)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)

#!/usr/bin/env python3
"""Q2 report: final FID/TVD/IS of each run in runs/q2/ as Markdown, and the
per-generation FID curves (best mixture FID over the cells) as
docs/q2_fid_curves.png, against generations and against generator steps."""
import json
import pathlib
import sys

root = pathlib.Path("runs/q2")
runs = {}
for result in sorted(root.glob("*/result.json")):
    name = result.parent.name
    final = json.loads(result.read_text())
    curve = {}
    for line in (result.parent / "metrics.jsonl").read_text().splitlines():
        r = json.loads(line)
        fid = r["scores"].get("fid")
        if fid is not None:
            g = r["generation"]
            curve[g] = min(curve.get(g, float("inf")), fid)
    cells = len(final["cells"])
    runs[name] = (final, curve, cells)

print("| run | cells | generations | G steps (all cells) | final FID (10k) | TVD | IS |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, (final, curve, cells) in runs.items():
    gens = max(curve)
    s = final["scores"]
    print(f"| {name} | {cells} | {gens} | {gens * cells * 90:,} | {s['fid']:.1f} | {s['tvd']:.3f} | {s['is']:.2f} |")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("matplotlib is missing (apt-get install python3-matplotlib; run with /usr/bin/python3): no plot")

fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
for name, (final, curve, cells) in runs.items():
    g = sorted(curve)
    axes[0].plot(g, [curve[x] for x in g], label=name)
    axes[1].plot([x * cells * 90 for x in g], [curve[x] for x in g], label=name)
axes[0].set_xlabel("generation")
axes[1].set_xlabel("generator Adam steps, all cells together")
for ax in axes:
    ax.set_ylabel("best mixture FID (1,000 samples)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=8)
fig.suptitle("Q2: MNIST-10k, per-generation FID of the best cell's mixture")
fig.tight_layout()
out = pathlib.Path("docs/q2_fid_curves.png")
fig.savefig(out, dpi=90)
print(f"\nplot: {out}")

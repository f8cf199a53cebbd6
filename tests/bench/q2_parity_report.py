#!/usr/bin/env python3
"""Q2 parity report: the final FID/TVD/IS (10,000 samples, result.json) of
each run of q2_parity.sh, and Lipizzaner's 1x1 when DIR/lipizzaner.csv
(columns seed,generation,fid,tvd,is; its 10,000-sample snapshots scored by
`cellgan score`) is there; the two targets; and the FID curves as
DIR/q2_parity_fid.png: cellgan's best mixture per generation (1,000 samples,
metrics.jsonl) and, from DIR/lipizzaner_curve.csv when there, Lipizzaner's
generator every few generations (1,000 samples, the same columns).
Usage: q2_parity_report.py [DIR]   (default runs/q2-parity)"""
import csv
import json
import pathlib
import statistics
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "runs/q2-parity")
finals, curves = {}, {}
for result in sorted(root.glob("*/result.json")):
    grid, gens, seed = result.parent.name.split("-")  # 1x1-g200-s1
    key = (grid, int(gens[1:]), int(seed[1:]))
    finals[key] = json.loads(result.read_text())["scores"]
    curve = {}
    for line in (result.parent / "metrics.jsonl").read_text().splitlines():
        r = json.loads(line)
        if "fid" in r["scores"]:
            curve[r["generation"]] = min(curve.get(r["generation"], float("inf")), r["scores"]["fid"])
    curves[key] = curve
lipizzaner = {}
if (root / "lipizzaner.csv").exists():
    for row in csv.DictReader((root / "lipizzaner.csv").open()):
        lipizzaner[(int(row["seed"]), int(row["generation"]))] = {k: float(row[k]) for k in ("fid", "tvd", "is")}

print("| run | seed | generation | FID (10k) | TVD | IS |")
print("| --- | --- | --- | --- | --- | --- |")
for (grid, gens, seed), s in sorted(finals.items()):
    print(f"| cellgan {grid} | {seed} | {gens} | {s['fid']:.1f} | {s['tvd']:.3f} | {s['is']:.2f} |")
for (seed, gen), s in sorted(lipizzaner.items()):
    print(f"| Lipizzaner 1x1 | {seed} | {gen} | {s['fid']:.1f} | {s['tvd']:.3f} | {s['is']:.2f} |")


def mean_fid(values):
    return statistics.mean(values) if values else float("nan")


ours_200 = [s["fid"] for (g, n, _), s in finals.items() if g == "1x1" and n == 200]
theirs_200 = [s["fid"] for (_, n), s in lipizzaner.items() if n == 200]
if ours_200 and theirs_200:
    ratio = mean_fid(ours_200) / mean_fid(theirs_200)
    print(f"\nParity at generation 200: cellgan 1x1 mean FID {mean_fid(ours_200):.1f} over {len(ours_200)} seeds, "
          f"Lipizzaner {mean_fid(theirs_200):.1f} over {len(theirs_200)}: {ratio:.2f}x "
          f"(target <= 1.10x: {'met' if ratio <= 1.10 else 'not met'})")
seeds = sorted({seed for (g, n, seed) in finals if g == "2x2" and n == 100})
if seeds:
    ahead = []
    for seed in seeds:
        grid_fid = finals[("2x2", 100, seed)]["fid"]
        rivals = [finals.get(("1x1", 100, seed), {}).get("fid"), lipizzaner.get((seed, 100), {}).get("fid")]
        rivals = [r for r in rivals if r is not None]
        ahead.append(all(grid_fid < r for r in rivals) and bool(rivals))
        print(f"seed {seed}: 2x2 at generation 100 FID {grid_fid:.1f} against 1x1 runs "
              f"{', '.join(f'{r:.1f}' for r in rivals)}: {'ahead' if ahead[-1] else 'not ahead'}")
    print(f"The grid is ahead on every seed: {'met' if all(ahead) else 'not met'}")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("matplotlib is missing (apt-get install python3-matplotlib; run with /usr/bin/python3): no plot")
fig, ax = plt.subplots(figsize=(10, 5.5))
SEED_COLOUR = {1: "tab:blue", 2: "tab:orange", 3: "tab:green", 4: "tab:red", 5: "tab:purple"}
for (grid, gens, seed), curve in sorted(curves.items()):
    if grid == "1x1" and gens == 100:
        continue  # the first half of the 200-generation run
    g = sorted(curve)
    ax.plot(g, [curve[x] for x in g], label=f"cellgan {grid}, seed {seed}", lw=1.6 if grid == "2x2" else 0.9,
            ls="-" if grid == "2x2" else "--", color=SEED_COLOUR.get(seed))
# What the two Lipizzaner sets are, for the legend (see tests/bench/README.md on its seeding).
CURVE_NOTE = "upstream seeding, 1,000 samples"
POINTS_NOTE = "Debian seeding, 10,000 samples"
lip_curve = {}
if (root / "lipizzaner_curve.csv").exists():
    for row in csv.DictReader((root / "lipizzaner_curve.csv").open()):
        lip_curve.setdefault(int(row["seed"]), []).append((int(row["generation"]), float(row["fid"])))
for seed, pts in sorted(lip_curve.items()):
    pts.sort()
    ax.plot([p[0] for p in pts], [p[1] for p in pts], ":", lw=2, color=SEED_COLOUR.get(seed),
            label=f"Lipizzaner 1x1, seed {seed} ({CURVE_NOTE})")
for seed in sorted({s for s, _ in lipizzaner}):
    pts = sorted((gen, v["fid"]) for (s, gen), v in lipizzaner.items() if s == seed)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "D", ms=7, mec="black", color=SEED_COLOUR.get(seed),
            label=f"Lipizzaner 1x1, seed {seed} ({POINTS_NOTE})")
ax.set_xlabel("generation (one epoch of the 9,000 training images each)")
ax.set_ylabel("FID (cellgan's classifier; curves: best mixture, 1,000 samples)")
ax.set_yscale("log")
ax.grid(alpha=0.3)
ax.legend(fontsize=7, loc="lower left", ncol=2)
ax.set_title("MNIST-10k: the single cell against Lipizzaner's, and the 2x2 grid")
fig.tight_layout()
out = root / "q2_parity_fid.png"
fig.savefig(out, dpi=90)
print(f"\nplot: {out}")

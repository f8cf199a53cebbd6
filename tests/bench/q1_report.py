#!/usr/bin/env python3
"""Q1 table: modes covered, % high quality, reverse KL and mode TVD (the toy
objective) of the final ensembles in runs/q1/ (or the folder given as the
argument), mean and range over seeds, as Markdown; then, for every seed with
both a 3x3 and a 1x1 run, the two side by side (the target's "beats 1x1 on
modes covered" clause, seed by seed); last, which BLAS kernels the runs
trained with, as result.json records them (runs from before that record
count as "not recorded"): results are comparable bit for bit only on the
same kernels."""
import json
import pathlib
import statistics
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "runs/q1")
rows = {}
by_seed = {}
kernels = {}
for result in sorted(root.glob("*/result.json")):
    data, grid, seed = result.parent.name.split("-")
    whole = json.loads(result.read_text())
    s = whole["scores"]
    workers = whole.get("blas_kernels", {}).get("workers")
    kernels.setdefault(" / ".join(sorted(set(workers))) if workers else "not recorded", []).append(result.parent.name)
    rows.setdefault((data, grid), []).append(s)
    by_seed[(data, seed, grid)] = s

print("| data | grid | runs | modes covered (mean, min-max) | high quality % (mean, min-max) | reverse KL (mean) | mode TVD (mean) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for (data, grid), runs in sorted(rows.items()):
    modes = [r["modes_covered"] for r in runs]
    hq = [100 * r["high_quality"] for r in runs]
    kl = [r["reverse_kl"] for r in runs]
    tvd = [r.get("mode_tvd", float("nan")) for r in runs]
    total = int(runs[0]["mode_count"])
    print(f"| {data} | {grid} | {len(runs)} | {statistics.mean(modes):.1f}/{total} ({min(modes):.0f}-{max(modes):.0f}) "
          f"| {statistics.mean(hq):.1f} ({min(hq):.1f}-{max(hq):.1f}) | {statistics.mean(kl):.3f} "
          f"| {statistics.mean(tvd):.3f} |")

pairs = sorted((data, seed) for data, seed, grid in by_seed if grid == "3x3" and (data, seed, "1x1") in by_seed)
if pairs:
    print()
    print("| data | seed | 3x3 modes | 1x1 modes | 3x3 high quality % | 1x1 high quality % | modes covered |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for data, seed in pairs:
        a, b = by_seed[(data, seed, "3x3")], by_seed[(data, seed, "1x1")]
        verdict = ("3x3 beats 1x1" if a["modes_covered"] > b["modes_covered"]
                   else "tie" if a["modes_covered"] == b["modes_covered"] else "1x1 beats 3x3")
        print(f"| {data} | {seed[1:]} | {a['modes_covered']:.0f} | {b['modes_covered']:.0f} "
              f"| {100 * a['high_quality']:.1f} | {100 * b['high_quality']:.1f} | {verdict} |")

if kernels:
    print()
    for name, runs in sorted(kernels.items()):
        print(f"BLAS kernels {name}: {', '.join(runs)}")

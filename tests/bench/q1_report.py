#!/usr/bin/env python3
"""Q1 table: modes covered, % high quality, reverse KL and mode TVD (the toy
objective) of the final ensembles in runs/q1/ (or the folder given as the
argument), mean and range over seeds, as Markdown."""
import json
import pathlib
import statistics
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "runs/q1")
rows = {}
for result in sorted(root.glob("*/result.json")):
    data, grid, seed = result.parent.name.split("-")
    s = json.loads(result.read_text())["scores"]
    rows.setdefault((data, grid), []).append(s)

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

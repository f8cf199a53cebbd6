#!/usr/bin/env python3
"""Q5 report: the FID of each run of q5_single_cell.sh (10,000 samples, `cellgan score`, from DIR/*.score), and
per variant the median, mean, spread and collapses (a run whose samples the classifier puts in fewer than 8
classes: classes_covered counts the classes holding at least 1% of them), with the median's ratio to
Lipizzaner's and the Q5 verdict (median <= 1.1x Lipizzaner's, no more collapses).
Usage: q5_report.py [DIR]   (default runs/q5-single-cell)"""
import pathlib
import re
import statistics
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "runs/q5-single-cell")
runs = {}
for path in sorted(root.glob("*.score")):
    variant, seed = path.stem.rsplit("-s", 1)
    values = dict((k, float(v)) for k, v in re.findall(r"(\w+) (-?[\d.]+(?:e-?\d+)?)", path.read_text().split(":", 1)[-1]))
    if "fid" not in values or "classes_covered" not in values:
        sys.exit(f"{path}: expected fid and classes_covered in the score line")
    runs.setdefault(variant, {})[int(seed)] = values

order = [v for v in ("lipizzaner", "cellgan", "bce", "lr", "both") if v in runs] + sorted(set(runs) - {"lipizzaner", "cellgan", "bce", "lr", "both"})
seeds = sorted({s for r in runs.values() for s in r})
print("| variant | " + " | ".join(f"seed {s}" for s in seeds) + " |")
print("| --- |" + " --- |" * len(seeds))
for v in order:
    cells = []
    for s in seeds:
        r = runs[v].get(s)
        cells.append("–" if r is None else f"{r['fid']:.1f}" + (f" ({r['classes_covered']:.0f} classes)" if r["classes_covered"] < 8 else ""))
    print(f"| {v} | " + " | ".join(cells) + " |")

print()
print("| variant | runs | median | mean | min–max | collapses | median / Lipizzaner's | Q5 |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
reference = runs.get("lipizzaner")
ref_median = statistics.median(r["fid"] for r in reference.values()) if reference else None
ref_collapses = sum(r["classes_covered"] < 8 for r in reference.values()) if reference else None
for v in order:
    fids = [r["fid"] for r in runs[v].values()]
    collapses = sum(r["classes_covered"] < 8 for r in runs[v].values())
    median = statistics.median(fids)
    ratio = f"{median / ref_median:.2f}×" if ref_median else "–"
    verdict = "–"
    if ref_median and v != "lipizzaner":
        verdict = "met" if median <= 1.1 * ref_median and collapses <= ref_collapses else "not met"
    print(f"| {v} | {len(fids)} | {median:.1f} | {statistics.mean(fids):.1f} | {min(fids):.1f}–{max(fids):.1f} | "
          f"{collapses} | {ratio} | {verdict} |")

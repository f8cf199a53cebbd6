#!/usr/bin/env python3
"""Q1 at equal generator steps: how the best cell's mixture (the lowest mode
TVD of its generation, scored on training.score_samples) improves with the
total number of generator steps of all cells, for the runs given.

Usage: q1_trajectory.py RUN_DIR... [--marks N]

For each run it prints the best mixture's high quality and modes covered at
N evenly spaced marks of total generator steps (up to the longest run), and
the total steps from which the best mixture met Q1's coverage clause (all 8
ring modes, or at least 24 of 25 grid modes) in every later generation.
(High quality on these 1,000-sample scores wanders a few points around 90%
late in a run, so "held from" is not asked of it.) Steps are counted as generations x
training.batches_per_generation x cells (one generator step per batch).
"""
import argparse
import collections
import json
import pathlib
import re


def config_int(text, key):
    m = re.search(rf"^\s*{key}:\s*(\d+)", text, re.M)
    if not m:
        raise SystemExit(f"q1_trajectory: config.yaml: expected an integer {key}")
    return int(m.group(1))


def load(run):
    run = pathlib.Path(run)
    text = (run / "config.yaml").read_text()
    cells = config_int(text, "rows") * config_int(text, "cols")
    steps = config_int(text, "batches_per_generation") * cells
    best = {}  # generation -> scores of the cell with the lowest mode TVD
    with open(run / "metrics.jsonl") as f:
        for line in f:
            r = json.loads(line)
            s = r["scores"]
            g = r["generation"]
            if g not in best or s["mode_tvd"] < best[g]["mode_tvd"]:
                best[g] = s
    return run.name, steps, collections.OrderedDict(sorted(best.items()))


def covers(s):
    total = int(s["mode_count"])
    need = total if total <= 8 else total - 1
    return s["modes_covered"] >= need


def held_from(best, steps):
    """Total steps from which every later generation met the coverage clause, or None."""
    start = None
    for g, s in best.items():
        if covers(s):
            start = start if start is not None else g
        else:
            start = None
    return None if start is None else start * steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--marks", type=int, default=8)
    args = ap.parse_args()
    runs = [load(r) for r in args.runs]
    longest = max(steps * max(best) for _, steps, best in runs)
    marks = [longest * (k + 1) // args.marks for k in range(args.marks)]
    print("| run | " + " | ".join(f"{m / 1e3:.0f}k steps" for m in marks) + " | coverage held from |")
    print("| --- |" + " --- |" * (len(marks) + 1))
    for name, steps, best in runs:
        cols = []
        for m in marks:
            g = m // steps
            if g < 1 or g > max(best):
                cols.append("")
                continue
            s = best[g]
            cols.append(f"{100 * s['high_quality']:.1f}% {s['modes_covered']:.0f}/{int(s['mode_count'])}")
        held = held_from(best, steps)
        cols.append("never" if held is None else f"{held / 1e3:.1f}k")
        print(f"| {name} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Figures of one cellgan run for tests/gpu/check.sh.

  g_report.py per-generation LOG      seconds per generation: from the master's
                                      "generation g/G: ..., X s elapsed" lines,
                                      (elapsed at the last - at the first) / (generations
                                      between), so start-up and the first generation
                                      (CUDA's warm-up) are left out
  g_report.py images-per-second DIR   median images_per_second of a data_parallel
                                      run's metrics.jsonl
  g_report.py scores DIR              the best ensemble's scores in DIR/result.json
  g_report.py phases DIR              where a generation's time goes: each phase's
                                      seconds summed over the cells, per generation,
                                      from DIR/metrics.jsonl (generation 1 left out)
"""
import json
import re
import statistics
import sys


def per_generation(log_path):
    points = {}
    pattern = re.compile(r"generation (\d+)/(\d+): .*?([\d.]+) s elapsed")
    with open(log_path, errors="replace") as f:
        for line in f:
            m = pattern.search(line)
            if m:
                points[int(m.group(1))] = float(m.group(3))
    if len(points) < 2:
        raise SystemExit(f"{log_path}: fewer than two generations logged")
    first, last = min(points), max(points)
    return (points[last] - points[first]) / (last - first)


def images_per_second(run_dir):
    values = []
    with open(f"{run_dir}/metrics.jsonl") as f:
        for line in f:
            counts = json.loads(line).get("counts", {})
            if "images_per_second" in counts:
                values.append(counts["images_per_second"])
    if not values:
        raise SystemExit(f"{run_dir}/metrics.jsonl: no images_per_second")
    return statistics.median(values)


def scores(run_dir):
    with open(f"{run_dir}/result.json") as f:
        result = json.load(f)
    return " ".join(f"{k} {v:.4f}" for k, v in sorted(result["scores"].items()))


def phases(run_dir):
    totals, generations = {}, set()
    with open(f"{run_dir}/metrics.jsonl") as f:
        for line in f:
            record = json.loads(line)
            if record.get("generation", 0) < 2 or "seconds" not in record:
                continue
            generations.add(record["generation"])
            for phase, seconds in record["seconds"].items():
                totals[phase] = totals.get(phase, 0.0) + seconds
    if not generations:
        raise SystemExit(f"{run_dir}/metrics.jsonl: no generation after the first")
    return ", ".join(f"{phase} {1000 * seconds / len(generations):.1f} ms"
                     for phase, seconds in sorted(totals.items(), key=lambda kv: -kv[1]))


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    what, where = sys.argv[1], sys.argv[2]
    if what == "per-generation":
        print(f"{per_generation(where):.4f}")
    elif what == "images-per-second":
        print(f"{images_per_second(where):.1f}")
    elif what == "scores":
        print(scores(where))
    elif what == "phases":
        print(phases(where))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()

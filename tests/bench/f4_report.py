#!/usr/bin/python3
"""The F4 table from a run of f4_overhead.sh: f4_report.py DIR.

Per run (aN: checkpoint.every 1 and the status server on; bN: both off):
seconds per generation = (stamp of "generation G/G" - stamp of
"generation 1/G") / (G - 1), from the master's log prefix (1 ms). The
verdict compares the mean of the A runs with the mean of the B runs; the
pairs' own ratios show the spread. The checkpoint lines of events.log give
the size and write time per checkpoint.
"""
import glob
import os
import re
import statistics
import sys

GEN = re.compile(r"^\[\s*([0-9.]+)s\]\s+\S+\s+r0/\S+\s+generation (\d+)/(\d+):")
CKPT = re.compile(r"checkpoint after generation \d+ complete: (\d+) files, ([0-9.]+) MB, written in ([0-9.]+) s")


def per_generation(stderr):
    stamps = {}
    with open(stderr) as f:
        for line in f:
            m = GEN.match(line)
            if m:
                stamps[int(m.group(2))] = float(m.group(1))
                total = int(m.group(3))
    return (stamps[total] - stamps[1]) / (total - 1)


def main():
    d = sys.argv[1]
    names = sorted(os.path.basename(p)[:-7] for p in glob.glob(os.path.join(d, "[ab]*.stderr")))
    pairs = sorted({n[1:] for n in names}, key=int)
    def settings(name):
        text = open(f"{d}/{name}.yaml").read()
        every = re.search(r"(?m)^  every: (\d+)", text).group(1)
        port = re.search(r"(?m)^  port: (\d+)", text).group(1)
        return f"checkpoint.every {every}, status {'on' if port != '0' else 'off'}"
    rows = [f"| pair | A: {settings('a' + pairs[0])} (s/gen) | B: {settings('b' + pairs[0])} (s/gen) | A / B | "
            "status polls answered |",
            "| --- | --- | --- | --- | --- |"]
    a_all, b_all = [], []
    for p in pairs:
        a, b = per_generation(f"{d}/a{p}.stderr"), per_generation(f"{d}/b{p}.stderr")
        a_all.append(a)
        b_all.append(b)
        polls = open(f"{d}/a{p}.polls").read().strip() if os.path.exists(f"{d}/a{p}.polls") else "?"
        rows.append(f"| {p} | {a:.3f} | {b:.3f} | {a / b:.3f} | {polls} |")
    ma, mb = statistics.mean(a_all), statistics.mean(b_all)
    rows.append(f"| mean | {ma:.3f} | {mb:.3f} | **{ma / mb:.3f}** ({(ma / mb - 1) * 100:+.1f}%) | |")
    sizes, times, files = [], [], set()
    for p in pairs:
        with open(f"{d}/a{p}/events.log") as f:
            for line in f:
                m = CKPT.search(line)
                if m:
                    files.add(int(m.group(1)))
                    sizes.append(float(m.group(2)))
                    times.append(float(m.group(3)))
    rows.append("")
    if sizes:
        rows.append(f"Checkpoints (A runs, {len(sizes)} of them): {'/'.join(map(str, sorted(files)))} files, "
                    f"{statistics.mean(sizes):.1f} MB each; written in {statistics.median(times):.3f} s median "
                    f"(min {min(times):.3f}, max {max(times):.3f}), {statistics.median(times) / ma * 100:.1f}% of "
                    f"an A generation.")
    print("\n".join(rows))


if __name__ == "__main__":
    main()

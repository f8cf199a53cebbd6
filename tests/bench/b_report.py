#!/usr/bin/env python3
"""Markdown report of benchmarks B1-B4 from a b_efficiency.sh directory.

Usage: b_report.py DIR

DIR holds (as b_efficiency.sh writes them):
  w1.log, w2.log     cellgan's stderr with W = 1 and W = 2 workers
  w1/, w2/           their run directories (metrics.jsonl)
  bare.out           bench_bare_loop's stdout
  env.txt            date, host, commit, configuration, load averages, host checks, BLAS kernels

Timing rule, the same on both sides of every comparison: generation 1 is
warm-up and is left out. cellgan's time is the master's wall clock at its
"generation g/G: ..." log lines (the log prefix, 1 ms resolution; the
"X s elapsed" field as a fallback), from generation 1 complete to
generation G complete, so every coordination cost is inside it. The bare
loop's time is the sum of its generations 2..G.

Standard library only.
"""
import json
import os
import re
import sys

GEN_LINE = re.compile(
    r"^\[\s*(?P<stamp>[0-9.]+)s\]\s+\S+\s+r0/\S+\s+generation (?P<g>\d+)/(?P<total>\d+): .*?"
    r"(?P<elapsed>[0-9.]+) s elapsed")
RUN_LINE = re.compile(r"run .*?: (?P<rows>\d+)x(?P<cols>\d+) grid, (?P<workers>\d+) workers?, (?P<gens>\d+) generations")
RSS_LINE = re.compile(r"worker (?P<w>\d+) done: peak RSS (?P<mb>[0-9.]+) MB")
BARE_LINE = re.compile(r"^seconds per generation per cell after warm-up: (?P<s>[0-9.]+)", re.M)
BARE_RSS = re.compile(r"^peak RSS: (?P<mb>[0-9.]+) MB", re.M)
BARE_START_RSS = re.compile(r"^RSS at start: (?P<mb>[0-9.]+) MB", re.M)

PHASES = ["gather", "select", "train", "mutate", "replace", "evaluate", "idle"]
TARGET_RATIO = 1.10
TARGET_SPEEDUP = 1.8
TARGET_COORD = 5.0  # percent
TARGET_RSS = 250.0  # MB


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


class CellganRun:
    """One cellgan run: generation times, grid, workers, phases, RSS."""

    def __init__(self, directory, name):
        self.name = name
        self.log = read(os.path.join(directory, name + ".log"))
        self.times = {}  # generation -> master wall clock (s)
        self.cells = self.workers = self.generations = None
        self.rss = {}  # worker -> MB
        self.phases = {}  # phase -> seconds, generations >= 2, all cells
        self.records = 0
        if self.log is None:
            return
        for line in self.log.splitlines():
            m = GEN_LINE.search(line)
            if m:
                g = int(m["g"])
                try:
                    self.times[g] = float(m["stamp"])
                except ValueError:
                    self.times[g] = float(m["elapsed"])
                self.generations = int(m["total"])
                continue
            m = RUN_LINE.search(line)
            if m:
                self.cells = int(m["rows"]) * int(m["cols"])
                self.workers = int(m["workers"])
                self.generations = int(m["gens"])
                continue
            m = RSS_LINE.search(line)
            if m:
                self.rss[int(m["w"])] = float(m["mb"])
        metrics = read(os.path.join(directory, name, "metrics.jsonl"))
        for line in (metrics or "").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("generation", 0) < 2:
                continue
            self.records += 1
            for k, v in rec.get("seconds", {}).items():
                self.phases[k] = self.phases.get(k, 0.0) + float(v)

    def last(self):
        return max(self.times) if self.times else None

    def window(self):
        """Wall seconds from generation 1 complete to the last complete, and generations in it."""
        last = self.last()
        if last is None or 1 not in self.times or last < 2:
            return None, 0
        return self.times[last] - self.times[1], last - 1

    def per_generation(self):
        seconds, gens = self.window()
        return seconds / gens if gens else None

    def per_generation_per_cell(self):
        pg = self.per_generation()
        return pg / self.cells if pg is not None and self.cells else None

    def breakdown(self):
        """Phase shares (percent of all recorded phase seconds, generations 2..G), the
        unrecorded share (percent of worker wall time W x the window) and the overhead
        gather + idle + max(0, unrecorded)."""
        seconds, gens = self.window()
        recorded = sum(self.phases.values())
        if not gens or not self.workers or recorded <= 0:
            return None
        keys = PHASES + sorted(k for k in self.phases if k not in PHASES)
        shares = {k: 100.0 * self.phases.get(k, 0.0) / recorded for k in keys}
        wall = seconds * self.workers
        shares["unrecorded"] = 100.0 * (wall - recorded) / wall
        shares["overhead"] = shares["gather"] + shares["idle"] + max(0.0, shares["unrecorded"])
        return shares


def _load1(line):
    try:
        return float(line.split(":", 1)[1].split()[0])
    except (IndexError, ValueError):
        return 0.0


def fmt(x, spec=".3f", unit=""):
    return "n/a" if x is None else format(x, spec) + unit


def verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


HOST_LINE = re.compile(r"^host check \w+: one loop alone (?P<alone>[0-9.]+) s; two at once (?P<pair>[0-9. ]+) s$")


def _host_unfair(line):
    """True for a host-check line whose slower parallel loop took > 1.25x the lone one."""
    m = HOST_LINE.match(line)
    if not m:
        return False
    alone = float(m["alone"])
    slowest = max(float(x) for x in m["pair"].split())
    return alone > 0 and slowest / alone > 1.25


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    directory = argv[1]
    w1 = CellganRun(directory, "w1")
    w2 = CellganRun(directory, "w2")
    bare_text = read(os.path.join(directory, "bare.out")) or ""
    m = BARE_LINE.search(bare_text)
    bare = float(m["s"]) if m else None
    m = BARE_RSS.search(bare_text)
    bare_rss = float(m["mb"]) if m else None
    m = BARE_START_RSS.search(bare_text)
    floor_rss = float(m["mb"]) if m else None
    env = read(os.path.join(directory, "env.txt")) or ""

    out = []
    out.append("### Benchmarks B1-B4")
    out.append("")
    for line in env.strip().splitlines():
        out.append("- " + line)
    g1 = w1.last()
    out.append(f"- generations completed: W=1 {fmt(g1, 'd') if g1 else 'n/a'}, "
               f"W=2 {fmt(w2.last(), 'd') if w2.last() else 'n/a'}; generation 1 is warm-up and left out of every "
               "time below")
    out.append("- cellgan times: the master's wall clock at its `generation g/G` log lines, generation 1 complete to "
               "generation G complete (coordination included); bare loop: its generations 2..G")
    out.append("")

    # B1 and B2.
    c1 = w1.per_generation_per_cell()
    ratio = c1 / bare if c1 is not None and bare else None
    p1, p2 = w1.per_generation(), w2.per_generation()
    speedup = p1 / p2 if p1 and p2 else None
    out.append("| Benchmark | Measure | cellgan | Reference | Result | Target | Verdict |")
    out.append("|---|---|---|---|---|---|---|")
    out.append(f"| B1 efficiency | s per generation per cell, W=1 vs bare LibTorch loop | {fmt(c1)} s | {fmt(bare)} s "
               f"| {fmt(ratio, '.3f', 'x')} | <= {TARGET_RATIO:.2f}x | "
               f"{verdict(None if ratio is None else ratio <= TARGET_RATIO)} |")
    out.append(f"| B2 speed-up | s per generation (4 cells), W=2 vs W=1 | {fmt(p2)} s | {fmt(p1)} s "
               f"| {fmt(speedup, '.3f', 'x')} | >= {TARGET_SPEEDUP:.1f}x | "
               f"{verdict(None if speedup is None else speedup >= TARGET_SPEEDUP)} |")

    # B3.
    b1, b2 = w1.breakdown(), w2.breakdown()
    coord = {"W=1": b1 and b1["overhead"], "W=2": b2 and b2["overhead"]}
    worst = None if None in coord.values() else max(coord.values())
    out.append(f"| B3 overhead | gather + idle + unrecorded, % of a generation | W=1 {fmt(coord['W=1'], '.2f', '%')} "
               f"| W=2 {fmt(coord['W=2'], '.2f', '%')} | {fmt(worst, '.2f', '%')} (worse) | <= {TARGET_COORD:.0f}% | "
               f"{verdict(None if worst is None else worst <= TARGET_COORD)} |")

    # B4.
    rss = max(w1.rss.values()) if w1.rss else None
    rss_list = ", ".join(f"worker {w}: {mb:.1f} MB" for w, mb in sorted(w1.rss.items())) or "n/a"
    rss2 = ", ".join(f"{mb:.1f}" for _, mb in sorted(w2.rss.items())) or "n/a"
    out.append(f"| B4 memory | peak RSS per worker process, W=1 | {rss_list} "
               f"| bare loop {fmt(bare_rss, '.1f', ' MB')} (at start, before any tensor: "
               f"{fmt(floor_rss, '.1f', ' MB')}); W=2 workers: {rss2} MB "
               f"| {fmt(rss, '.1f', ' MB')} (max) | <= {TARGET_RSS:.0f} MB | "
               f"{verdict(None if rss is None else rss <= TARGET_RSS)} |")
    out.append("")

    # B3 in full.
    out.append("B3, where the time goes: metrics.jsonl `seconds`, generations 2..G, all cells, as percent of the "
               "recorded phase seconds; unrecorded = worker wall time (W x the master's generation-1-to-G window) "
               "minus the recorded seconds, as percent of that wall time:")
    out.append("")
    extra = sorted({k for b in (b1, b2) if b for k in b if k not in PHASES + ["unrecorded", "overhead"]})
    cols = PHASES + extra
    out.append("| Run | wall s/generation | " + " | ".join(cols) + " | unrecorded | gather + idle + unrecorded |")
    out.append("|---|---|" + "---|" * len(cols) + "---|---|")
    for name, run, b in (("W=1", w1, b1), ("W=2", w2, b2)):
        if b is None:
            out.append(f"| {name} | n/a |" + " n/a |" * len(cols) + " n/a | n/a |")
            continue
        cells = " | ".join(fmt(b.get(c), ".2f", "%") for c in cols)
        out.append(f"| {name} | {fmt(run.per_generation())} | {cells} | {fmt(b['unrecorded'], '.2f', '%')} "
                   f"| {fmt(b['overhead'], '.2f', '%')} |")
    out.append("")
    out.append("Phases: gather = building the neighbourhood, including decoding the neighbours' centres; idle = "
               "waiting for the halos and decoding them (the exchange itself runs on the comm thread, so idle is what it costs the "
               "training thread); unrecorded = worker time outside the recorded phases (encoding the centres for "
               "the exchange, sending records, the master's lag); it is approximate (the window is the master's, "
               "the phases the workers'), may come out slightly negative in short runs, and counts in the overhead "
               "only when positive. select (tournaments, cloning the winners), train (Adam steps), mutate (lr "
               "mutation), replace and evaluate (fitness, re-scoring, mixture FID) are the algorithm's own work.")
    busy = [line for line in env.splitlines() if line.startswith("load before") and _load1(line) >= 1.0]
    if busy:
        out.append("")
        out.append("**Warning: the cores were busy when a run started (" + "; ".join(busy) +
                   "); the times above do not measure cellgan.**")
    slow = [line for line in env.splitlines() if _host_unfair(line)]
    if slow:
        out.append("")
        out.append("**Warning: this host did not give two cores' worth of work (" + "; ".join(slow) +
                   "): two identical loops at once ran more than 25% slower than one alone, so B2 and B3 "
                   "measure the host, not cellgan.**")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

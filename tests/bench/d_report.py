#!/usr/bin/env python3
"""D1-D3 report of tests/bench/d_data_parallel.sh: reads DIR/<run>/metrics.jsonl
and layout.json of every run, and DIR/bare.out, and prints Markdown tables.

Per run, over generations 2..G (generation 1 is warm-up): images per second
(global batch rows per second of the steps, `counts.images_per_second`
weighted by time), worker 1's compute and communication seconds, the
communication overhead (communicate / (compute + communicate)), the bytes
worker 1 sends per step, and the scaling efficiency: images per second
against W times the W = 1 run's with the same scaling.

Usage: d_report.py DIR
"""
import json
import os
import re
import sys


def read_run(path):
    lines = [json.loads(l) for l in open(os.path.join(path, "metrics.jsonl")) if l.strip()]
    layout = json.load(open(os.path.join(path, "layout.json")))
    timed = lines[1:] if len(lines) > 1 else lines
    compute = sum(l["seconds"]["compute"] for l in timed)
    comm = sum(l["seconds"]["communicate"] for l in timed)
    wall = sum(l["seconds"]["compute"] + l["seconds"]["communicate"] for l in timed)
    rate = [l["counts"]["images_per_second"] for l in timed]
    # Time-weighted: every generation has the same rows, so the harmonic mean.
    images_per_second = len(rate) / sum(1.0 / r for r in rate) if all(r > 0 for r in rate) else 0.0
    return {
        "layout": layout,
        "workers": layout["workers"],
        "ips": images_per_second,
        "compute": compute / len(timed),
        "comm": comm / len(timed),
        "overhead": comm / wall if wall > 0 else 0.0,
        "bytes": timed[-1]["counts"]["allreduce_bytes_per_step"],
        "messages": timed[-1]["counts"]["allreduce_messages_per_step"],
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    runs = {}
    for name in sorted(os.listdir(d)):
        if os.path.isfile(os.path.join(d, name, "metrics.jsonl")) and os.path.isfile(os.path.join(d, name, "layout.json")):
            runs[name] = read_run(os.path.join(d, name))
    bare = None
    bare_out = os.path.join(d, "bare.out")
    if os.path.isfile(bare_out):
        m = re.search(r"images per second after warm-up: ([0-9.]+)", open(bare_out).read())
        bare = float(m.group(1)) if m else None
    print(open(os.path.join(d, "env.txt")).read().strip().replace("\n", "  \n"))
    print()
    if "w1" in runs and bare:
        print("### D1: data_parallel with W = 1 against a bare LibTorch loop (target >= 0.95x)\n")
        print("| run | images/s | ratio to bare |\n| --- | ---: | ---: |")
        print(f"| bare pair (1 process, no MPI) | {bare:.1f} | 1.000 |")
        print(f"| data_parallel W = 1 | {runs['w1']['ips']:.1f} | {runs['w1']['ips'] / bare:.3f} |\n")
    print("### D2: scaling, W = 2 against W = 1 (target weak >= 1.8x)\n")
    print("| scaling | W = 1 images/s | W = 2 images/s | speed-up | efficiency |\n| --- | ---: | ---: | ---: | ---: |")
    for scaling, one, two in (("weak", "w1", "w2"), ("strong", "w1-strong", "w2-strong")):
        if one in runs and two in runs:
            s = runs[two]["ips"] / runs[one]["ips"]
            print(f"| {scaling} | {runs[one]['ips']:.1f} | {runs[two]['ips']:.1f} | {s:.2f}x | {s / 2 * 100:.0f}% |")
    print()
    print("### D3: where the time goes (W = 2, weak; seconds per generation, worker 1)\n")
    print("| run | allreduce | fusion bytes | compression | compute s | communication s | overhead | "
          "images/s | scaling efficiency | bytes sent per step | messages per step |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    base = runs.get("w1")
    for name, r in runs.items():
        lay = r["layout"]
        ref = runs.get("w1-strong" if lay["scaling"] == "strong" else "w1") or base
        eff = r["ips"] / (r["workers"] * ref["ips"]) * 100 if ref else float("nan")
        print(f"| {name} | {lay['allreduce']} | {lay['fusion_bytes']} | {lay['compression']} | {r['compute']:.2f} | "
              f"{r['comm']:.2f} | {r['overhead'] * 100:.1f}% | {r['ips']:.1f} | {eff:.0f}% | {r['bytes']:.0f} | "
              f"{r['messages']:.0f} |")
    print()
    print("Bytes sent per step are worker 1's payload bytes (gradients of G and D, the loss, the BatchNorm buffers); "
          "for `mpi` they are the ring's model, 2(W-1)/W of the buffer, since MPI's own choice is not visible.")


if __name__ == "__main__":
    main()

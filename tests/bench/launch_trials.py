#!/usr/bin/python3
"""F1', F2', F5 and F6 (tests/bench/README.md): trials of a toy run under
`cellgan launch --recovery`, each hitting the job from outside at a moment
drawn uniformly from the launch to the end of an uninterrupted run (its
first second included).

    launch_trials.py --mode kill|stop|two-kills|master-kill --config BASE.yaml
                     --out DIR [--trials 20] [--seed 1] [--workers 3]
                     [--stall-timeout 15] [--cellgan build/app/cellgan]

  kill         SIGKILL one worker (drawn 1..W)                       F1'
  stop         SIGSTOP one worker                                     F2'
  two-kills    SIGKILL two workers, the second 1-3 s after the first  F5
  master-kill  SIGKILL the master (rank 0)                            F6

A rank that does not exist yet at the drawn moment (mpirun has not started
it) is hit as soon as it appears. Per trial: the launcher's exit code, the
result, whether ensemble.bin equals the uninterrupted run's, the restarts
the launcher made and why, the time from the (first) signal to the
master's "dead" line or the launcher's restart line (detection) and to the
launcher's restart line (restart), the wall time beyond the uninterrupted
run, and any process of the trial left behind (then killed, and said).
Writes DIR/trials.json and DIR/report.md, and prints the table.
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import threading
import time

RUN_TIMEOUT = 300  # s: a trial that outlasts it hangs (reported, then killed)


def ranks_of(config):
    """{rank: pid} of the live cellgan train processes whose command line names `config`."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if config.encode() not in argv or b"train" not in argv:
                continue
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except (OSError, ValueError, IndexError):
            continue
        if b"OMPI_COMM_WORLD_RANK" in env:
            found[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(entry)
    return found


class Launch:
    """One `cellgan launch`, its stderr read line by line and stamped on arrival."""

    def __init__(self, cmd, log_dir):
        self.lines = []
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.stdout = open(os.path.join(log_dir, "stdout.txt"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.stdout, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.log_dir = log_dir

    def _read(self):
        for line in self.proc.stderr:
            with self.lock:
                self.lines.append((time.monotonic(), line.rstrip("\n")))

    def first(self, pattern, after=0.0):
        rx = re.compile(pattern)
        with self.lock:
            for t, line in self.lines:
                if t >= after and rx.search(line):
                    return t, line
        return None

    def all(self, pattern):
        rx = re.compile(pattern)
        with self.lock:
            return [line for _, line in self.lines if rx.search(line)]

    def wait(self, timeout):
        try:
            rc, hung = self.proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            hung = True
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        self.reader.join(timeout=10)
        self.stdout.close()
        with open(os.path.join(self.log_dir, "stderr.txt"), "w") as f:
            for t, line in self.lines:
                f.write(f"{t - self.start:9.3f} {line}\n")
        return rc, hung


def write_config(base, out_dir, name):
    run_dir = os.path.join(out_dir, name)
    cfg = os.path.join(out_dir, name + ".yaml")
    with open(base) as f:
        text = f.read()
    text, n = re.subn(r"(?m)^output_dir: .*$", f"output_dir: {run_dir}", text)
    assert n == 1, f"{base}: no output_dir line to replace"
    with open(cfg, "w") as f:
        f.write(text)
    return cfg, run_dir


def launch_command(args, cfg):
    return [args.cellgan, "launch", "-w", str(args.workers), "--recovery", "--stall-timeout",
            str(args.stall_timeout), "--max-restarts", "3", cfg]


def hit(cfg, rank, sig, deadline):
    """Sends `sig` to `rank` of the job of `cfg` as soon as it exists (until `deadline`); the time sent."""
    while time.monotonic() < deadline:
        pid = ranks_of(cfg).get(rank)
        if pid is not None:
            try:
                os.kill(pid, sig)
                return time.monotonic()
            except OSError:
                pass
        time.sleep(0.002)
    return None


def same_file(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def run_trial(args, i, rng, ref_dir, ref_wall):
    moment = rng.uniform(0.0, ref_wall)
    if args.mode == "master-kill":
        targets = [0]
    elif args.mode == "two-kills":
        targets = rng.sample(range(1, args.workers + 1), 2)
    else:
        targets = [rng.randint(1, args.workers)]
    gap = rng.uniform(1.0, 3.0) if args.mode == "two-kills" else 0.0
    sig = signal.SIGSTOP if args.mode == "stop" else signal.SIGKILL
    cfg, run_dir = write_config(args.config, args.out, f"trial-{i:02d}")
    log_dir = os.path.join(args.out, f"trial-{i:02d}-logs")
    os.makedirs(log_dir, exist_ok=True)
    job = Launch(launch_command(args, cfg), log_dir)
    time.sleep(max(0.0, job.start + moment - time.monotonic()))
    sent = []
    for n, rank in enumerate(targets):
        if n > 0:  # `gap` after the first signal (or now, when the run ended before it)
            base = sent[0] if sent[0] is not None else time.monotonic()
            time.sleep(max(0.0, base + gap - time.monotonic()))
        t = hit(cfg, rank, sig, time.monotonic() + 60) if job.proc.poll() is None else None
        sent.append(t)
    first = next((t for t in sent if t is not None), None)
    rc, hung = job.wait(RUN_TIMEOUT)
    leftovers = ranks_of(cfg)
    for pid in leftovers.values():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    events = []
    try:
        with open(os.path.join(run_dir, "events.log")) as f:
            events = [line.rstrip("\n") for line in f]
    except OSError:
        pass
    restarts = job.all(r"cellgan launch: (launch: )?restart \d+/")
    restart_line = job.first(r"cellgan launch: (launch: )?restart \d+/", first or 0.0)
    dead_line = job.first(r"worker rank \d+ (is lost|dead)|did not get ready|stalled:", first or 0.0)
    detections = [x[0] for x in (restart_line, dead_line) if x]
    end = time.monotonic()
    return {
        "trial": i, "mode": args.mode, "targets": targets, "moment_s": round(moment, 3),
        "sent_at_s": [round(t - job.start, 3) if t else None for t in sent],
        "exit_code": rc, "hung": hung, "result": os.path.exists(os.path.join(run_dir, "result.json")),
        "ensemble_equal": same_file(os.path.join(run_dir, "ensemble.bin"), os.path.join(ref_dir, "ensemble.bin")),
        "restarts": [re.sub(r"^cellgan launch: (launch: )?", "launch: ", r) for r in restarts],
        "rehomed": any("rehoming" in e for e in events),
        "detected_s": round(min(detections) - first, 3) if detections and first else None,
        "restart_s": round(restart_line[0] - first, 3) if restart_line and first else None,
        "wall_s": round(end - job.start, 3),
        "extra_s": round(end - job.start - ref_wall, 3),
        "left_behind": sorted(leftovers.values()),
    }


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def report(d, args):
    trials = d["trials"]
    out = ["| trial | ranks hit | at (s after launch) | exit | finished | ensemble.bin = reference | in place | "
           "restarts (cause) | detected after | restarted after | wall beyond the reference |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in trials:
        at = ", ".join("not sent" if s is None else f"{s:.2f}" for s in t["sent_at_s"])
        causes = "; ".join(re.sub(r"^launch: restart (\d+/\d+) with --resume auto: ", r"\1 ", r)[:70]
                           for r in t["restarts"]) or "none"
        det = "–" if t["detected_s"] is None else f"{t['detected_s']:.2f} s"
        rst = "–" if t["restart_s"] is None else f"{t['restart_s']:.2f} s"
        out.append(f"| {t['trial']} | {','.join(map(str, t['targets']))} | {at} | "
                   f"{'hung' if t['hung'] else t['exit_code']} | {'yes' if t['result'] else 'no'} | "
                   f"{'yes' if t['ensemble_equal'] else 'no'} | {'yes' if t['rehomed'] else 'no'} | {causes} | "
                   f"{det} | {rst} | {t['extra_s']:.1f} s |")
    ok = sum(t["exit_code"] == 0 and t["result"] and t["ensemble_equal"] and not t["hung"] for t in trials)
    dets = [t["detected_s"] for t in trials if t["detected_s"] is not None]
    rsts = [t["restart_s"] for t in trials if t["restart_s"] is not None]
    extra = [t["extra_s"] for t in trials]
    out.append("")
    out.append(f"{args.mode}: {ok}/{len(trials)} finished (exit 0) with the reference's ensemble.bin; "
               f"hung {sum(t['hung'] for t in trials)}; restarted {sum(bool(t['restarts']) for t in trials)}, "
               f"in place {sum(t['rehomed'] and not t['restarts'] for t in trials)}; "
               f"detection median {median(dets):.2f} s, worst {max(dets) if dets else float('nan'):.2f} s; "
               f"restart median {median(rsts):.2f} s, worst {max(rsts) if rsts else float('nan'):.2f} s; "
               f"wall beyond the reference median {median(extra):.1f} s, worst {max(extra):.1f} s; "
               f"processes left behind {sum(len(t['left_behind']) for t in trials)}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["kill", "stop", "two-kills", "master-kill"], required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--stall-timeout", type=float, default=15)
    ap.add_argument("--cellgan", default="build/app/cellgan")
    args = ap.parse_args()
    args.cellgan = os.path.abspath(args.cellgan)
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    cfg, ref_dir = write_config(args.config, args.out, "reference")
    os.makedirs(os.path.join(args.out, "reference-logs"), exist_ok=True)
    job = Launch(launch_command(args, cfg), os.path.join(args.out, "reference-logs"))
    rc, hung = job.wait(RUN_TIMEOUT)
    wall = time.monotonic() - job.start
    print(f"reference: exit {rc}, {wall:.1f} s", flush=True)
    if rc != 0 or hung:
        raise SystemExit(f"launch_trials: the reference run failed (exit {rc}); see {args.out}/reference-logs")
    rng = random.Random(args.seed)
    trials = []
    for i in range(args.trials):
        t = run_trial(args, i, rng, ref_dir, wall)
        trials.append(t)
        print(f"trial {i}: ranks {t['targets']} at {t['sent_at_s']}, exit {t['exit_code']}, equal "
              f"{t['ensemble_equal']}, restarts {len(t['restarts'])}, detected {t['detected_s']}, "
              f"wall {t['wall_s']}", flush=True)
    d = {"mode": args.mode, "reference_wall_s": wall, "stall_timeout_s": args.stall_timeout, "trials": trials}
    with open(os.path.join(args.out, "trials.json"), "w") as f:
        json.dump(d, f, indent=1)
    text = f"Reference run: {wall:.1f} s wall under cellgan launch.\n\n" + report(d, args)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

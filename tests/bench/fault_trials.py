#!/usr/bin/python3
"""F1 and F2 (tests/bench/README.md): trials of a toy run under
`mpirun --enable-recovery`, each of which kills (SIGKILL) or stops (SIGSTOP)
one worker from outside, by PID, at a seeded random moment.

    fault_trials.py --signal kill|stop --config BASE.yaml --out DIR
                    [--trials 10] [--seed 1] [--cellgan build/app/cellgan]

BASE.yaml is a complete configuration (its output_dir is replaced). First an
uninterrupted reference run, then the trials. Trial i aims at phase
PHASES[i % 4]; the RNG (seeded) picks the rank (1..W) and the moment within
the phase. The worker's PID is the process whose command line names the
trial's configuration and whose environment has OMPI_COMM_WORLD_RANK=rank.

Per trial it records: the exit code and whether result.json exists, the
phase the kill actually landed in (what the master had logged by then), the
detection time (from the signal to the master's "is lost" / "did not get
ready" log line, read from mpirun's stderr as it comes), the events.log
lines about the worker, the generations lost (the last generation the
master had completed at the signal minus the generation the survivors went
back to), whether ensemble.bin and the metrics.jsonl losses equal the
reference's, and any process of the trial left behind (killed -9, and said).
Writes DIR/trials.json and prints the Markdown table (also DIR/report.md).
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import threading
import time

PHASES = ["start-up", "training", "checkpoint", "final"]
RUN_TIMEOUT = 60  # s; a trial that outlasts it is a hang (reported, then killed); one takes about 25 s


def mpirun_command(cellgan, config, workers):
    cmd = ["mpirun"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + ["--enable-recovery", "--oversubscribe", "--bind-to", "none", "-np", str(workers + 1),
                  cellgan, "train", config]


def processes_of(config):
    """{rank: pid} of the cellgan processes whose command line names `config`."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if config.encode() not in argv or not any(a.endswith(b"cellgan") for a in argv):
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError):
            continue
        if state == "Z" or b"OMPI_COMM_WORLD_RANK" not in env:
            continue
        found[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(entry)
    return found


class Job:
    """One mpirun, its stderr read line by line and stamped on arrival."""

    def __init__(self, cmd, out_dir):
        self.lines = []  # (monotonic time, line)
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.stdout = open(os.path.join(out_dir, "stdout.txt"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.stdout, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr_path = os.path.join(out_dir, "stderr.txt")

    def _read(self):
        for line in self.proc.stderr:
            with self.lock:
                self.lines.append((time.monotonic(), line.rstrip("\n")))

    def first(self, pattern, after=0.0):
        """(time, line) of the first stderr line matching `pattern` at or after `after`."""
        rx = re.compile(pattern)
        with self.lock:
            for t, line in self.lines:
                if t >= after and rx.search(line):
                    return t, line
        return None

    def last_generation(self):
        """The last generation the master has logged as complete."""
        g = 0
        with self.lock:
            for _, line in self.lines:
                m = re.search(r"r0/main generation (\d+)/\d+:", line)
                if m:
                    g = max(g, int(m.group(1)))
        return g

    def wait(self, timeout):
        try:
            rc = self.proc.wait(timeout=timeout)
            hung = False
        except subprocess.TimeoutExpired:
            hung = True
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        self.reader.join(timeout=10)
        self.stdout.close()
        with open(self.stderr_path, "w") as f:
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


def sleep_until(cond, timeout, step=0.002):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return False


def losses(metrics_path):
    rows = []
    with open(metrics_path) as f:
        for line in f:
            r = json.loads(line)
            rows.append((r.get("cell"), r.get("generation"), r.get("generator_loss"), r.get("discriminator_loss")))
    return sorted(rows, key=lambda r: (r[1], r[0]))


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def same_file(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def run_trial(args, i, rng, ref_dir, generations, every, workers):
    phase = PHASES[i % len(PHASES)]
    rank = rng.randint(1, workers)
    cfg, run_dir = write_config(args.config, args.out, f"trial-{i:02d}")
    log_dir = os.path.join(args.out, f"trial-{i:02d}-logs")
    os.makedirs(log_dir, exist_ok=True)
    checkpoints = [g for g in range(every, generations, every)] if every else []
    # The moment, drawn before the run so that it depends on the seed alone.
    if phase == "start-up":
        delay, target = rng.uniform(0.0, 0.3), None           # after the PID appears
    elif phase == "training":
        target = rng.randint(1, generations - 2)             # after the master logs this generation
        delay = rng.uniform(0.0, 0.2)
    elif phase == "checkpoint":
        target = rng.choice(checkpoints)                     # when checkpoints/gen-<target> appears
        delay = rng.uniform(0.0, 0.004)
    else:
        target, delay = generations, rng.uniform(0.0, 0.05)  # after the master logs the last generation

    job = Job(mpirun_command(args.cellgan, cfg, workers), log_dir)
    pid = None
    if sleep_until(lambda: rank in processes_of(cfg), 30, 0.001):
        pid = processes_of(cfg)[rank]
    waited = False
    if pid is not None:
        if phase == "training" or phase == "final":
            waited = sleep_until(lambda: job.last_generation() >= target, 120)
        elif phase == "checkpoint":
            folder = os.path.join(run_dir, "checkpoints", f"gen-{target:06d}")
            waited = sleep_until(lambda: os.path.isdir(folder), 120, 0.0005)
        else:
            waited = True
    t_kill = None
    landed = {}
    if pid is not None and waited and job.proc.poll() is None:
        time.sleep(delay)
        landed = {
            "master_generation": job.last_generation(),
            "checkpoints_complete": sorted(
                int(d[4:]) for d in os.listdir(os.path.join(run_dir, "checkpoints"))
                if os.path.exists(os.path.join(run_dir, "checkpoints", d, "manifest.json")))
            if os.path.isdir(os.path.join(run_dir, "checkpoints")) else [],
            "result_in": "gathered" in read_text(os.path.join(run_dir, "events.log")),
            "worker_started": job.first(rf"r{rank}/\w+ +worker {rank} of ") is not None,
        }
        t_kill = time.monotonic()
        os.kill(pid, signal.SIGKILL if args.signal == "kill" else signal.SIGSTOP)
    rc, hung = job.wait(RUN_TIMEOUT)
    leftovers = processes_of(cfg)
    for p in leftovers.values():
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass

    events = []
    ev_path = os.path.join(run_dir, "events.log")
    if os.path.exists(ev_path):
        with open(ev_path) as f:
            events = [l.rstrip("\n") for l in f]
    about = [e for e in events if f"rank {rank}" in e or "rehoming" in e or "did not get ready" in e]
    detected = job.first(rf"worker rank {rank} is lost|worker rank {rank}\b.*did not get ready", t_kill or 0.0)
    silent = next((re.search(r"silent for ([0-9.]+) s", e).group(1) for e in events
                   if f"worker rank {rank} dead: silent for" in e), None)
    back_to = next((int(re.search(r"go on from generation (\d+)", e).group(1)) for e in events
                    if "rehoming:" in e), None)
    ens = os.path.join(run_dir, "ensemble.bin")
    ended = job.first(r"r0/\w+ +grid ensemble \(")
    trial = {
        "trial": i, "phase": phase, "rank": rank, "pid": pid, "signal": args.signal,
        "target": target, "delay_s": round(delay, 4), "signalled": t_kill is not None, "landed": landed,
        "exit_code": rc, "hung": hung, "result": os.path.exists(os.path.join(run_dir, "result.json")),
        "detected_s": round(detected[0] - t_kill, 3) if detected and t_kill else None,
        "silent_for_s": float(silent) if silent else None,
        "back_to": back_to,
        "finished_after_s": round(ended[0] - t_kill, 3) if ended and t_kill else None,
        "lost_generations": (landed["master_generation"] - back_to) if back_to is not None and landed else None,
        "rehomed": back_to is not None,
        "ensemble_equal": same_file(ens, os.path.join(ref_dir, "ensemble.bin")),
        "losses_equal": os.path.exists(os.path.join(run_dir, "metrics.jsonl"))
        and losses(os.path.join(run_dir, "metrics.jsonl")) == losses(os.path.join(ref_dir, "metrics.jsonl")),
        "killed_by_master": any(f"killed worker rank {rank} (pid" in e for e in events),
        "left_behind": sorted(leftovers.values()),
        "events": about,
    }
    return trial


def report(trials, args, every):
    sig = "SIGKILL" if args.signal == "kill" else "SIGSTOP"
    out = [f"| trial | phase aimed at | rank | signal at (master's last generation) | exit | result | detected after | "
           f"events.log | went back to | generations lost | ensemble.bin = reference |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in trials:
        keep = ("dead:", "killed worker", "had sent", "did not get ready", "rehoming")
        ev = "; ".join(re.sub(r" \(/[^)]*\)$", "", e.split(" ", 1)[1]) for e in t["events"]
                       if any(k in e for k in keep)) or "–"
        lost = "–" if t["lost_generations"] is None else str(t["lost_generations"])
        back = "–" if t["back_to"] is None else str(t["back_to"])
        det = f"{t['detected_s']:.2f} s" if t["detected_s"] is not None else (
            ("not needed: scored already" if t["finished_after_s"] <= 0 else
             f"not needed: scored {t['finished_after_s']:.2f} s later") if t["finished_after_s"] is not None
            else "not detected")
        at = f"gen {t['landed'].get('master_generation')}" if t["signalled"] else "not sent"
        if t["signalled"] and not t["landed"].get("worker_started"):
            at += ", before the worker's start line"
        if t["landed"].get("result_in"):
            at += ", results gathered"
        out.append(f"| {t['trial']} | {t['phase']} | {t['rank']} | {at} | {'hung, killed after ' + str(RUN_TIMEOUT) + ' s' if t['hung'] else t['exit_code']}"
                   f" | {'yes' if t['result'] else 'no'} | {det} | {ev} | {back} | {lost} | "
                   f"{'yes' if t['ensemble_equal'] else 'no'} |")
    finished = sum(t["result"] and t["exit_code"] == 0 for t in trials)
    dets = [t["detected_s"] for t in trials if t["detected_s"] is not None]
    lost = [t["lost_generations"] for t in trials if t["lost_generations"] is not None]
    out.append("")
    out.append(f"{sig}: {finished}/{len(trials)} finished with a result (exit 0, result.json); "
               f"result.json written {sum(t['result'] for t in trials)}/{len(trials)}; "
               f"hung {sum(t['hung'] for t in trials)}/{len(trials)}; "
               f"detected {len(dets)}/{len(trials)}, max {max(dets) if dets else float('nan'):.2f} s "
               f"(mean {sum(dets) / len(dets) if dets else float('nan'):.2f} s); "
               f"generations lost max {max(lost) if lost else 0} (checkpoint.every {every}); "
               f"ensemble.bin equal to the reference {sum(t['ensemble_equal'] for t in trials)}/{len(trials)}; "
               f"processes left behind {sum(len(t['left_behind']) for t in trials)}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--signal", choices=["kill", "stop"], required=True)
    ap.add_argument("--report", action="store_true", help="only print the table of OUT/trials.json again")
    ap.add_argument("--config")
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--cellgan", default="build/app/cellgan")
    args = ap.parse_args()
    args.cellgan = os.path.abspath(args.cellgan)
    args.out = os.path.abspath(args.out)
    if args.report:
        with open(os.path.join(args.out, "trials.json")) as f:
            d = json.load(f)
        print(f"Reference run: {d['reference_wall_s']:.1f} s wall.\n\n" + report(d["trials"], args, d["every"]))
        return
    os.makedirs(args.out, exist_ok=True)
    with open(args.config) as f:
        text = f.read()
    generations = int(re.search(r"(?m)^  generations: (\d+)", text).group(1))
    m = re.search(r"(?ms)^checkpoint:.*?^  every: (\d+)", text)
    every = int(m.group(1)) if m else 5

    cfg, ref_dir = write_config(args.config, args.out, "reference")
    log_dir = os.path.join(args.out, "reference-logs")
    os.makedirs(log_dir, exist_ok=True)
    job = Job(mpirun_command(args.cellgan, cfg, args.workers), log_dir)
    rc, hung = job.wait(RUN_TIMEOUT)
    wall = time.monotonic() - job.start
    print(f"reference: exit {rc}, {wall:.1f} s", flush=True)
    if rc != 0:
        raise SystemExit(f"fault_trials: the reference run failed (exit {rc}); see {log_dir}")

    rng = random.Random(args.seed)
    trials = []
    for i in range(args.trials):
        t = run_trial(args, i, rng, ref_dir, generations, every, args.workers)
        trials.append(t)
        print(f"trial {i}: {t['phase']}, rank {t['rank']}, exit {t['exit_code']}, detected {t['detected_s']}, "
              f"back to {t['back_to']}, lost {t['lost_generations']}, equal {t['ensemble_equal']}", flush=True)
    with open(os.path.join(args.out, "trials.json"), "w") as f:
        json.dump({"reference_wall_s": wall, "generations": generations, "every": every, "trials": trials}, f,
                  indent=1)
    text = f"Reference run: exit {rc}, {wall:.1f} s wall.\n\n" + report(trials, args, every)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

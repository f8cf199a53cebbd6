#!/usr/bin/env bash
# F3 (tests/bench/README.md): the injected faults nan, delay,
# drop-heartbeats and corrupt-checkpoint on the toy run of F1 (3x3 ring,
# W = 3, checkpoint.every 5, 30 generations), each under
# mpirun --enable-recovery, against a run without faults. Per run: the exit
# code, the final score (result.json), whether it is finite, whether
# ensemble.bin equals the run without faults, and the events.log lines of
# the fault. corrupt-checkpoint is run three ways: alone; with a kill under
# plain mpirun (exit 137) followed by --resume auto, which must fall back
# past the corrupt checkpoint; and with drop-heartbeats under
# --enable-recovery, so that the rehoming meets the corrupt checkpoint.
#
# Environment (optional): CELLGAN (build/app/cellgan), BENCH_DIR (a new
# /tmp/cellgan-f3.XXXXXX).
set -uo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-f3.XXXXXX)}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "f3: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$DIR/env.txt"

config() {  # NAME: writes $DIR/NAME.yaml (output_dir $DIR/NAME), prints its path
  sed -e "s|^output_dir: .*|output_dir: $DIR/$1|" -e 's|^  generations: .*|  generations: 30|' \
      -e 's|^  batches_per_generation: .*|  batches_per_generation: 20|' \
      -e 's|^  score_samples: .*|  score_samples: 500|' \
      -e 's|^  final_samples: .*|  final_samples: 1000|' configs/ring-3x3.yaml > "$DIR/$1.yaml"
  printf 'checkpoint:\n  every: 5\n' >> "$DIR/$1.yaml"
  echo "$DIR/$1.yaml"
}
run() {  # NAME RECOVERY(yes|no) [cellgan train args...]: the exit code in $DIR/NAME.rc
  local name=$1 recovery=$2; shift 2
  local flags=(); [ "$recovery" = yes ] && flags+=(--enable-recovery)
  echo "f3: $name: mpirun ${flags[*]} -np 4 cellgan train $* ($(date +%T))" >&2
  timeout 120 mpirun $ROOT_FLAG "${flags[@]}" --oversubscribe --bind-to none -np 4 "$CELLGAN" train "$@" \
    >"$DIR/$name.stdout" 2>>"$DIR/$name.stderr"
  echo $? > "$DIR/$name.rc"
}
row() {  # NAME FAULT EVENTS-PATTERN: one Markdown row
  local name=$1 fault=$2 pattern=$3 rc score equal lines
  rc=$(cat "$DIR/$name.rc")
  score=$(/usr/bin/python3 -c 'import json, math, sys
try:
    s = json.load(open(sys.argv[1]))["scores"]
    finite = all(math.isfinite(v) for v in s.values())
    print("mode_tvd %.4f, fid %.4f (%s)" % (s["mode_tvd"], s["fid"], "finite" if finite else "NOT finite"))
except (OSError, KeyError, ValueError):
    print("no result")' "$DIR/$name/result.json")
  equal=no; cmp -s "$DIR/$name/ensemble.bin" "$DIR/none/ensemble.bin" && equal=yes
  lines=$(grep -E "$pattern" "$DIR/$name/events.log" | cut -d' ' -f2- | sed "s|$DIR/||g; s/|/\\\\|/g" \
          | awk '{printf "%s`%s`", (NR > 1 ? "<br>" : ""), $0}')
  echo "| \`$fault\` | $rc | $score | $equal | $lines |"
}

if [ -z "${F3_REPORT_ONLY:-}" ]; then  # F3_REPORT_ONLY=1 BENCH_DIR=DIR: the table of DIR's runs again
run none yes "$(config none)"
run nan yes "$(config nan)" --fault nan:cell=4,gen=10
run delay yes "$(config delay)" --fault delay:rank=2,gen=10,ms=20
run drop yes "$(config drop)" --fault drop-heartbeats:rank=2,gen=12
run corrupt yes "$(config corrupt)" --fault corrupt-checkpoint:gen=10
# A run ended at generation 12 (a kill under plain mpirun: 137) whose newest
# checkpoint (10) is corrupt; then the same command with --resume auto.
cfg=$(config corrupt-resume)
run corrupt-resume no "$cfg" --fault corrupt-checkpoint:gen=10 --fault kill:rank=2,gen=12
mv "$DIR/corrupt-resume.rc" "$DIR/corrupt-resume.first.rc"
run corrupt-resume no "$cfg" --resume auto
cfg=$(config corrupt-rehome)
run corrupt-rehome yes "$cfg" --fault corrupt-checkpoint:gen=10 --fault drop-heartbeats:rank=2,gen=12

fi
{
  echo "| fault | exit | final score (best ensemble) | ensemble.bin = no faults | events.log |"
  echo "| --- | --- | --- | --- | --- |"
  row none "(none)" "fault|lost|rehoming|dead"
  row nan "nan:cell=4,gen=10" "fault|non-finite|discarded"
  row delay "delay:rank=2,gen=10,ms=20" "fault|late|recovered"
  row drop "drop-heartbeats:rank=2,gen=12" "fault|late|dead|lost|killed|rehoming"
  row corrupt "corrupt-checkpoint:gen=10" "fault|checkpoint after generation 10 "
  row corrupt-resume "corrupt-checkpoint:gen=10 + kill:rank=2,gen=12 (plain mpirun, exit $(cat "$DIR/corrupt-resume.first.rc")), then --resume auto" \
    "fault|resum|checksum|fall|lost"
  row corrupt-rehome "corrupt-checkpoint:gen=10 + drop-heartbeats:rank=2,gen=12" \
    "fault|dead|lost|killed|rehoming|checksum|fall"
} | tee "$DIR/report.md"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$DIR/env.txt"
echo "f3: runs, logs and report.md in $DIR"

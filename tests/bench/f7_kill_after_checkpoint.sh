#!/usr/bin/env bash
# F7 (tests/bench/README.md): a worker killed right after a checkpoint.
# `configs/toy-2x2.yaml` (20 generations, checkpoint.every 5) under
# `cellgan launch`, with `--fault kill:rank=1,gen=N` for N one past a
# checkpoint (6, 11, 16), W = 1, 2, 3, with and without --recovery; the
# whole set F7_ROUNDS times. Per run, from events.log:
#   from   the generation the run went on from (the rehoming's or the
#          resume's; 0 when it started again)
#   lost   1 when that is older than N - 1, the checkpoint written just
#          before the kill
#   called the lines that call a live worker late, dead or lost (any rank
#          but 1, and rank 1 too once the run went on after the kill), and
#          "no worker is left" while one was (W > 1)
# and the exit code and whether ensemble.bin equals the uninterrupted run's.
#
#   tests/bench/f7_kill_after_checkpoint.sh
#
# Environment (all optional):
#   CELLGAN    cellgan binary               (build/app/cellgan)
#   F7_ROUNDS  repetitions of the 18 runs   (2)
#   BENCH_DIR  where runs and logs go       (a new /tmp/cellgan-f7.XXXXXX)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-f7.XXXXXX)}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "f7: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$DIR/env.txt"

timeout -k 10 300 "$CELLGAN" launch -w 2 configs/toy-2x2.yaml --set output_dir="$DIR/reference" \
  >"$DIR/reference.log" 2>&1 || { echo "f7: the uninterrupted run failed (see $DIR/reference.log)" >&2; exit 1; }

# The generation the run went on from after the kill: the first rehoming's or
# resume's (events.log), "-" when there was none.
went_on_from() {
  grep -m1 -oE 'rehoming: workers [0-9,]+ go on from generation [0-9]+|resuming after generation [0-9]+|no complete checkpoint: starting again from generation 0' \
    "$1" | grep -oE '[0-9]+$' || echo "-"
}
# Lines that call a live worker late, dead or lost: any rank but the killed
# rank 1 before the run went on without it, any rank after, and "no worker
# is left" when W > 1.
called_dead() {
  awk -v workers="$2" '
    /rehoming: workers|resuming after generation|no complete checkpoint: starting again/ { after = 1 }
    /the previous start ended/ { next }  # the resumed run quoting how the killed one ended
    match($0, /worker rank [0-9]+ (late|dead|is lost)/) {
      split(substr($0, RSTART, RLENGTH), w, " ")
      if (w[3] != 1 || after) n++
    }
    /no worker is left/ && workers > 1 { n++ }
    END { print n + 0 }' "$1"
}

printf 'round\tW\trecovery\tkill_gen\texit\tfrom\tlost\tcalled_dead\tskipped_incomplete\tensemble_same\tseconds\n' \
  > "$DIR/runs.tsv"
for round in $(seq "${F7_ROUNDS:-2}"); do
  for workers in 1 2 3; do
    for recovery in yes no; do
      for gen in 6 11 16; do
        run="$DIR/r$round-w$workers-$recovery-g$gen"
        flags=(-w "$workers"); [ "$recovery" = yes ] && flags+=(--recovery)
        began=$(date +%s.%N)
        rc=0
        timeout -k 10 300 "$CELLGAN" launch "${flags[@]}" configs/toy-2x2.yaml --set output_dir="$run" \
          --fault "kill:rank=1,gen=$gen" >"$run.log" 2>&1 || rc=$?
        seconds=$(echo "$(date +%s.%N) - $began" | bc)
        from=$(went_on_from "$run/events.log")
        lost=0; [ "$from" = "-" ] || [ "$from" -ge $((gen - 1)) ] || lost=1
        dead=$(called_dead "$run/events.log" "$workers")
        skipped=$(grep -c 'skipping checkpoint .*incomplete' "$run/events.log" || true)
        same=no; cmp -s "$run/ensemble.bin" "$DIR/reference/ensemble.bin" && same=yes
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\n' "$round" "$workers" "$recovery" "$gen" "$rc" \
          "$from" "$lost" "$dead" "$skipped" "$same" "$seconds" | tee -a "$DIR/runs.tsv"
      done
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$DIR/env.txt"
awk -F'\t' 'NR > 1 { n++; lost += $7; dead += ($8 > 0); calls += $8; ok += ($5 == 0 && $10 == "yes") }
  END { printf "f7: %d runs: %d finished with the uninterrupted ensemble.bin, %d checkpoints lost, %d runs that called a live worker dead (%d lines)\n", n, ok, lost, dead, calls }' \
  "$DIR/runs.tsv" | tee "$DIR/summary.txt"
echo "f7: runs and logs in $DIR"

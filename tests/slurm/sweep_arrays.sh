#!/usr/bin/env bash
# deploy/slurm/sweep.sh on the real local SLURM: a toy sweep of 1x1 and 2x2
# with W = 1 and 2 (3 runs; 1x1 cannot go to 2 workers) becomes one job
# array per W; every array task finishes with its results, and
# `cellgan sweep --collect` builds sweep.csv with a row per run, the plots
# and sweep.md from the run folders.
source "$(dirname "$0")/slurm_test_lib.sh"
out=$WORK/sweep
( cd "$WORK" && CELLGAN=$CELLGAN bash "$SOURCE/deploy/slurm/sweep.sh" --config "$TOY" --grids 1x1,2x2 --workers 1,2 \
    --set training.generations=2 --out "$out" ) > "$WORK/submit.out" 2>&1 \
  || { cat "$WORK/submit.out" >&2; fail "sweep.sh refused the sweep"; }
arrays=$(sed -n 's/^sweep.sh: W = [0-9]*: job array \([0-9]*\),.*/\1/p' "$WORK/submit.out")
[ "$(echo "$arrays" | grep -c .)" -eq 2 ] || { cat "$WORK/submit.out" >&2; fail "expected two job arrays, one per W"; }
JOBS+=($arrays)
deadline=$((SECONDS + 240))
while squeue -h -j "$(echo $arrays | tr ' ' ',')" 2>/dev/null | grep -q .; do
  [ "$SECONDS" -lt "$deadline" ] || { squeue >&2; fail "the arrays are still queued or running after 240 s"; }
  sleep 1
done
for run in "$out"/runs/*/; do
  [ -s "$run/result.json" ] || { cat "$out"/logs/* >&2 2>/dev/null; fail "$run: no result.json"; }
done
[ "$(ls -d "$out"/runs/*/ | wc -l)" -eq 3 ] || fail "expected 3 run folders, got $(ls "$out/runs")"
"$CELLGAN" sweep --collect "$out/runs" --out "$out" > "$WORK/collect.out" 2>&1 \
  || { cat "$WORK/collect.out" >&2; fail "cellgan sweep --collect failed"; }
[ "$(tail -n +2 "$out/sweep.csv" | grep -c .)" -eq 3 ] || { cat "$out/sweep.csv" >&2; fail "sweep.csv: expected 3 rows"; }
for f in sweep.md time.png speedup.png score.png phases.png; do [ -s "$out/$f" ] || fail "--collect wrote no $f"; done
# One run at a time (sweep.sh's default): no run overlapped another.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "overlaps") c = i } NR > 1 && $c != 0 { bad = 1 } END { exit bad || !c }' \
  "$out/sweep.csv" || { cat "$out/sweep.csv" >&2; fail "runs of the sweep overlapped in time"; }
echo "PASS: sweep.sh submitted one array per W to SLURM; 3 runs finished one at a time; --collect built sweep.csv, sweep.md and the plots"

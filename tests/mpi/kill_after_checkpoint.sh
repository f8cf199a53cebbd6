#!/usr/bin/env bash
# A worker killed right after a checkpoint (--fault kill:rank=1,gen=4 with
# checkpoint.every 3), W = 1, 2, 3, under `cellgan launch` with and without
# --recovery: every run goes on from that checkpoint (generation 3: the
# rehoming's or the resume's), skips none, calls no live worker late, dead
# or lost, and ends with the ensemble.bin of a run without the fault. The
# finished runs keep a manifest in every checkpoint folder.
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/generations: 4/generations: 7/' \
  's/heartbeat_interval_ms: 100/heartbeat_interval_ms: 100, late_after_ms: 400, dead_after_ms: 1500/')
printf 'checkpoint: {every: 3}\n' >> "$cfg"

# launch OUTPUT_DIR [ARGS...]: cellgan launch of $cfg into OUTPUT_DIR; its exit code.
launch() {
  local out=$1; shift
  set +e
  timeout -k 10 180 "$CELLGAN" launch "$cfg" --set output_dir="$out" "$@" >"$out.log" 2>&1
  local rc=$?
  set -e
  return $rc
}
# every_checkpoint_has_a_manifest RUN
every_checkpoint_has_a_manifest() {
  local folder
  for folder in "$1"/checkpoints/gen-*; do
    [ -e "$folder/manifest.json" ] || fail "$folder: a finished run left a checkpoint without manifest.json"
  done
}

rc=0; launch "$WORK/reference" -w 2 || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/reference.log" >&2; fail "the run without a fault: exit $rc"; }
every_checkpoint_has_a_manifest "$WORK/reference"

for workers in 1 2 3; do
  for recovery in --recovery ""; do
    run="$WORK/w$workers${recovery:+-recovery}"
    what="W=$workers${recovery:+ --recovery}"
    rc=0; launch "$run" -w "$workers" $recovery --fault kill:rank=1,gen=4 || rc=$?
    events="$run/events.log"
    [ "$rc" -eq 0 ] || { cat "$run.log" "$events" >&2; fail "$what: exit $rc"; }
    grep -q 'fault planned: kill worker rank 1 at the start of generation 4' "$events" \
      || { cat "$events" >&2; fail "$what: the kill was not planned"; }
    went_on=$(grep -m1 -oE 'rehoming: workers [0-9,]+ go on from generation [0-9]+|resuming after generation [0-9]+|no complete checkpoint: starting again from generation 0' "$events" || true)
    [ -n "$went_on" ] || { cat "$events" >&2; fail "$what: the run neither rehomed nor resumed"; }
    [ "${went_on##* }" -eq 3 ] || { cat "$events" >&2; fail "$what: went on from generation ${went_on##* }, not from the checkpoint of generation 3 ($went_on)"; }
    ! grep -q 'skipping checkpoint' "$events" || { cat "$events" >&2; fail "$what: a checkpoint was skipped"; }
    # Only rank 1 was killed: no other rank, and no rank of a later start, is called late, dead or lost.
    called=$(grep -v 'the previous start ended' "$events" \
      | awk '/rehoming: workers|resuming after generation/ { after = 1 }
             match($0, /worker rank [0-9]+ (late|dead|is lost)/) { split(substr($0, RSTART, RLENGTH), w, " "); if (w[3] != 1 || after) print }')
    [ -z "$called" ] || { cat "$events" >&2; fail "$what: a live worker was called late, dead or lost: $called"; }
    [ "$workers" -eq 1 ] || ! grep -q 'no worker is left' "$events" \
      || { cat "$events" >&2; fail "$what: 'no worker is left' while one was"; }
    cmp -s "$run/ensemble.bin" "$WORK/reference/ensemble.bin" || fail "$what: ensemble.bin differs from the run without the fault"
    every_checkpoint_has_a_manifest "$run"
    echo "$what: went on from generation 3 ($went_on)"
  done
done
echo "PASS: a kill right after the checkpoint of generation 3, W = 1, 2, 3, with and without --recovery: every run went on from it, no live worker called late, dead or lost, the uninterrupted ensemble.bin"

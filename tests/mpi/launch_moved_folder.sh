#!/usr/bin/env bash
# cellgan launch on a run folder that moved, and on folders it must refuse:
# a run stopped with exit 75 and copied elsewhere resumes there to the
# ensemble.bin of the same run resumed where it was, and events.log says
# where it was; every refused launch (another key changed, config.yaml
# gone, metrics.jsonl cut short, a device its master refuses after the
# ranks started) exits 2 and leaves the folder exactly as it was: no
# run.json rewritten, no events.log line, no run.lock.
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/generations: 4/generations: 60/')
printf 'checkpoint: {every: 4}\n' >> "$cfg"

# Every file's path, size, time and checksum, and every folder's path and time.
state() { (cd "$1" && find . -printf '%p %s %T@\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# refused WHAT ARGS...: the launch exits 2 with one line and changes nothing in $WORK/moved/run.
refused() {
  local what=$1; shift
  local before; before=$(state "$WORK/moved/run")
  local rc=0; launch "$@" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/err" >&2; fail "$what: expected exit 2, got $rc"; }
  [ "$(state "$WORK/moved/run")" = "$before" ] || { diff <(echo "$before") <(state "$WORK/moved/run") >&2 || true; \
    fail "$what: the refused launch changed the run folder"; }
}

# 1. A run stopped with exit 75 (Ctrl-C to the launcher), then copied.
"$CELLGAN" launch -w 2 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
for _ in $(seq 300); do grep -qs '"generation":6,' "$WORK/run/metrics.jsonl" && break; sleep 0.1; done
kill -INT "$launcher"
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 75 ] || { cat "$WORK/err" >&2; fail "Ctrl-C: expected exit 75, got $rc"; }
mkdir -p "$WORK/moved" && cp -a "$WORK/run" "$WORK/moved/run"
moved=(--resume auto --set output_dir="$WORK/moved/run")

# 2. Refusals, each leaving the folder as it was.
refused "another seed" "$cfg" "${moved[@]}" --set seed=8
grep -q "seed (the run's 7 vs 8" "$WORK/err" || { cat "$WORK/err" >&2; fail "the changed seed is not named"; }
! grep -q "mpirun" "$WORK/err" || fail "mpirun was started for a folder the launcher can refuse"
# A run.json left "running" (a master killed) and a master that refuses the
# device after the ranks started: the launcher writes nothing either.
sed -i 's/"status":"stopped"/"status":"running"/' "$WORK/moved/run/run.json"
refused "a device the master refuses" "$cfg" "${moved[@]}" --set runtime.device=cuda:1023
grep -q "cuda:1023" "$WORK/err" || { cat "$WORK/err" >&2; fail "the refused device is not named"; }
sed -i 's/"status":"running"/"status":"stopped"/' "$WORK/moved/run/run.json"
mv "$WORK/moved/run/config.yaml" "$WORK/config.yaml.kept"
refused "config.yaml gone" "$cfg" "${moved[@]}"
grep -q "'$WORK/moved/run' holds records of a run (checkpoints, metrics.jsonl, events.log, run.json" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "no line naming the folder and config.yaml"; }
refused "config.yaml gone, no --resume" "$cfg" --set output_dir="$WORK/moved/run"
! grep -q "mpirun" "$WORK/err" || fail "mpirun was started for a folder the launcher can refuse"
mv "$WORK/config.yaml.kept" "$WORK/moved/run/config.yaml"
cp "$WORK/moved/run/metrics.jsonl" "$WORK/metrics.kept"
head -n 4 "$WORK/metrics.kept" > "$WORK/moved/run/metrics.jsonl"
refused "metrics.jsonl cut short" "$cfg" "${moved[@]}"
grep -q "metrics.jsonl' holds generations 1..1 only" "$WORK/err" || { cat "$WORK/err" >&2; fail "no line naming the lines missing"; }
cp -p "$WORK/metrics.kept" "$WORK/moved/run/metrics.jsonl"
! grep -q "mpirun" "$WORK/err" || fail "mpirun was started for a folder the launcher can refuse"

# 3. The moved folder resumes where it is; the original where it was; the same bits.
rc=0; launch -w 1 "$cfg" "${moved[@]}" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "resuming the moved folder: exit $rc"; }
grep -q "the run's folder was at '$WORK/run' and goes on at '$WORK/moved/run'" "$WORK/moved/run/events.log" \
  || { cat "$WORK/moved/run/events.log" >&2; fail "events.log does not say where the run was"; }
rc=0; launch -w 2 "$cfg" --resume auto || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "resuming the unmoved folder: exit $rc"; }
cmp "$WORK/run/ensemble.bin" "$WORK/moved/run/ensemble.bin" || fail "the moved run's ensemble.bin differs"
echo "launch_moved_folder: ok"

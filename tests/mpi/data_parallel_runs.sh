#!/usr/bin/env bash
# layout data_parallel under mpirun: a toy run with W = 2 finishes for each
# all-reduce (ring, reduce_broadcast, mpi) with result.json, layout.json and
# a metrics line per generation; the same ring run again gives the same
# ensemble to the bit; `cellgan sample` reads its ensemble; WGAN-GP runs on
# three replicas with finite losses; mpi survives a killed worker.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$WORK/dp.yaml"
cat > "$SRC" <<'YAML'
seed: 4
output_dir: REPLACED
layout: data_parallel
data: {dataset: ring, toy_samples: 2000}
network: {kind: toy, latent_dim: 8, toy_hidden: 32}
grid: {rows: 1, cols: 1}
training: {generations: 3, batch_size: 32, batches_per_generation: 20, score_samples: 200, learning_rate: 1.0e-3}
evaluation: {final_samples: 1000}
runtime: {heartbeat_interval_ms: 100}
data_parallel: {allreduce: ring}
YAML
for kind in ring reduce_broadcast mpi; do
  cfg=$(make_config "$SRC" "$WORK/$kind" "s/allreduce: ring/allreduce: $kind/")
  run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "$kind exited non-zero"; }
  for f in result.json layout.json ensemble.bin samples.png; do
    [ -f "$WORK/$kind/$f" ] || fail "$kind wrote no $f"
  done
  grep -q "\"allreduce\": \"$kind\"" "$WORK/$kind/layout.json" || fail "$kind: layout.json does not say $kind"
  [ "$(wc -l < "$WORK/$kind/metrics.jsonl")" -eq 3 ] || fail "$kind: expected 3 metric lines"
  grep -q '"allreduce_bytes_per_step"' "$WORK/$kind/metrics.jsonl" || fail "$kind: no bytes per step in metrics.jsonl"
done
cfg=$(make_config "$SRC" "$WORK/ring-again")
run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "the second ring run exited non-zero"; }
cmp -s "$WORK/ring/ensemble.bin" "$WORK/ring-again/ensemble.bin" || fail "the same ring run gave another ensemble"
"$CELLGAN" sample --ensemble "$WORK/ring/ensemble.bin" -n 100 --out "$WORK/samples.npy" >"$WORK/stdout" 2>"$WORK/stderr" ||
  { cat "$WORK/stderr" >&2; fail "cellgan sample failed on a data_parallel run"; }
# WGAN-GP over three replicas (seed 000's ranks deadlocked and went NaN):
# it finishes, and every generator and critic loss is finite.
cfg=$(make_config "$SRC" "$WORK/wgan-gp" "s/learning_rate: 1.0e-3}/learning_rate: 1.0e-3, loss: wgan_gp, gp_lambda: 10, n_critic: 5}/")
run_cellgan 4 "$cfg" || { cat "$WORK/stderr" >&2; fail "wgan_gp over 3 replicas exited non-zero"; }
[ -f "$WORK/wgan-gp/result.json" ] || fail "wgan_gp: no result.json"
[ "$(wc -l < "$WORK/wgan-gp/metrics.jsonl")" -eq 3 ] || fail "wgan_gp: expected 3 metric lines"
if losses "$WORK/wgan-gp/metrics.jsonl" | grep -Eqi 'nan|inf|null'; then fail "wgan_gp: a loss that is not finite in metrics.jsonl"; fi
# A fault of a replica other than the first (which alone reports the
# generation's record) still reaches events.log.
cfg=$(make_config "$SRC" "$WORK/delayed")
run_cellgan 3 "$cfg" --fault delay:rank=2,gen=2,ms=1 || { cat "$WORK/stderr" >&2; fail "a delayed replica: exit non-zero"; }
grep -q "worker rank 2: fault delay: worker rank 2 slowed by 1 ms per batch from generation 2" "$WORK/delayed/events.log" \
  || { cat "$WORK/delayed/events.log" >&2; fail "the delay of worker rank 2 is not in events.log"; }
# A worker killed under --enable-recovery: the survivors abandon the
# MPI_Iallreduce under way and go on from the checkpoint over two workers.
cfg=$(make_config "$SRC" "$WORK/killed" "s/allreduce: ring/allreduce: mpi/" "s/generations: 3,/generations: 6,/" \
  "s/heartbeat_interval_ms: 100/heartbeat_interval_ms: 100, late_after_ms: 400, dead_after_ms: 1500/")
echo "checkpoint: {every: 2}" >> "$cfg"
set +e
timeout 300 "$MPIEXEC" $ROOT_FLAG --enable-recovery --oversubscribe --bind-to none -np 4 "$CELLGAN" train "$cfg" \
  --fault kill:rank=3,gen=4 >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$WORK/stderr" >&2; fail "mpi with a killed worker under --enable-recovery: exit $rc"; }
[ -f "$WORK/killed/result.json" ] || fail "mpi with a killed worker: no result.json"
grep -q "rehoming: workers 1,2 go on from generation 2" "$WORK/killed/events.log" \
  || { cat "$WORK/killed/events.log" >&2; fail "mpi with a killed worker: no rehoming from generation 2"; }
echo "PASS: ring, reduce_broadcast and mpi runs finish; a ring run repeats to the bit; sample reads it; wgan_gp is finite on 3 replicas; rank 2's fault is in events.log; mpi survives a killed worker"


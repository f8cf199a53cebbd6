#!/usr/bin/env bash
# data_parallel.shard_optimizer (ZeRO stage 1) in real jobs, toy replicas
# over the ring: W = 3 sharded gives the ensemble of W = 3 unsharded to the
# bit, and says each worker keeps a third of Adam's moments; a sharded run
# whose worker 3 is killed after the checkpoint of generation 2 goes on
# over two workers from that checkpoint (every shard gathered into it) and
# ends with the ensemble of the unsharded run that suffers the same. The
# hidden layers are wide enough that each worker's moments are a message
# above shared memory's eager limit (4 KB): a worker killed before worker 1
# has taken them would leave that checkpoint incomplete.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$WORK/dp.yaml"
cat > "$SRC" <<'YAML'
seed: 6
output_dir: REPLACED
layout: data_parallel
data: {dataset: ring, toy_samples: 2000}
network: {kind: toy, latent_dim: 8, toy_hidden: 256}
grid: {rows: 1, cols: 1}
training: {generations: 4, batch_size: 16, batches_per_generation: 10, score_samples: 200, learning_rate: 1.0e-3}
evaluation: {final_samples: 500}
runtime: {heartbeat_interval_ms: 100, late_after_ms: 400, dead_after_ms: 1500}
checkpoint: {every: 2}
data_parallel: {allreduce: ring, shard_optimizer: SHARDED}
YAML
for sharded in true false; do
  cfg=$(make_config "$SRC" "$WORK/whole-$sharded" "s/SHARDED/$sharded/")
  run_cellgan 4 "$cfg" || { cat "$WORK/stderr" >&2; fail "shard_optimizer $sharded exited non-zero"; }
  grep -q "\"shard_optimizer\": $sharded" "$WORK/whole-$sharded/layout.json" || fail "layout.json does not say shard_optimizer $sharded"
done
cmp -s "$WORK/whole-true/ensemble.bin" "$WORK/whole-false/ensemble.bin" || fail "sharded and unsharded W = 3 differ"
whole=$(grep -oE '"adam_state_bytes": *[0-9.]+' "$WORK/whole-false/metrics.jsonl" | tail -1 | grep -oE '[0-9]+' | head -1)
third=$(grep -oE '"adam_state_bytes": *[0-9.]+' "$WORK/whole-true/metrics.jsonl" | tail -1 | grep -oE '[0-9]+' | head -1)
[ -n "$whole" ] && [ -n "$third" ] || fail "no adam_state_bytes in metrics.jsonl"
[ $((third * 3)) -le $((whole + 1024)) ] && [ $((third * 3)) -ge $((whole - 1024)) ] \
  || fail "worker 0 keeps $third bytes of Adam's moments sharded, $whole unsharded: not a third"
for sharded in true false; do
  cfg=$(make_config "$SRC" "$WORK/killed-$sharded" "s/SHARDED/$sharded/")
  set +e
  timeout -k 10 300 "$CELLGAN" launch "$cfg" -w 3 --recovery --fault kill:rank=3,gen=3 \
    >"$WORK/killed-$sharded.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$WORK/killed-$sharded.log" >&2; fail "shard_optimizer $sharded with a killed worker: exit $rc"; }
  grep -qE "rehoming: workers 1,2 go on from generation 2|resuming after generation 2" "$WORK/killed-$sharded/events.log" \
    || { cat "$WORK/killed-$sharded/events.log" >&2; fail "shard_optimizer $sharded: did not go on from generation 2"; }
done
cmp -s "$WORK/killed-true/ensemble.bin" "$WORK/killed-false/ensemble.bin" \
  || fail "after the kill, the sharded run (from its gathered checkpoint, over 2 workers) differs from the unsharded one"
echo "PASS: sharded W = 3 equals unsharded to the bit with a third of Adam's moments per worker; after a kill both go on over 2 workers from generation 2 to the same ensemble"

#!/usr/bin/env bash
# data_parallel.hierarchy under mpirun, W = 4 toy replicas: two_level as
# 2 nodes × 2 ranks (ranks_per_node: 2) finishes over ring and over
# reduce_broadcast, says it sees 2 nodes and what its leaders sent across,
# and repeats to the bit; over mpi (the leaders' own communicator) it gives
# reduce_broadcast's ensemble to the bit (two leaders: one float32 addition
# per value either way), runs with bf16 on the wire, and survives a lost
# leader under --enable-recovery (the survivors make the leaders'
# communicator again over their own LOCAL); two_level over one node (ranks_per_node: 4) gives
# flat reduce_broadcast's ensemble to the bit; auto on this one host stays
# flat and says 1 node.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$WORK/dp.yaml"
cat > "$SRC" <<'YAML'
seed: 5
output_dir: REPLACED
layout: data_parallel
data: {dataset: ring, toy_samples: 2000}
network: {kind: toy, latent_dim: 8, toy_hidden: 32}
grid: {rows: 1, cols: 1}
training: {generations: 2, batch_size: 16, batches_per_generation: 10, score_samples: 200, learning_rate: 1.0e-3}
evaluation: {final_samples: 500}
runtime: {heartbeat_interval_ms: 100}
data_parallel: {allreduce: ring, hierarchy: two_level, ranks_per_node: 2}
YAML
for kind in ring reduce_broadcast; do
  cfg=$(make_config "$SRC" "$WORK/$kind" "s/allreduce: ring/allreduce: $kind/")
  run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "two_level $kind exited non-zero"; }
  [ -f "$WORK/$kind/ensemble.bin" ] || fail "two_level $kind wrote no ensemble.bin"
  grep -Eq '"nodes": *2(\.0)?[,}]' "$WORK/$kind/metrics.jsonl" || fail "two_level $kind: metrics.jsonl does not say 2 nodes"
  grep -Eq '"across_node_bytes_per_step": *[1-9]' "$WORK/$kind/metrics.jsonl" \
    || fail "two_level $kind: no bytes across nodes in metrics.jsonl"
  grep -q "4 workers on 2 node(s), all-reduce $kind two_level" "$WORK/$kind/events.log" "$WORK/stderr" \
    || fail "two_level $kind: the hierarchy is not logged"
done
cfg=$(make_config "$SRC" "$WORK/mpi" "s/allreduce: ring/allreduce: mpi/")
run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "two_level mpi exited non-zero"; }
grep -q "4 workers on 2 node(s), all-reduce mpi two_level" "$WORK/mpi/events.log" "$WORK/stderr" \
  || fail "two_level mpi: the hierarchy is not logged"
grep -Eq '"across_node_bytes_per_step": *[1-9]' "$WORK/mpi/metrics.jsonl" || fail "two_level mpi: no bytes across nodes"
cmp -s "$WORK/mpi/ensemble.bin" "$WORK/reduce_broadcast/ensemble.bin" \
  || fail "two_level mpi over 2 nodes differs from two_level reduce_broadcast"
cfg=$(make_config "$SRC" "$WORK/mpi-bf16" "s/allreduce: ring/allreduce: mpi, compression: bf16/")
run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "two_level mpi with bf16 exited non-zero"; }
[ -f "$WORK/mpi-bf16/ensemble.bin" ] || fail "two_level mpi with bf16 wrote no ensemble.bin"
cmp -s "$WORK/mpi-bf16/ensemble.bin" "$WORK/mpi/ensemble.bin" && fail "bf16 on the wire changed nothing"
# Worker rank 3, node 2's leader, killed: the sum under way on the leaders'
# communicator is abandoned; workers 1, 2, 4 go on as 2 nodes (2 + 1), their
# leaders on a communicator made anew.
cfg=$(make_config "$SRC" "$WORK/killed" "s/allreduce: ring/allreduce: mpi/" "s/generations: 2,/generations: 6,/" \
  "s/heartbeat_interval_ms: 100/heartbeat_interval_ms: 100, late_after_ms: 400, dead_after_ms: 1500/")
echo "checkpoint: {every: 2}" >> "$cfg"
set +e
timeout 300 "$MPIEXEC" $ROOT_FLAG --enable-recovery --oversubscribe --bind-to none -np 5 "$CELLGAN" train "$cfg" \
  --fault kill:rank=3,gen=4 >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$WORK/stderr" >&2; fail "two_level mpi with a killed leader under --enable-recovery: exit $rc"; }
grep -q "rehoming: workers 1,2,4 go on from generation 2" "$WORK/killed/events.log" \
  || { cat "$WORK/killed/events.log" >&2; fail "two_level mpi with a killed leader: no rehoming from generation 2"; }
last=$(tail -1 "$WORK/killed/metrics.jsonl")
for want in '"generation": *6[,}]' '"workers": *3(\.0)?[,}]' '"nodes": *2(\.0)?[,}]' '"across_node_bytes_per_step": *[1-9]'; do
  grep -Eq "$want" <<<"$last" || fail "two_level mpi after the rehoming: no $want in the last metrics line: $last"
done
cfg=$(make_config "$SRC" "$WORK/ring-again")
run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "the second two_level run exited non-zero"; }
cmp -s "$WORK/ring/ensemble.bin" "$WORK/ring-again/ensemble.bin" || fail "the same two_level run gave another ensemble"
cfg=$(make_config "$SRC" "$WORK/one-node" "s/ranks_per_node: 2/ranks_per_node: 4/")
run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "two_level on one node exited non-zero"; }
cfg=$(make_config "$SRC" "$WORK/flat-rb" "s/allreduce: ring, hierarchy: two_level, ranks_per_node: 2/allreduce: reduce_broadcast, hierarchy: flat/")
run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "flat reduce_broadcast exited non-zero"; }
cmp -s "$WORK/one-node/ensemble.bin" "$WORK/flat-rb/ensemble.bin" \
  || fail "two_level over one node differs from flat reduce_broadcast"
cfg=$(make_config "$SRC" "$WORK/auto" "s/hierarchy: two_level, ranks_per_node: 2/hierarchy: auto/")
run_cellgan 5 "$cfg" || { cat "$WORK/stderr" >&2; fail "auto exited non-zero"; }
grep -Eq '"nodes": *1(\.0)?[,}]' "$WORK/auto/metrics.jsonl" || fail "auto on one host: metrics.jsonl does not say 1 node"
if grep -q across_node "$WORK/auto/metrics.jsonl"; then fail "auto on one host went two_level"; fi
echo "PASS: two_level over 2 nodes × 2 ranks runs over ring, reduce_broadcast and mpi (reduce_broadcast's bits; bf16 too; a lost leader survived) and repeats to the bit; over one node it is flat reduce_broadcast to the bit; auto on one host is flat"

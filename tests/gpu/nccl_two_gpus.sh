#!/usr/bin/env bash
# allreduce nccl over two workers on two GPUs (CTest label gpu; skipped,
# exit 77, without two GPUs or without NCCL in this build): the job ends,
# and gives the ensemble of allreduce ring to the bit — with two replicas
# every order of addition rounds alike, a + b = b + a. So does nccl with
# hierarchy two_level: as one node of two GPUs (ncclReduce, then
# ncclBroadcast), and as two nodes of one (no NCCL communicator: the two
# leaders' host copies summed by across_nodes ring, and by mpi).
source "$(dirname "$0")/../mpi/mpi_test_lib.sh"
# The GPUs this process sees: nvidia-smi's, fewer where CUDA_VISIBLE_DEVICES
# lists fewer (CUDA stops at the first entry that is not a device).
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
  listed=$(echo "$CUDA_VISIBLE_DEVICES" | awk -F, '{n = 0; for (i = 1; i <= NF; i++) { if ($i == "" || $i ~ /^ *-/) break; n++ } print n}')
  [ "${listed:-0}" -lt "${gpus:-0}" ] && gpus=$listed
fi
[ "${gpus:-0}" -ge 2 ] || { echo "SKIP: fewer than two GPUs are visible"; exit 77; }
SRC="$WORK/dp.yaml"
cat > "$SRC" <<'YAML'
seed: 4
output_dir: REPLACED
layout: data_parallel
data: {dataset: ring, toy_samples: 2000}
network: {kind: toy, latent_dim: 8, toy_hidden: 32}
grid: {rows: 1, cols: 1}
training: {generations: 2, batch_size: 32, batches_per_generation: 20, score_samples: 200, learning_rate: 1.0e-3}
evaluation: {final_samples: 500}
runtime: {heartbeat_interval_ms: 100, device: cuda}
data_parallel: {allreduce: KIND}
YAML
for kind in nccl ring "nccl, hierarchy: two_level, ranks_per_node: 2" "nccl, hierarchy: two_level, ranks_per_node: 1" \
            "nccl, hierarchy: two_level, ranks_per_node: 1, across_nodes: mpi"; do
  name=$(tr -c 'a-z0-9\n' '_' <<<"$kind")
  cfg=$(make_config "$SRC" "$WORK/$name" "s/KIND/$kind/")
  run_cellgan 3 "$cfg" || {
    grep -q "built without NCCL" "$WORK/stderr" && { echo "SKIP: this build has no NCCL"; exit 77; }
    cat "$WORK/stderr" >&2; fail "allreduce $kind on two GPUs exited non-zero"
  }
  [ "$name" = ring ] || [ "$name" = nccl ] || cmp -s "$WORK/$name/ensemble.bin" "$WORK/ring/ensemble.bin" \
    || fail "allreduce $kind and ring differ over two replicas"
done
grep -q '"cuda:1"' "$WORK/nccl/result.json" || fail "the second worker did not run on cuda:1: $(cat "$WORK/nccl/result.json")"
cmp -s "$WORK/nccl/ensemble.bin" "$WORK/ring/ensemble.bin" || fail "nccl and ring differ over two replicas"
echo "PASS: allreduce nccl over two GPUs, flat and two_level (one node of two, two nodes of one), ends with the ring's ensemble"

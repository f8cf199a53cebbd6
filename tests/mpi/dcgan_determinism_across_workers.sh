#!/usr/bin/env bash
# The convolutional kinds train as stacked networks (worker/lockstep_training.h):
# a 2x2 dcgan run (population 2, so members play copies of the opponents
# they pick; dropout, batch norm, the R1 penalty) and a 2x2 sngan critic
# run (spectral norm, WGAN-GP) and a 2x2 dcgan_conditional run (population
# 2: labels in each cell's latent vectors and real rows, dropout, batch
# norm), each with W = 1, 2 and 4 workers, end identical to the bit:
# metrics.jsonl losses and the final ensemble.
# Another seed changes the result.
# Skipped (77) without data/mnist and its classifier (deploy/prepare-data.sh).
source "$(dirname "$0")/mpi_test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
mnist="$root/data/mnist"
if [ ! -f "$mnist/classifier.pt" ] || [ ! -f "$mnist/train-images-idx3-ubyte" ]; then
  echo "SKIP: no MNIST with classifier.pt in $mnist"; exit 77
fi
small=('s/generations: 100/generations: 2/' 's/batches_per_generation: 0 .*/batches_per_generation: 3/'
       's/batch_size: 100/batch_size: 16/' 's/final_samples: 10000/final_samples: 100/'
       's/score_samples: 1000/score_samples: 50/' 's/fitness_samples: 1000/fitness_samples: 50/'
       "s|^  dataset: mnist|  dataset: mnist\n  path: $mnist|"
       "s|^evaluation:|evaluation:\n  classifier: $mnist/classifier.pt|")
declare -A KIND_EDITS=([dcgan]='s/population_size: 1/population_size: 2\n  r1_penalty: 1.0/'
                       [sngan]='s/loss: bce/loss: wgan_gp/'
                       [dcgan_conditional]='s/population_size: 1/population_size: 2/')
for kind in dcgan sngan dcgan_conditional; do
  for w in 1 2 4; do
    cfg=$(make_config "$root/configs/mnist-2x2.yaml" "$WORK/$kind-w$w" "${small[@]}" "s/kind: mlp/kind: $kind/" \
      "${KIND_EDITS[$kind]}")
    run_cellgan $((w + 1)) "$cfg" || { cat "$WORK/stderr" >&2; fail "$kind W=$w exited non-zero"; }
    [ "$(wc -l < "$WORK/$kind-w$w/metrics.jsonl")" -eq 8 ] || fail "$kind W=$w: expected 8 metric lines"
    losses "$WORK/$kind-w$w/metrics.jsonl" > "$WORK/$kind-w$w.losses"
  done
  for w in 2 4; do
    cmp -s "$WORK/$kind-w1.losses" "$WORK/$kind-w$w.losses" ||
      { diff "$WORK/$kind-w1.losses" "$WORK/$kind-w$w.losses" >&2; fail "$kind losses differ: W=1 vs W=$w"; }
    cmp -s "$WORK/$kind-w1/ensemble.bin" "$WORK/$kind-w$w/ensemble.bin" || fail "$kind ensembles differ: W=1 vs W=$w"
  done
done
cfg=$(make_config "$root/configs/mnist-2x2.yaml" "$WORK/seed2" "${small[@]}" 's/kind: mlp/kind: dcgan/' \
  "${KIND_EDITS[dcgan]}" 's/^seed: 1/seed: 2/')
run_cellgan 2 "$cfg" || fail "seed 2 run failed"
cmp -s "$WORK/dcgan-w1/ensemble.bin" "$WORK/seed2/ensemble.bin" && fail "seed 2 gave the same ensemble as seed 1"
echo "PASS: dcgan, sngan and dcgan_conditional, W=1,2,4 identical; another seed differs"

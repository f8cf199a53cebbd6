#!/usr/bin/env bash
# Benchmarks E1 and E2 (issue 31), in one run on one worker:
#   E1  evaluation's share of a cell-generation on configs/mnist-2x2.yaml
#       (phase seconds from metrics.jsonl, generation 1 left out as warm-up);
#   E2  seconds per cell-generation against the GEMM limit of the same
#       cell-generation (bench_gemm_limit: one thread's sgemm on the MLP's
#       products), measured right after, on the same machine.
# Builds nothing. Run it on idle cores.
# Environment (all optional): CELLGAN (build/app/cellgan), GEMM_LIMIT
# (build/tests/bench/bench_gemm_limit), BENCH_GENERATIONS (6), BENCH_DIR (a new
# /tmp/cellgan-e.XXXXXX), BENCH_CONFIG (configs/mnist-2x2.yaml).
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
GEMM_LIMIT=${GEMM_LIMIT:-build/tests/bench/bench_gemm_limit}
GENERATIONS=${BENCH_GENERATIONS:-6}
CONFIG=${BENCH_CONFIG:-configs/mnist-2x2.yaml}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-e.XXXXXX)}
for exe in "$CELLGAN" "$GEMM_LIMIT"; do
  [ -x "$exe" ] || { echo "e_evaluation: $exe: not an executable (build it first)" >&2; exit 2; }
done
[ "$GENERATIONS" -ge 2 ] || { echo "e_evaluation: BENCH_GENERATIONS must be >= 2 (generation 1 is warm-up)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
mkdir -p "$DIR"
sed -e "s|^output_dir: .*|output_dir: $DIR/run|" -e "s|^  generations: .*|  generations: $GENERATIONS|" "$CONFIG" > "$DIR/run.yaml"
rm -rf "$DIR/run"
mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 2 "$CELLGAN" train "$DIR/run.yaml" > "$DIR/run.out" 2> "$DIR/run.log"
"$GEMM_LIMIT" > "$DIR/gemm.txt"
python3 - "$DIR/run/metrics.jsonl" "$DIR/gemm.txt" "$(uptime)" <<'EOF'
import json, re, sys
phases, cells = {}, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["generation"] == 1:
        continue
    cells += 1
    for k, v in r["seconds"].items():
        phases[k] = phases.get(k, 0.0) + v
busy = sum(v for k, v in phases.items() if k != "idle")
per_cell = busy / cells
limit = float(re.search(r"GEMM limit: ([\d.]+) s", open(sys.argv[2]).read()).group(1))
print(f"cell-generations measured: {cells}; load: {sys.argv[3].strip()}")
print("| phase | share |\n| --- | --- |")
for k, v in sorted(phases.items(), key=lambda kv: -kv[1]):
    print(f"| {k} | {100 * v / busy:.1f}% |")
print(f"\nE1 evaluate: {100 * phases.get('evaluate', 0) / busy:.1f}% of a cell-generation (target <= 15%)")
print(f"E2 {per_cell:.3f} s per cell-generation, GEMM limit {limit:.3f} s: {per_cell / limit:.2f}x (target <= 1.3x)")
EOF

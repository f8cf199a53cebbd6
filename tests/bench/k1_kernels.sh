#!/usr/bin/env bash
# K1 (docs/results.md): what the OpenBLAS kernels cellgan chooses are worth.
# bench_gemm_limit's GFLOP/s and the quickstart's seconds per generation
# (configs/quickstart.yaml under `cellgan launch -w 2`), on
#   auto      OPENBLAS_CORETYPE unset: the kernels cellgan chooses
#   Prescott  OpenBLAS's generic kernels, where 0.3.21 falls back on CPUs
#             newer than it
#   Haswell   AVX2 kernels (what some machines' environment pins)
# alternated, K1_ROUNDS times, so that load on shared cores hits all alike.
# Seconds per generation: from the master's first "generation g/G" line to
# its last. Prints a Markdown table (also in $K1_DIR/k1.md).
#
# Needs: deploy/build.sh cellgan bench_gemm_limit; deploy/prepare-data.sh.
# Environment (optional): K1_ROUNDS (2), K1_GENERATIONS (6), K1_DIR (a new /tmp/cellgan-k1.XXXXXX)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
BENCH=${BENCH:-build/tests/bench/bench_gemm_limit}
ROUNDS=${K1_ROUNDS:-2}
GENERATIONS=${K1_GENERATIONS:-6}
DIR=${K1_DIR:-$(mktemp -d /tmp/cellgan-k1.XXXXXX)}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
unset CELLGAN_BLAS_CHOSEN
mkdir -p "$DIR"

# The kernels cellgan chooses here: OpenBLAS names its load's (one, after the re-exec).
chosen=$(env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 "$CELLGAN" --help 2>&1 >/dev/null | sed -n 's/^Core: //p' | tail -1)
echo "k1: cellgan chooses $chosen here; OpenBLAS alone picks $(env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 \
  "$BENCH" --batches 1 2>&1 >/dev/null | sed -n 's/^Core: //p' | tail -1); load $(cut -d' ' -f1-3 /proc/loadavg)" \
  | tee "$DIR/k1.md"

# on_kernels VARIANT CMD...: CMD with OPENBLAS_CORETYPE unset (auto) or set to VARIANT.
on_kernels() {
  local variant=$1; shift
  if [ "$variant" = auto ]; then env -u OPENBLAS_CORETYPE "$@"; else OPENBLAS_CORETYPE=$variant "$@"; fi
}

: > "$DIR/raw.tsv"
for round in $(seq "$ROUNDS"); do
  for variant in auto Prescott Haswell; do
    kernels=$([ "$variant" = auto ] && echo "$chosen" || echo "$variant")
    gflops=$(OPENBLAS_CORETYPE=$kernels "$BENCH" | sed -n 's/^GEMM limit: .* at \([0-9.]*\) GFLOP\/s)$/\1/p')
    run="$DIR/run-$variant-$round"
    on_kernels "$variant" "$CELLGAN" launch -w 2 configs/quickstart.yaml --set "output_dir=$run" \
      --set "training.generations=$GENERATIONS" > "$DIR/$variant-$round.log" 2>&1 \
      || { tail -5 "$DIR/$variant-$round.log" >&2; echo "k1: the $variant run failed" >&2; exit 1; }
    grep -q "\"master\": \"OpenBLAS $kernels\"" "$run/result.json" \
      || { echo "k1: the $variant run did not compute with $kernels kernels" >&2; exit 1; }
    spg=$(sed -n 's/.*generation \([0-9]*\)\/[0-9]*: .*, \([0-9.]*\) s elapsed.*/\1 \2/p' "$DIR/$variant-$round.log" \
      | awk 'NR == 1 { g = $1; t = $2 } END { if (NR > 1) printf "%.2f", ($2 - t) / ($1 - g) }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$variant" "$kernels" "$round" "$gflops" "$spg" | tee -a "$DIR/raw.tsv"
  done
done

awk -F'\t' '
  { n[$1]++; k[$1] = $2; g[$1] = g[$1] (n[$1] > 1 ? ", " : "") $4; s[$1] = s[$1] (n[$1] > 1 ? ", " : "") $5
    gs[$1] += $4; ss[$1] += $5 }
  END {
    print "\n| kernels | bench_gemm_limit GFLOP/s | vs generic | quickstart s per generation | vs generic |"
    print "| --- | --- | ---: | --- | ---: |"
    split("auto Prescott Haswell", order, " ")
    for (i = 1; i <= 3; i++) {
      v = order[i]; name = (v == "auto" ? "`" k[v] "` (chosen, `OPENBLAS_CORETYPE` unset)" : "`" v "`")
      printf "| %s | %s | %.1fx | %s | %.1fx |\n", name, g[v], gs[v] / gs["Prescott"], s[v], ss["Prescott"] / ss[v]
    }
  }' "$DIR/raw.tsv" | tee -a "$DIR/k1.md"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$DIR/k1.md"

#!/usr/bin/env bash
# F1 (tests/bench/README.md): 10 trials of a 3x3 toy ring run with W = 3 under
# mpirun --enable-recovery, each killing one worker with kill -9 PID at a
# seeded random moment (start-up, training, a checkpoint write, the final
# gather), after an uninterrupted reference run. fault_trials.py does the
# work and prints the Markdown table (also $DIR/report.md).
#
# Environment (all optional):
#   CELLGAN       cellgan binary                   (build/app/cellgan)
#   F_TRIALS      trials                           (10)
#   F_SEED        seed of the trials' RNG          (1)
#   F_GENERATIONS generations of the toy run       (60: about 12 s on 2 cores)
#   F_EVERY       checkpoint.every                 (5)
#   BENCH_DIR     where runs and logs go           (a new /tmp/cellgan-f1.XXXXXX)
set -euo pipefail
cd "$(dirname "$0")/../.."
SIGNAL=${F_SIGNAL:-kill}
CELLGAN=${CELLGAN:-build/app/cellgan}
DIR=${BENCH_DIR:-$(mktemp -d "/tmp/cellgan-f1-$SIGNAL.XXXXXX")}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "f1: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1

# configs/ring-3x3.yaml made short: 20 batches per generation, smaller
# scoring samples, checkpoints every F_EVERY; the runtime keys keep their
# defaults (heartbeat 500 ms, late 2 s, dead 5 s).
sed -e "s|^  generations: .*|  generations: ${F_GENERATIONS:-60}|" \
    -e 's|^  batches_per_generation: .*|  batches_per_generation: 20|' \
    -e 's|^  score_samples: .*|  score_samples: 500|' \
    -e 's|^  final_samples: .*|  final_samples: 1000|' configs/ring-3x3.yaml > "$DIR/base.yaml"
printf 'checkpoint:\n  every: %s\n' "${F_EVERY:-5}" >> "$DIR/base.yaml"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$DIR/env.txt"
/usr/bin/python3 tests/bench/fault_trials.py --signal "$SIGNAL" --config "$DIR/base.yaml" --out "$DIR" \
  --trials "${F_TRIALS:-10}" --seed "${F_SEED:-1}" --workers 3 --cellgan "$CELLGAN"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$DIR/env.txt"
echo "f1: runs, logs and report.md in $DIR"

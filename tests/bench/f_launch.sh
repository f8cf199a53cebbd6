#!/usr/bin/env bash
# F1', F2', F5 and F6 (tests/bench/README.md): trials of a 3x3 toy ring run
# with W = 3 under `cellgan launch --recovery`, each hitting the job at a
# moment drawn uniformly from the launch to the end (launch_trials.py).
#
#   tests/bench/f_launch.sh [MODE...]     (default: kill stop two-kills master-kill)
#
# Environment (all optional):
#   CELLGAN        cellgan binary                 (build/app/cellgan)
#   F_TRIALS       trials per mode                (20 kill, 20 stop, 10 two-kills, 5 master-kill)
#   F_SEED         seed of the trials' RNG        (1)
#   F_GENERATIONS  generations of the toy run     (40)
#   F_EVERY        checkpoint.every               (5)
#   F_STALL        cellgan launch --stall-timeout (15)
#   BENCH_DIR      where runs and logs go         (a new /tmp/cellgan-f-launch.XXXXXX)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-f-launch.XXXXXX)}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "f_launch: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
sed -e "s|^  generations: .*|  generations: ${F_GENERATIONS:-40}|" \
    -e 's|^  batches_per_generation: .*|  batches_per_generation: 20|' \
    -e 's|^  score_samples: .*|  score_samples: 500|' \
    -e 's|^  final_samples: .*|  final_samples: 1000|' configs/ring-3x3.yaml > "$DIR/base.yaml"
printf 'checkpoint:\n  every: %s\n' "${F_EVERY:-5}" >> "$DIR/base.yaml"
modes=("$@"); [ ${#modes[@]} -gt 0 ] || modes=(kill stop two-kills master-kill)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$DIR/env.txt"
for mode in "${modes[@]}"; do
  case $mode in kill|stop) n=20 ;; two-kills) n=10 ;; master-kill) n=5 ;; *) echo "f_launch: unknown mode $mode" >&2; exit 2 ;; esac
  /usr/bin/python3 tests/bench/launch_trials.py --mode "$mode" --config "$DIR/base.yaml" --out "$DIR/$mode" \
    --trials "${F_TRIALS:-$n}" --seed "${F_SEED:-1}" --workers 3 --stall-timeout "${F_STALL:-15}" --cellgan "$CELLGAN"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$DIR/env.txt"
echo "f_launch: runs, logs and report.md per mode in $DIR"

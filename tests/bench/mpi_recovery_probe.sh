#!/usr/bin/env bash
# Runs mpi_recovery_probe.c (see there) TRIALS times under
# mpirun --enable-recovery -np 4, killing rank 1 with kill -9 one second
# after it starts; a trial still running 10 s after the kill is "hung" (its
# processes are then killed by PID). Then once without a kill, rank 0
# returning 3, under --enable-recovery and under plain mpirun.
#   bash tests/bench/mpi_recovery_probe.sh [TRIALS (10)] [BYTES (0)]
# NOFINALIZE=1 in the environment: the survivors leave without MPI_Finalize.
set -uo pipefail
TRIALS=${1:-10}
BYTES=${2:-0}
DIR=$(mktemp -d /tmp/cellgan-mpi-probe.XXXXXX)
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
export OMPI_MCA_mpi_yield_when_idle=1
mpicc -O1 -o "$DIR/probe" "$(dirname "$0")/mpi_recovery_probe.c" || exit 2
for t in $(seq "$TRIALS"); do
  mpirun $ROOT_FLAG ${NOFINALIZE:+-x NOFINALIZE} --enable-recovery --oversubscribe --bind-to none -np 4 "$DIR/probe" "$BYTES" \
    >"$DIR/out" 2>"$DIR/err" &
  job=$!
  until grep -q "rank 1 pid" "$DIR/out" 2>/dev/null; do sleep 0.05; done
  sleep 1
  kill -9 "$(sed -n 's/^rank 1 pid //p' "$DIR/out")"
  for _ in $(seq 20); do kill -0 "$job" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$job" 2>/dev/null; then
    echo "trial $t: hung in MPI_Finalize ($(grep -c finalized "$DIR/err") of 3 survivors through)"
    for p in $(sed -n 's/^rank [023] pid //p' "$DIR/out") "$job"; do kill -9 "$p" 2>/dev/null; done
    wait "$job" 2>/dev/null
  else
    wait "$job"; echo "trial $t: mpirun exit $?"
  fi
done
RC0=3 NOKILL=1 timeout 30 mpirun $ROOT_FLAG -x RC0 -x NOKILL --enable-recovery --oversubscribe --bind-to none -np 4 \
  "$DIR/probe" 0 >/dev/null 2>&1
echo "no kill, rank 0 returns 3, --enable-recovery: mpirun exit $?"
RC0=3 NOKILL=1 timeout 30 mpirun $ROOT_FLAG -x RC0 -x NOKILL --oversubscribe --bind-to none -np 4 "$DIR/probe" 0 \
  >/dev/null 2>&1
echo "no kill, rank 0 returns 3, plain mpirun: mpirun exit $?"
rm -rf "$DIR"

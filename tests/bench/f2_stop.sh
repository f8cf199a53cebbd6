#!/usr/bin/env bash
# F2 (tests/bench/README.md): the trials of F1 (f1_kill.sh, the same
# settings and environment) with SIGSTOP instead of SIGKILL: the master must
# declare the stopped worker dead and kill it by PID. Any process of a trial
# still there when its mpirun has ended is killed -9 and reported.
set -euo pipefail
export F_SIGNAL=stop
export BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-f2-stop.XXXXXX)}
exec bash "$(dirname "$0")/f1_kill.sh"

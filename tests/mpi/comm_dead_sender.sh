#!/usr/bin/env bash
# A peer that dies mid-message (comm_dead_sender_check.cpp), under
# mpirun --enable-recovery: the receiver keeps taking the other ranks'
# messages. mpirun exits 0 under --enable-recovery whatever the ranks
# return, so the verdict is rank 0's PASS line.
set -euo pipefail
: "${CHECK:?CHECK must name comm_dead_sender_check}"
: "${MPIEXEC:=mpirun}"
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set +e
timeout -k 5 60 "$MPIEXEC" $ROOT_FLAG --enable-recovery --oversubscribe --bind-to none -np 3 "$CHECK" >"$out" 2>&1
rc=$?
set -e
grep -q "^PASS: " "$out" || { cat "$out" >&2; echo "FAIL: no PASS line from rank 0 (mpirun exit $rc)" >&2; exit 1; }
grep "^PASS: " "$out"

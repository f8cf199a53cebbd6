#!/usr/bin/env bash
# A communicator whose member never comes (comm_deadline_check.cpp): the
# waiting ranks end with exit 75 and one line naming the call, within the
# 10 s limit plus a margin, instead of hanging for ever.
set -euo pipefail
: "${CHECK:?CHECK must name comm_deadline_check}"
: "${MPIEXEC:=mpirun}"
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
start=$(date +%s)
set +e
timeout -k 5 90 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np 3 "$CHECK" 2>"$err"
rc=$?
set -e
took=$(( $(date +%s) - start ))
[ "$rc" -eq 75 ] || { cat "$err" >&2; echo "FAIL: expected exit 75, got $rc after ${took} s" >&2; exit 1; }
grep -q "cellgan: stopped: MPI_Comm_create_group (tag 7) has not returned after 10 s" "$err" \
  || { cat "$err" >&2; echo "FAIL: no line naming the call" >&2; exit 1; }
[ "$took" -ge 9 ] && [ "$took" -le 40 ] || { echo "FAIL: ended after ${took} s, expected about 10" >&2; exit 1; }
echo "PASS: the creation ended with 75 after ${took} s"

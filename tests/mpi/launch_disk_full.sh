#!/usr/bin/env bash
# A full disk under cellgan launch: said once (one line naming the file and
# "no space left"), exit 74, not restarted, and recorded in run.json. The run
# folder is on a small tmpfs mounted in a mount namespace of this test's own
# (unshare; as another user than root, in a user namespace too): skipped
# (77) where namespaces cannot be made.
source "$(dirname "$0")/mpi_test_lib.sh"
if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount --propagation private); else ns=(unshare --user --map-root-user --mount); fi
if ! "${ns[@]}" sh -c "mount -t tmpfs -o size=64k tmpfs '$WORK'" 2>/dev/null; then
  echo "SKIP: cannot mount a tmpfs in a mount namespace here (${ns[*]})"
  exit 77
fi
mkdir -p "$WORK/disk"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/disk/run" 's/generations: 4/generations: 40/' \
      's/rows: 2, cols: 2/rows: 4, cols: 4/')
printf 'checkpoint: {every: 2}\n' >> "$cfg"

# on_full_disk SIZE FILL: cellgan launch with its run folder on a tmpfs of
# SIZE, FILL bytes of it taken first; stdout, stderr in $WORK/out, $WORK/err.
on_full_disk() {
  set +e
  "${ns[@]}" bash -c 'set -e
    mount -t tmpfs -o size="$1" tmpfs "$2/disk"
    head -c "$3" /dev/zero > "$2/disk/filler" || true
    rc=0; timeout -k 10 240 "$4" launch -w 2 "$5" >"$2/out" 2>"$2/err" || rc=$?
    cp -r "$2/disk/run" "$2/kept" 2>/dev/null || true; exit $rc' _ "$1" "$WORK" "$2" "$CELLGAN" "$cfg"
  local rc=$?
  set -e
  return $rc
}
check() {  # check WHAT RC [run.json]
  [ "$2" -eq 74 ] || { cat "$WORK/err" >&2; fail "$1: expected exit 74, got $2"; }
  [ "$(grep -ci "no space left" "$WORK/err")" -eq 1 ] || { cat "$WORK/err" >&2; fail "$1: expected one line saying no space left"; }
  grep -Eq "^cellgan: failed: .*$WORK/disk/run/[^ ]*: no space left on the device" "$WORK/err" \
    || { cat "$WORK/err" >&2; fail "$1: the line does not name the file"; }
  ! grep -q "cellgan launch: restart" "$WORK/err" || { cat "$WORK/err" >&2; fail "$1: a full disk was restarted"; }
  [ $# -lt 3 ] && return
  grep -q '"status":"failed"' "$WORK/kept/run.json" && grep -q '"exit_code":74' "$WORK/kept/run.json" \
    && grep -q 'no space left' "$WORK/kept/run.json" || { cat "$WORK/kept/run.json" >&2; fail "$1: run.json does not record it"; }
}

# 1. The disk fills up while the run trains.
rc=0; on_full_disk 2m 0 || rc=$?
check "a disk filled up by the run" "$rc" run.json
grep -q '"generation":[1-9]' "$WORK/kept/run.json" || fail "the run did not train before the disk was full"
rm -rf "$WORK/kept"
# 2. The disk is full from the start: nothing can be recorded, the line is
# all there is.
rc=0; on_full_disk 256k 262144 || rc=$?
check "a full disk at the start" "$rc"
echo "PASS: a full disk is said once, exit 74, not restarted, recorded in run.json"

#!/usr/bin/env bash
# Usage: trimmed_libtorch.sh BINARY TRIMMED_DIR
# The executables load the build's copy of libtorch_cpu.so
# (deploy/trim-libtorch.sh) through their run path: none of the libraries it
# dropped is loaded, every symbol still resolves, and the script turns bad
# input into one line and leaves nothing behind.
set -euo pipefail
BIN=$1
DIR=$2
SCRIPT="$(dirname "$0")/../../deploy/trim-libtorch.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

report="$DIR/trim-report.txt"
[ -f "$report" ] || fail "$report: missing"
loaded=$(ldd "$BIN")
lib=$(awk '$1 ~ /^libtorch_cpu\.so/ { print $3 }' <<< "$loaded")
[[ $lib == "$DIR"/libtorch_cpu.so* ]] || fail "$BIN loads libtorch_cpu from '$lib', expected $DIR"

# What the system library needs but never calls is not loaded at all.
system=$(sed -n 's/^source //p' "$report")
dropped=$(sed -n 's/^needed kept [0-9]*, dropped [0-9]*: //p' "$report")
if readelf -d "$system" | grep -c "NEEDED.*libopencv_core" > /dev/null; then  # -c reads it all: no broken pipe
  grep -qw "libopencv_core.so.[0-9]*" <<< "$dropped" || fail "OpenCV was kept: $dropped"
fi
# (A dropped library another loaded one needs, such as libnuma for Open MPI, stays.)
others=$(awk '$2 == "=>" && $3 ~ /^\// && $1 !~ /^libtorch_cpu/ { print $3 }' <<< "$loaded" | sort -u \
  | while read -r f; do readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done; readelf -d "$BIN" \
  | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for name in $dropped; do
  [ "$name" = none ] && continue
  grep -qx "$name" <<< "$others" && continue
  ! grep -q "^[[:space:]]*$name " <<< "$loaded" || fail "$BIN still loads $name"
done
# ... nor anything only those pulled in: every library the system's
# libtorch_cpu loads and its trimmed copy does not (GDAL, Qt, ... with
# Debian 12's LibTorch 1.13) stays out, unless something else needs it.
# LibTorch 2.x (Debian 13) is linked with --as-needed: there may be nothing
# to remove, and then there is nothing more to check.
copy=$(sed -n 's/^copy //p' "$report")
# The names of the libraries in ldd's output (a preloaded one by its file name).
names() { awk '$2 == "=>" { print $1 } $1 ~ /^\// { n = split($1, p, "/"); print p[n] }' | sort -u; }
removed=$(comm -23 <(ldd "$system" | names) <(LD_LIBRARY_PATH="$DIR" ldd "$copy" | names))
read -r loads_before loads_after < <(sed -n 's/^libraries loaded: \([0-9]*\) before, \([0-9]*\) after$/\1 \2/p' "$report")
if [ -z "$removed" ]; then
  [ "${loads_after:-0}" -ge "${loads_before:-0}" ] \
    || fail "$report: the copy loaded $loads_after libraries instead of $loads_before, but $copy now loads all that $system does"
  echo "NOTE: $system loads no library that its trimmed copy does not ($(grep '^needed' "$report")):" \
       "nothing was removed to check for"
else
  for name in $removed; do
    grep -qx "$name" <<< "$others" && continue
    ! names <<< "$loaded" | grep -qx "$name" || fail "$BIN loads $name, which only the untrimmed $system needs"
  done
fi
! ldd -r "$BIN" 2>&1 | grep "undefined symbol" || fail "$BIN has unresolved symbols"

# Bad input: one line naming the file, exit != 0, no output folder.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "not a library" > "$tmp/fake.so"
rc=0
bash "$SCRIPT" "$tmp/fake.so" "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" -ne 0 ] || fail "a non-library was accepted"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "fake.so: no SONAME" "$tmp/err" || fail "bad input: $(cat "$tmp/err")"
[ ! -e "$tmp/out" ] || fail "bad input left $tmp/out behind"
echo "PASS: trimmed libtorch_cpu.so"

#!/usr/bin/env bash
# Usage: deploy/trim-libtorch.sh LIBTORCH_CPU OUT_DIR
#
# Writes OUT_DIR/<soname>: a copy of LIBTORCH_CPU (Debian's libtorch_cpu.so)
# without the NEEDED entries of libraries it never calls, and
# OUT_DIR/trim-report.txt saying what was dropped. The build links cellgan
# with OUT_DIR as its run path, so every rank loads the copy.
#
# Why: Debian's libtorch_cpu.so is linked against OpenCV, FFmpeg, OpenCL,
# LevelDB, LMDB, ZeroMQ, ... without --as-needed, though it uses none of
# their symbols. Loading them and what they need (GDAL, Qt, poppler, ...:
# about 250 shared libraries) costs every process about 70 MB of resident
# memory and start-up time (docs/results.md, B4).
#
# A NEEDED library is dropped only if it defines none of the dynamic symbols
# the library leaves undefined. Then `ldd -r` must resolve every symbol of
# the copy and everything it loads, as it does for the original; otherwise
# the script fails and leaves no copy behind. The code is untouched: only the
# dynamic section's list of needed libraries changes.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: deploy/trim-libtorch.sh LIBTORCH_CPU OUT_DIR" >&2
  exit 2
fi
src=$(realpath -m "$1")
out=$2
for tool in patchelf readelf nm ldd; do
  command -v "$tool" >/dev/null || { echo "trim-libtorch: $tool not found: expected it on PATH (deploy/install-deps.sh installs it)" >&2; exit 1; }
done
[ -f "$src" ] || { echo "trim-libtorch: $1: no such file" >&2; exit 1; }

soname=$(patchelf --print-soname "$src" 2>/dev/null) || true
[ -n "$soname" ] || { echo "trim-libtorch: $src: no SONAME: expected a shared library" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d "$out/.trim.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Symbols the library needs from elsewhere, without version suffixes.
nm -D --undefined-only "$src" | awk '{ print $NF }' | sed 's/@.*//' | sort -u > "$work/undefined"
# NEEDED name -> path, as the loader resolves them for the original.
ldd "$src" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' > "$work/paths"

drop=()
kept=0
while read -r needed; do
  path=$(awk -v n="$needed" '$1 == n { print $2; exit }' "$work/paths")
  if [ -z "$path" ]; then kept=$((kept + 1)); continue; fi  # not resolvable here: keep it
  # (Counted, not grep -q: an early exit would break the pipe under pipefail.)
  provides=$(nm -D --defined-only "$path" 2>/dev/null | awk '{ print $NF }' | sed 's/@.*//' | sort -u \
      | comm -12 - "$work/undefined" | wc -l)
  if [ "$provides" -gt 0 ]; then
    kept=$((kept + 1))
  else
    drop+=("$needed")
  fi
done < <(readelf -d "$src" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')

cp "$src" "$work/$soname"
if [ ${#drop[@]} -gt 0 ]; then
  args=()
  for d in "${drop[@]}"; do args+=(--remove-needed "$d"); done
  patchelf "${args[@]}" "$work/$soname"
fi

# Every symbol must still resolve, for the copy and all it loads.
unresolved() { LD_LIBRARY_PATH="$1" ldd -r "$2" 2>&1 | grep -c "undefined symbol" || true; }
before=$(unresolved "" "$src")
after=$(unresolved "$work" "$work/$soname")
if [ "$after" -ne "$before" ]; then
  echo "trim-libtorch: $src: the trimmed copy leaves $after symbols unresolved (the original $before): expected none dropped" >&2
  exit 1
fi
loads_before=$(ldd "$src" | wc -l)
loads_after=$(LD_LIBRARY_PATH="$work" ldd "$work/$soname" | wc -l)

mv -f "$work/$soname" "$out/$soname"
# Leave the copy on disk only, not in the page cache: pages this script just
# wrote sit there in large blocks that every process mapping the library
# would then map whole (a process that links LibTorch started at 117.6 MB
# instead of 89.0 MB). Read back by the loader, it behaves like any
# installed library. Best effort: a file system that refuses only costs memory.
{ sync "$out/$soname" && dd if="$out/$soname" iflag=nocache count=0 status=none; } 2>/dev/null || true
{
  echo "source $src"
  echo "copy $out/$soname"
  echo "needed kept $kept, dropped ${#drop[@]}: ${drop[*]:-none}"
  echo "libraries loaded: $loads_before before, $loads_after after"
} > "$out/trim-report.txt.new"
mv -f "$out/trim-report.txt.new" "$out/trim-report.txt"
echo "trim-libtorch: $soname: dropped ${#drop[@]} unused of $((kept + ${#drop[@]})) needed libraries; it loads $loads_after libraries instead of $loads_before"

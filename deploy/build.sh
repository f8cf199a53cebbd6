#!/usr/bin/env bash
# Configures and builds cellgan in build/ (Release, Ninja, ccache).
#   deploy/build.sh            everything: the executable and the tests
#   deploy/build.sh TARGET...  only those targets (deploy/quickstart.sh
#                              builds `cellgan` alone, a third of the work)
set -euo pipefail
cd "$(dirname "$0")/.."
# Paths relative to the checkout in ccache's keys, so any clone reuses the cache.
export CCACHE_BASEDIR="$PWD"
# Lets ccache cache the files compiled against the precompiled Torch header.
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
# A cold build writes about 0.6 GB (the precompiled Torch header is 570 MB of
# it); a full disk otherwise shows up only as a compiler error deep in the log.
free_mb=$(df -Pm . | awk 'NR == 2 { print $4 }')
if [ "$free_mb" -lt 1024 ]; then
  echo "deploy/build.sh: warning: only ${free_mb} MB free on the disk holding $PWD; a cold build needs about 600 MB" >&2
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j "$(nproc)" --target "$@"
else
  cmake --build build -j "$(nproc)"
fi

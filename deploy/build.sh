#!/usr/bin/env bash
# Configures and builds cellgan in build/ (Release, Ninja, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
# Paths relative to the checkout in ccache's keys, so any clone reuses the cache.
export CCACHE_BASEDIR="$PWD"
# Lets ccache cache the files compiled against the precompiled Torch header.
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"

#!/usr/bin/env bash
# Checks that the source tree builds and passes its CPU tests against Debian
# 13's ("trixie") LibTorch 2.x, on a Debian 12 machine whose own LibTorch is
# 1.13. No GPU needed; it does not run in CI.
#
# Usage (as root: debootstrap, chroot and mount need it):
#   deploy/debian13-rootfs.sh [setup] [ROOTFS]   make the Debian 13 root file system
#   deploy/debian13-rootfs.sh build [ROOTFS]     setup, then copy this checkout into
#                                                it, build it there and run CPU tests
#   deploy/debian13-rootfs.sh shell [ROOTFS] [-- CMD...]
#                                                a shell (or CMD) in the copy, mounts set up
# ROOTFS defaults to /var/tmp/cellgan-debian13 (about 4 GB with a build).
#
# setup: debootstrap (installed on the host with apt if missing) makes a
# minimal Debian 13 in ROOTFS from the Debian mirror the host's apt uses
# (the URI of the host's own release in /etc/apt/sources.list or
# /etc/apt/sources.list.d/*; no other network source); apt inside it then
# installs what cellgan needs (deploy/install-deps.sh's toolchain and
# libraries, without the data sets, Chromium and SLURM).
#
# build: the checkout's tracked and untracked, not ignored files (never
# build*/, data/ or runs/) are copied to ROOTFS/work/cellgan, a snapshot
# that the other files of the checkout cannot change mid-build; data/ is
# bind-mounted read-only there when the checkout has one (the MNIST tests
# use it). Copies keep their times, so a second build recompiles only what
# changed; ccache's cache stays in ROOTFS too. Then, in the chroot:
#   cmake -S . -B build-trixie -G Ninja -DCMAKE_BUILD_TYPE=Release
#   cmake --build build-trixie -j$JOBS -- -k 0   (every error, not the first)
#   ctest --test-dir build-trixie -R "$TESTS" -j$JOBS --timeout 300
# at nice 10. The logs go to ROOTFS/work/logs/ (configure.log, build.log,
# build-errors.txt, test.log, source-state.txt).
#
# Environment: JOBS (default 2), TESTS (a ctest -R regex; default the nn and
# common unit tests and deploy.trimmed_libtorch).
#
# Every step prints one line; it skips what is already done, and fails with
# one line saying what failed. /proc, /sys and /dev are mounted into ROOTFS
# only while the script runs, and unmounted on exit.
set -Eeuo pipefail

SUITE=trixie
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config patchelf git
  libtorch-dev libopenblas0-openmp
  libopenmpi-dev openmpi-bin
  libboost-dev libboost-program-options-dev
  libyaml-cpp-dev libfmt-dev libgtest-dev
  libpng-dev zlib1g-dev nlohmann-json3-dev
)
JOBS=${JOBS:-2}
TESTS=${TESTS:-'^(nn|common)\.|^deploy\.trimmed_libtorch$'}
ME="debian13-rootfs"

step_name="start"
say() { echo "$ME: $*"; }
step() { step_name=$1; say "$1"; }
die() { echo "$ME: error: $*" >&2; exit 1; }
on_error() {
  local rc=$? cmd=$BASH_COMMAND
  # Once, from the script itself, not again from each subshell on the way.
  if [ "$BASHPID" = "$$" ]; then echo "$ME: error: step \"$step_name\" failed: \`$cmd\` exited with $rc" >&2; fi
  exit "$rc"
}
trap on_error ERR

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" | sed '/^set /d'; }

mode=setup
case "${1:-}" in
  setup|build|shell) mode=$1; shift ;;
  -h|--help) usage; exit 0 ;;
  -*) die "unknown option $1 (see $0 --help)" ;;
esac
ROOTFS=/var/tmp/cellgan-debian13
if [ $# -gt 0 ] && [ "$1" != "--" ]; then ROOTFS=$1; shift; fi
[ "${1:-}" = "--" ] && shift
ROOTFS=$(realpath -m "$ROOTFS")
case "$ROOTFS" in /|/usr|/var|/tmp|/var/tmp|/home|/root) die "refusing $ROOTFS as the root file system's folder" ;; esac
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"

CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)
SRC_IN_ROOT=/work/cellgan          # the copy's path inside the chroot
LOGS=$ROOTFS/work/logs             # host path of the logs
DONE_BOOTSTRAP=$ROOTFS/var/lib/cellgan-debootstrap-done

# ---- mounts, undone on exit (only those this run made) ----
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null \
      || echo "$ME: warning: could not unmount ${mounted[i]}" >&2
  done
  mounted=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount_into() {  # mount_into TARGET MOUNT-ARGS...
  local target=$1; shift
  mkdir -p "$target"
  if mountpoint -q "$target"; then return 0; fi   # already there (another run): leave it
  mount "$@" "$target" || die "mount $* $target failed"
  mounted+=("$target")
}
mount_system() {
  mount_into "$ROOTFS/proc" -t proc proc
  mount_into "$ROOTFS/sys" --bind /sys
  mount_into "$ROOTFS/dev" --bind /dev
  mount_into "$ROOTFS/dev/pts" --bind /dev/pts
  mount_into "$ROOTFS/dev/shm" -t tmpfs -o mode=1777 shm   # Open MPI's shared memory
}

# in_root CMD...: runs CMD in the chroot with a clean environment.
in_root() {
  chroot "$ROOTFS" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"
}

# host_mirror: the first URI the host's apt uses for its own release (the
# suite named like the host's codename, so neither -security nor -updates
# nor third-party repositories), from one-line .list and deb822 .sources files.
host_mirror() {
  local codename f uri
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 0
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk -v c="$codename" '
      $1 == "deb" {
        i = 2
        if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == c) { print $i; exit }
      }' "$f")
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk -v c="$codename" '
      BEGIN { RS = ""; FS = "\n" }
      {
        types = ""; uris = ""; suites = ""; enabled = "yes"
        for (l = 1; l <= NF; l++) {
          line = $l
          if (line ~ /^#/) continue
          key = tolower(line); sub(/:.*/, "", key)
          val = line; sub(/^[^:]*:[ \t]*/, "", val)
          if (key == "types") types = val
          else if (key == "uris") uris = val
          else if (key == "suites") suites = val
          else if (key == "enabled") enabled = tolower(val)
        }
        if (enabled == "no" || (" " types " ") !~ / deb /) next
        n = split(suites, s, /[ \t]+/)
        for (k = 1; k <= n; k++) if (s[k] == c) { split(uris, u, /[ \t]+/); print u[1]; exit }
      }' "$f")
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  return 0
}

# write_if_changed FILE: stdin into FILE, only when it differs.
write_if_changed() {
  local tmp; tmp=$(mktemp)
  cat > "$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; return 1; fi
  mkdir -p "$(dirname "$1")"; mv -f "$tmp" "$1"; chmod 644 "$1"
}

setup() {
  step "host: debootstrap"
  if ! command -v debootstrap >/dev/null; then
    say "  installing debootstrap on the host with apt"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >/dev/null \
      || die "could not install debootstrap on the host with apt-get"
  fi
  [ -e "/usr/share/debootstrap/scripts/$SUITE" ] || die "this debootstrap does not know $SUITE (upgrade debootstrap)"

  step "mirror: reading the host's apt sources"
  MIRROR=$(host_mirror)
  [ -n "$MIRROR" ] || die "no Debian mirror for the host's release in /etc/apt/sources.list or /etc/apt/sources.list.d/*"
  say "  mirror $MIRROR"

  if [ -f "$DONE_BOOTSTRAP" ]; then
    step "debootstrap $SUITE into $ROOTFS: already done"
  else
    if [ -d "$ROOTFS" ] && [ -n "$(ls -A "$ROOTFS")" ]; then
      die "$ROOTFS is not empty but holds no finished debootstrap: remove it (rm -rf $ROOTFS) or name another folder"
    fi
    step "debootstrap $SUITE into $ROOTFS (minbase, a few minutes)"
    mkdir -p "$ROOTFS"
    local log=$ROOTFS.debootstrap.log
    if ! debootstrap --variant=minbase --components=main \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        "$SUITE" "$ROOTFS" "$MIRROR" > "$log" 2>&1; then
      die "debootstrap failed: $(grep -E '^(E|W):' "$log" | tail -n 1 || tail -n 1 "$log") (log $log; remove $ROOTFS before trying again)"
    fi
    touch "$DONE_BOOTSTRAP"
    rm -f "$log"
  fi

  step "apt sources in the root file system: $SUITE $SUITE-updates from $MIRROR"
  if write_if_changed "$ROOTFS/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  then say "  written"; else say "  unchanged"; fi
  rm -f "$ROOTFS/etc/apt/sources.list"
  # Nothing installed may start a service in the chroot.
  printf '#!/bin/sh\nexit 101\n' | write_if_changed "$ROOTFS/usr/sbin/policy-rc.d" || true
  chmod 755 "$ROOTFS/usr/sbin/policy-rc.d"
  # Name resolution as on the host.
  if [ -e /etc/resolv.conf ]; then
    rm -f "$ROOTFS/etc/resolv.conf"; cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
  fi

  mount_system

  local missing=() p
  for p in "${PACKAGES[@]}"; do
    in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    step "packages: all ${#PACKAGES[@]} installed"
  else
    step "packages: installing ${missing[*]} (apt in the chroot; libtorch-dev brings about 2 GB)"
    mkdir -p "$LOGS"
    if ! { in_root apt-get update -q && in_root apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
        > "$LOGS/apt.log" 2>&1; then
      die "apt-get in the chroot failed: $(grep -E '^(E|W):' "$LOGS/apt.log" | tail -n 1 || tail -n 1 "$LOGS/apt.log") (log $LOGS/apt.log)"
    fi
    in_root apt-get clean
  fi

  local v
  v=$(in_root dpkg-query -W -f='libtorch-dev ${Version}, libfmt-dev ' libtorch-dev)
  v+=$(in_root dpkg-query -W -f='${Version}, cmake ' libfmt-dev)
  v+=$(in_root dpkg-query -W -f='${Version}, g++ ' cmake)
  v+=$(in_root dpkg-query -W -f='${Version}' g++)
  say "  $v"
}

# copy_checkout: the checkout's tracked and untracked, not ignored files
# (never build*/, data/, runs/) into ROOTFS$SRC_IN_ROOT, times kept; files of
# the previous copy that are gone from the checkout are removed.
copy_checkout() {
  local dest=$ROOTFS$SRC_IN_ROOT
  local manifest=$ROOTFS/work/.cellgan-manifest
  command -v git >/dev/null || die "git not found on the host: the copy lists the checkout's files with it"
  git -C "$CHECKOUT" rev-parse --git-dir >/dev/null 2>&1 || die "$CHECKOUT is not a git checkout"
  step "copy: $CHECKOUT -> $dest (tracked and untracked files, not build*/ data/ runs/)"
  local list; list=$(mktemp)
  local f
  (
    cd "$CHECKOUT"
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
      case "$f" in build*/*|data/*|runs/*) continue ;; esac
      # Not one deleted in the work tree, nor a submodule's folder.
      if [ -f "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
    done
  ) > "$list"
  mkdir -p "$dest" "$LOGS"
  tar -C "$CHECKOUT" --null -T "$list" -cf - | tar -C "$dest" -xpf -
  if [ -f "$manifest" ]; then
    comm -z -23 <(sort -z "$manifest") <(sort -z "$list") | while IFS= read -r -d '' f; do
      rm -f "$dest/$f"
    done
  fi
  mv -f "$list" "$manifest"
  say "  $(tr -cd '\0' < "$manifest" | wc -c) files"
  {
    echo "checkout $CHECKOUT"
    echo "commit $(git -C "$CHECKOUT" rev-parse HEAD)"
    echo "copied $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "git status --short:"
    git -C "$CHECKOUT" status --short
  } > "$LOGS/source-state.txt"
  if [ -d "$CHECKOUT/data" ]; then
    mount_into "$dest/data" --bind -o ro "$CHECKOUT/data"
    mount -o remount,bind,ro "$dest/data" 2>/dev/null || true
  fi
}

# in_build CMD: a shell command in the copy, nice 10, with ccache's settings
# of deploy/build.sh and the cache kept in the root file system.
in_build() {
  nice -n 10 chroot "$ROOTFS" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CCACHE_DIR=/var/cache/ccache CCACHE_BASEDIR=$SRC_IN_ROOT CCACHE_MAXSIZE=5G \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1 \
    bash -c "cd $SRC_IN_ROOT && $1"
}

build() {
  copy_checkout

  step "configure: cmake -S . -B build-trixie -G Ninja -DCMAKE_BUILD_TYPE=Release (log $LOGS/configure.log)"
  if ! in_build "cmake -S . -B build-trixie -G Ninja -DCMAKE_BUILD_TYPE=Release" > "$LOGS/configure.log" 2>&1; then
    die "configure failed: $(grep -m1 -E 'CMake Error' "$LOGS/configure.log" || tail -n 1 "$LOGS/configure.log") (log $LOGS/configure.log)"
  fi
  say "  $(grep -m1 -oE 'LibTorch [0-9][^:]*' "$LOGS/configure.log" || echo 'LibTorch version not reported')"
  say "  $(grep -m1 -E 'trimmed libtorch|libtorch_cpu|patchelf' "$LOGS/configure.log" | sed 's/^-- //' \
         || echo 'trimmed libtorch: configured (Debian library under /usr/lib)')"

  step "build: cmake --build build-trixie -j$JOBS -- -k 0, nice 10 (log $LOGS/build.log)"
  local start=$SECONDS build_ok=1
  in_build "cmake --build build-trixie -j$JOBS -- -k 0" > "$LOGS/build.log" 2>&1 || build_ok=0
  grep -E ': (fatal )?error:|undefined reference|error: ld returned|^FAILED:|trim-libtorch:' "$LOGS/build.log" \
    > "$LOGS/build-errors.txt" || true
  # deploy/trim-libtorch.sh's line when it ran now, its report when it ran before.
  local trim report=$ROOTFS$SRC_IN_ROOT/build-trixie/libtorch-trimmed/trim-report.txt
  trim=$(grep -m1 -E '^trim-libtorch:' "$LOGS/build.log" || true)
  if [ -z "$trim" ] && [ -f "$report" ]; then trim="trim-libtorch (earlier): $(grep -m1 '^needed' "$report")"; fi
  if [ -n "$trim" ]; then say "  $trim"; fi
  local deprecated; deprecated=$(grep -c -E '\[-Wdeprecated' "$LOGS/build.log" || true)
  say "  $(grep -c -E 'warning:' "$LOGS/build.log" || true) warnings, $deprecated of them about deprecations; $(( (SECONDS - start) / 60 )) min"
  local build_failure=""
  if [ "$build_ok" -eq 0 ]; then
    local errors first
    errors=$(grep -c -E ': (fatal )?error:|undefined reference' "$LOGS/build.log" || true)
    first=$(grep -m1 -E ': (fatal )?error:|undefined reference' "$LOGS/build.log" \
            || grep -m1 '^FAILED:' "$LOGS/build.log" || tail -n 1 "$LOGS/build.log")
    build_failure="build failed: $errors errors, $(grep -c '^FAILED:' "$LOGS/build.log" || true) failed targets, first: $first (all in $LOGS/build-errors.txt)"
    say "  $build_failure"
    say "  testing what was built (-k 0 built all it could)"
  fi

  step "test: ctest --test-dir build-trixie -R '$TESTS' -j$JOBS --timeout 300 (log $LOGS/test.log)"
  local test_ok=1
  in_build "ctest --test-dir build-trixie -R '$TESTS' -j$JOBS --timeout 300 --output-on-failure" \
    > "$LOGS/test.log" 2>&1 || test_ok=0
  local result
  result="$(grep -m1 -E 'tests passed' "$LOGS/test.log" || echo "no tests ran"), $(grep -c -E '\*\*\*Skipped' "$LOGS/test.log" || true) skipped"
  if [ "$test_ok" -eq 0 ]; then
    result="tests failed: $result; failed: $(sed -n '/tests FAILED:/,$p' "$LOGS/test.log" \
      | grep -oE '[^ ]+ \((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Not Run)[^)]*\)' | tr '\n' ' ')(log $LOGS/test.log)"
  fi
  say "  $result"
  if [ -n "$build_failure" ]; then die "$build_failure; $result"; fi
  if [ "$test_ok" -eq 0 ]; then die "$result"; fi
  say "done: the checkout builds and passes the selected tests against LibTorch 2.x of Debian $SUITE"
}

setup
case "$mode" in
  setup) say "done: $ROOTFS is ready; '$0 build $ROOTFS' builds this checkout in it" ;;
  build) build ;;
  shell)
    copy_checkout
    step "shell in $ROOTFS at $SRC_IN_ROOT"
    if [ $# -gt 0 ]; then in_build "$(printf '%q ' "$@")"; else
      chroot "$ROOTFS" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c "cd $SRC_IN_ROOT && exec bash -i"
    fi
    ;;
esac

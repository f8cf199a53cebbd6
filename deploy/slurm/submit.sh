#!/usr/bin/env bash
# Submits deploy/slurm/cellgan.sbatch with the task count the run needs:
# --ntasks = W + 1, W = $CELLGAN_WORKERS, or by default the grid's cell
# count (grid.rows * grid.cols of CONFIG, after its --set options), one
# worker per cell.
#
#   deploy/slurm/submit.sh [SBATCH OPTIONS...] CONFIG [cellgan train options...]
#   CELLGAN_WORKERS=2 deploy/slurm/submit.sh --time=30 configs/toy-2x2.yaml --set seed=3
#
# SBATCH OPTIONS come first, each in one word (`--time=30`, not `--time 30`);
# the first word that is not an option is CONFIG. Prints sbatch's answer
# (the job id). The variables of cellgan.sbatch (CELLGAN, CELLGAN_RUNS,
# CELLGAN_RUN_DIR, CELLGAN_LAUNCHER, ...) pass through the environment.
# Exit: sbatch's code, or 2 with one line when CONFIG or W cannot be read.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "submit.sh: error: $*" >&2; exit 2; }

sbatch_opts=()
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do sbatch_opts+=("$1"); shift; done
[ $# -ge 1 ] || die "usage: submit.sh [SBATCH OPTIONS...] CONFIG [cellgan train options...]"
config=$1
shift
[ -f "$config" ] || die "configuration $config: no such file"

workers=${CELLGAN_WORKERS:-}
if [ -z "$workers" ]; then
  # The grid's cells, with the --set options applied the way cellgan does
  # (grid.rows=, grid.cols= or grid={...}).
  workers=$(python3 - "$config" "$@" <<'EOF'
import sys, yaml
path, args = sys.argv[1], sys.argv[2:]
try:
    with open(path) as f:
        doc = yaml.safe_load(f) or {}
except (OSError, yaml.YAMLError) as e:
    sys.exit(f"{path}: cannot read it as YAML: {e}")
if not isinstance(doc, dict):
    sys.exit(f"{path}: expected a YAML mapping of keys")
grid = dict(doc.get("grid") or {})
for i, a in enumerate(args):
    setting = args[i + 1] if a == "--set" and i + 1 < len(args) else a[6:] if a.startswith("--set=") else None
    if setting is None or "=" not in setting:
        continue
    key, value = setting.split("=", 1)
    if key == "grid":
        grid = dict(yaml.safe_load(value) or {})
    elif key in ("grid.rows", "grid.cols"):
        grid[key[5:]] = yaml.safe_load(value)
rows, cols = grid.get("rows", 2), grid.get("cols", 2)  # config.h defaults
if not (isinstance(rows, int) and isinstance(cols, int) and rows > 0 and cols > 0):
    sys.exit(f"{path}: grid.rows and grid.cols: expected positive integers, got {rows!r} and {cols!r}")
print(rows * cols)
EOF
  ) || die "cannot tell W from $config: set CELLGAN_WORKERS"
fi
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "CELLGAN_WORKERS=$workers: expected a positive integer"
exec sbatch --ntasks=$((workers + 1)) "${sbatch_opts[@]}" "$here/cellgan.sbatch" "$config" "$@"

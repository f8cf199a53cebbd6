#!/usr/bin/env bash
# A sweep as SLURM job arrays: one array per worker count W (its tasks need
# W + 1 SLURM tasks), one array task per grid size, seed and varied value,
# each running deploy/slurm/cellgan.sbatch (requeue, time-limit signal and
# resume as there). When the arrays are done, `cellgan sweep --collect`
# builds sweep.csv, the plots and sweep.md from the run folders; the script
# prints that command.
#
#   deploy/slurm/sweep.sh [SBATCH OPTIONS...] --config FILE [--grids 1x1,2x2,3x3] [--workers 1,2]
#                         [--vary KEY=V1,V2 ...] [--seeds N] [--set KEY=VALUE ...] [--out DIR] [--parallel]
#
# Timings: by default the runs go one at a time (each array throttled to
# one task, %1, and each array starting after the one before ends), so no
# two runs share the nodes and their times compare; sweep.md flags runs
# that overlapped anyway. --parallel lets SLURM run them all at once, for
# sweeps of quality rather than time.
#
# The runs are those of `cellgan sweep` with the same options (it is asked
# for them: `cellgan sweep --list`), with the same names: a run that does
# not fit (more workers than cells) is skipped, and seed s of N is the
# configuration's seed + s. SBATCH OPTIONS come first, one word each
# (`--time=60`, `--partition=debug`); they are given to every array.
#
#   --out DIR   the sweep's folder (default runs/slurm-sweep-<date>-<time>):
#               DIR/runs/NAME are the run folders, DIR/logs/ SLURM's job
#               logs (slurm-<arrayjob>_<task>.out), DIR/plan-wW.tsv the
#               array of W's runs (one line per array task).
# Variables: CELLGAN (the cellgan executable; default build/app/cellgan,
# else cellgan on PATH), SBATCH (default sbatch), and cellgan.sbatch's own
# (CELLGAN_LAUNCHER, CELLGAN_SRUN_MPI, ...), which sbatch passes on.
# A run folder that already holds result.json ends its task at once: submit
# the same sweep with the same --out again to run only what is missing.
# Exit: 0 once every array is submitted; 2 with one line for bad options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "sweep.sh: error: $*" >&2; exit 2; }

# ---- array task: run line SLURM_ARRAY_TASK_ID + 1 of PLAN through cellgan.sbatch ----
# (sbatch runs a copy of this script: the folder of cellgan.sbatch is passed.)
if [ "${1:-}" = --task ]; then
  [ $# -eq 4 ] || die "usage: sweep.sh --task PLAN CONFIG SLURM_SCRIPTS (in an array task)"
  plan=$2 config=$3 scripts=$4
  [ -n "${SLURM_ARRAY_TASK_ID:-}" ] || die "--task runs only inside a SLURM job array"
  line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" "$plan")
  [ -n "$line" ] || die "$plan has no line $((SLURM_ARRAY_TASK_ID + 1)) for array task $SLURM_ARRAY_TASK_ID"
  IFS=$'\t' read -r -a fields <<< "$line"
  name=${fields[0]}
  args=()
  for setting in "${fields[@]:2}"; do args+=(--set "$setting"); done
  export CELLGAN_RUN_DIR="$(dirname "$plan")/runs/$name"
  echo "sweep.sh: array task $SLURM_ARRAY_TASK_ID: run $name, W ${fields[1]}" >&2
  # exec: SLURM's signals to the batch shell reach cellgan.sbatch's traps.
  exec bash "$scripts/cellgan.sbatch" "$config" "${args[@]}"
fi

# ---- submit ----
sbatch_opts=()
while [ $# -gt 0 ] && [[ $1 == -* ]] && ! [[ $1 =~ ^--(config|grids|workers|vary|seeds|set|out|parallel)$ ]]; do
  sbatch_opts+=("$1"); shift
done
config="" seeds=1 out="" parallel=0 sweep_opts=()
while [ $# -gt 0 ]; do
  if [ "$1" = --parallel ]; then parallel=1; shift; continue; fi
  [ $# -ge 2 ] || die "$1: expected a value after it"
  case $1 in
    --config) config=$2 ;;
    --grids|--workers|--vary|--set) sweep_opts+=("$1" "$2") ;;
    --seeds) seeds=$2 ;;
    --out) out=$2 ;;
    *) die "$1: unknown option: expected --config, --grids, --workers, --vary, --seeds, --set, --out or --parallel (SBATCH OPTIONS first)" ;;
  esac
  shift 2
done
[ -n "$config" ] || die "--config is required"
[ -f "$config" ] || die "--config: $config: no such file"
if [ -z "${CELLGAN:-}" ]; then
  if [ -x build/app/cellgan ]; then CELLGAN=$PWD/build/app/cellgan
  else CELLGAN=$(command -v cellgan) || die "no cellgan executable: set CELLGAN (no build/app/cellgan here, none on PATH)"
  fi
fi
export CELLGAN
SBATCH=${SBATCH:-sbatch}

# The runs, as cellgan sweep would run them (it checks the options and the
# configuration, and says which runs it skips, on stderr).
list=$("$CELLGAN" sweep --list --config "$config" --seeds "$seeds" ${sweep_opts[@]+"${sweep_opts[@]}"}) || exit 2
[ -n "$list" ] || die "no run fits: every worker count is larger than every grid's cell count"

out=${out:-runs/slurm-sweep-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/runs" "$out/logs" || die "--out: cannot create $out"
out=$(cd "$out" && pwd)
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
# The keys varied, one a line, beside the runs: --collect keeps their columns
# even where the runs that finished agree in them (as cellgan sweep does).
for ((i = 0; i + 1 < ${#sweep_opts[@]}; i += 2)); do
  [ "${sweep_opts[i]}" = --vary ] || continue
  key=${sweep_opts[i + 1]%%=*}
  grep -qxF "$key" "$out/runs/varied-keys.txt" 2>/dev/null || echo "$key" >> "$out/runs/varied-keys.txt"
done

submitted=0 previous=""
for w in $(cut -f2 <<< "$list" | sort -n -u); do
  plan=$out/plan-w$w.tsv
  awk -F'\t' -v w="$w" '$2 == w' <<< "$list" > "$plan"
  n=$(wc -l < "$plan")
  order=()  # one run at a time: a throttle of 1, after the array before
  if [ "$parallel" = 0 ]; then
    throttle=%1
    [ -n "$previous" ] && order=(--dependency="afterany:$previous")
  else
    throttle=""
  fi
  job=$("$SBATCH" --parsable --job-name="cellgan-sweep-w$w" --array="0-$((n - 1))$throttle" --ntasks=$((w + 1)) \
        --requeue --signal=B:USR1@300 --open-mode=append --output="$out/logs/slurm-%A_%a.out" \
        ${order[@]+"${order[@]}"} ${sbatch_opts[@]+"${sbatch_opts[@]}"} "$here/sweep.sh" --task "$plan" "$config" "$here")
  previous=${job%%;*}
  echo "sweep.sh: W = $w: job array $previous, $n run(s)$([ "$parallel" = 0 ] && echo ", one at a time") ($plan)"
  submitted=$((submitted + n))
done
echo "sweep.sh: $submitted run(s) submitted; run folders in $out/runs"
echo "sweep.sh: when the arrays are done (squeue -u \$USER shows none), collect them with:"
echo "  $CELLGAN sweep --collect $out/runs --out $out"

#!/usr/bin/env bash
# Bad input to every command: one line naming the file, key or flag and what
# was expected; exit 2; printed once, by rank 0, under mpirun; nothing
# written. The cases of issue 19 ("bad input, everywhere") and a hostile
# user's: sample counts of 0, -5 and 10^9, a NaN or 0-255 values in a
# sample file, output paths under a regular file, folders given as files,
# command-line errors under mpirun, learning rates of 1e30, 10^12
# generations, an output_dir that cannot be created.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$(dirname "$0")/toy-2x2.yaml"

# expect_one_line NAME PATTERN CMD...: exit 2, exactly one stderr line
# holding PATTERN, nothing new in $WORK/out.
expect_one_line() {
  local name=$1 pattern=$2; shift 2
  local before; before=$(find "$WORK/out" | sort)
  local rc=0; timeout -k 10 120 "$@" > "$WORK/stdout" 2> "$WORK/stderr" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/stderr" >&2; fail "$name: expected exit 2, got $rc"; }
  [ "$(wc -l < "$WORK/stderr")" -eq 1 ] || { cat "$WORK/stderr" >&2; fail "$name: expected one line on stderr"; }
  grep -q -- "^cellgan: error: .*$pattern" "$WORK/stderr" || fail "$name: '$pattern' not in: $(cat "$WORK/stderr")"
  [ "$(find "$WORK/out" | sort)" = "$before" ] || fail "$name: something was written in $WORK/out"
}

# expect_mpi_error NAME PATTERN NP ARGS...: under mpirun, exit 2 and exactly
# one 'cellgan: error:' line (mpirun adds its own banner), nothing written.
expect_mpi_error() {
  local name=$1 pattern=$2 np=$3; shift 3
  local before; before=$(find "$WORK/out" | sort)
  local rc=0
  timeout -k 10 120 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np "$np" "$CELLGAN" "$@" \
    > "$WORK/stdout" 2> "$WORK/stderr" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/stderr" >&2; fail "$name: expected exit 2, got $rc"; }
  local errors; errors=$(grep -c 'cellgan: error:' "$WORK/stderr" || true)
  [ "$errors" -eq 1 ] || { cat "$WORK/stderr" >&2; fail "$name: expected one error line, got $errors"; }
  grep 'cellgan: error:' "$WORK/stderr" | grep -q -- "$pattern" || fail "$name: '$pattern' not in: $(cat "$WORK/stderr")"
  [ "$(find "$WORK/out" | sort)" = "$before" ] || fail "$name: something was written in $WORK/out"
}

# make_npy ROWS COLS FILE: a float32 .npy of zeros.
make_npy() {
  local header="{'descr': '<f4', 'fortran_order': False, 'shape': ($1, $2), }"
  local len=$(( ${#header} + 1 )); local pad=$(( (64 - (10 + len) % 64) % 64 ))
  local total=$(( len + pad ))
  {
    printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((total & 255)))\\x$(printf %02x $((total >> 8)))"
    printf '%s%*s\n' "$header" "$pad" ""
    head -c $(( $1 * $2 * 4 )) /dev/zero
  } > "$3"
}
# put_float FILE INDEX BYTES: overwrite value INDEX (row-major) with 4 raw bytes (little-endian).
put_float() {
  local offset=$(( 10 + $(od -An -tu2 -j8 -N2 "$1" | tr -d ' ') + 4 * $2 ))
  printf "$3" | dd of="$1" bs=1 seek="$offset" conv=notrunc 2> /dev/null
}

mkdir -p "$WORK/out"
echo "not a folder" > "$WORK/out/afile"
mkdir "$WORK/out/adir"

# A finished toy run, for its ensemble and configuration.
cfg=$(make_config "$SRC" "$WORK/run" 's/generations: 4/generations: 1/')
run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "the toy run failed"; }
E="$WORK/run/ensemble.bin"; CFG="$WORK/run/config.yaml"

# ---- train: the configuration, and the output_dir, checked before any worker starts.
expect_mpi_error lr-1e30 "training.learning_rate: 1e+30 is out of range" 3 train \
  "$(make_config "$SRC" "$WORK/out/r1" 's/learning_rate: 1.0e-3/learning_rate: 1.0e30/')"
expect_mpi_error generations-1e12 "training.generations: 1000000000000 is out of range" 3 train \
  "$(make_config "$SRC" "$WORK/out/r2" 's/generations: 4/generations: 1000000000000/')"
expect_mpi_error output-dir-under-a-file "output_dir: '$WORK/out/afile/run' cannot be created: '$WORK/out/afile' is a file" \
  3 train "$(make_config "$SRC" "$WORK/out/afile/run")"
# allreduce nccl without NCCL in this build, or on a CPU: refused by the master before any worker starts.
expect_mpi_error allreduce-nccl-here "data_parallel.allreduce: nccl" 3 train \
  "$(make_config "$SRC" "$WORK/out/r3" 's/grid: {rows: 2, cols: 2}/layout: data_parallel\ngrid: {rows: 1, cols: 1}\ndata_parallel: {allreduce: nccl}/')"
expect_mpi_error config-is-a-folder "$WORK/out/adir: is a folder" 3 train "$WORK/out/adir"
# /proc takes no new folder, though access(2) tells root it may write there.
expect_mpi_error output-dir-in-proc "output_dir: '/proc/cellgan-test/run' cannot be created: nothing can be made in the folder '/proc'" \
  3 train "$(make_config "$SRC" /proc/cellgan-test/run)"
# ---- launch: the same, refused before any rank starts (no mpirun line, no rank's lines).
expect_one_line launch-output-dir-in-proc "output_dir: '/proc/cellgan-test/run' cannot be created" \
  "$CELLGAN" launch -w 2 "$cfg" --set output_dir=/proc/cellgan-test/run
# A section set to null is not its defaults.
expect_one_line launch-section-null "(with --set): training: null: expected a mapping" \
  "$CELLGAN" launch -w 2 "$cfg" --set training=null --set output_dir="$WORK/out/null"
# A device the job cannot have (no GPU here, or fewer than 16): named with the file, before any rank starts.
expect_one_line launch-no-such-gpu "(with --set): runtime.device: cuda:15 asked for, but" \
  "$CELLGAN" launch -w 2 "$cfg" --set runtime.device=cuda:15 --set output_dir="$WORK/out/gpu"
# A --fault that does not fit the job: refused by the launcher, before any rank starts.
expect_one_line launch-fault-rank "--fault 'kill:rank=5,gen=3': rank: 5 is out of range: expected 1..2" \
  "$CELLGAN" launch -w 2 "$cfg" --fault kill:rank=5,gen=3 --set output_dir="$WORK/out/fault"
# Bytes of a garbage configuration come back as \xNN, never raw.
printf 'seed: 1\n\xff\xfe\x1b[2J: 3\n' > "$WORK/garbage.yaml"
expect_one_line launch-garbage-config 'garbage.yaml: \\xFF\\xFE\\x1B\[2J: unknown key' "$CELLGAN" launch -w 2 "$WORK/garbage.yaml"
! LC_ALL=C grep -q '[^[:print:]]' "$WORK/stderr" || fail "launch-garbage-config: unprintable bytes in: $(cat -v "$WORK/stderr")"
# ---- command-line errors under mpirun: once, by rank 0.
expect_mpi_error unknown-flag "unrecognised option '--bogus'" 3 train "$cfg" --bogus
expect_mpi_error no-config "the option '--config' is required" 3 train
expect_mpi_error unknown-command "unknown command 'trian'" 3 trian "$cfg"
expect_mpi_error no-command "expected a command" 3
# ---- sample
expect_one_line sample-n-1e9 "cellgan sample: --count: 1000000000 is out of range: expected 1..100000" \
  "$CELLGAN" sample --ensemble "$E" -n 1000000000 --out "$WORK/out/s.npy"
expect_one_line sample-n-0 "--count: 0 is out of range" "$CELLGAN" sample --ensemble "$E" -n 0 --out "$WORK/out/s.npy"
expect_one_line sample-n-negative "--count: -5 is out of range" "$CELLGAN" sample --ensemble "$E" -n -5 --out "$WORK/out/s.npy"
expect_one_line sample-seed-negative "--seed: '-1': expected a non-negative integer" \
  "$CELLGAN" sample --ensemble "$E" --seed -1 --out "$WORK/out/s.npy"
expect_one_line sample-out-under-a-file "--out: '$WORK/out/afile/s.npy' cannot be written: '$WORK/out/afile' is a file" \
  "$CELLGAN" sample --ensemble "$E" --out "$WORK/out/afile/s.npy"
expect_one_line sample-out-missing-folder "the folder '$WORK/out/none' does not exist" \
  "$CELLGAN" sample --ensemble "$E" --out "$WORK/out/none/s.png"
expect_one_line sample-ensemble-folder "$WORK/out/adir: is a folder: expected an ensemble.bin" \
  "$CELLGAN" sample --ensemble "$WORK/out/adir" --out "$WORK/out/s.npy"
head -c 300 "$E" > "$WORK/trunc.bin"
expect_one_line sample-truncated-ensemble "trunc.bin: checksum mismatch" \
  "$CELLGAN" sample --ensemble "$WORK/trunc.bin" --out "$WORK/out/s.npy"
expect_one_line sample-class-of-a-plain-ensemble "cellgan sample: --class: $E has no classes: expected a per_class" \
  "$CELLGAN" sample --ensemble "$E" --class 3 --out "$WORK/out/s.npy"
# ---- score
make_npy 10 2 "$WORK/nan.npy"; put_float "$WORK/nan.npy" 7 '\x00\x00\xc0\x7f'
expect_one_line score-nan "nan.npy: value nan at \[3, 1\] (row, column from 0): expected finite samples" \
  "$CELLGAN" score --config "$CFG" --samples "$WORK/nan.npy"
# Images: 0-255 pixels, the data's range is [-1, 1]. No data or classifier
# is read before the samples are checked.
printf 'data: {dataset: idx, path: %s/no-data}\n' "$WORK" > "$WORK/images.yaml"
make_npy 4 784 "$WORK/pixels.npy"; put_float "$WORK/pixels.npy" 790 '\x00\x00\x7f\x43'
expect_one_line score-0-255 "pixels.npy: value 255 at \[1, 6\] (row, column from 0) is outside \[-1, 1\]" \
  "$CELLGAN" score --config "$WORK/images.yaml" --samples "$WORK/pixels.npy"
expect_one_line score-n-1e9 "cellgan score: --count: 1000000000 is out of range: expected 2..100000" \
  "$CELLGAN" score --config "$CFG" --ensemble "$E" -n 1000000000
expect_one_line score-count-with-samples "--count: has no effect without --ensemble" \
  "$CELLGAN" score --config "$CFG" --samples "$WORK/nan.npy" -n 50
expect_one_line score-samples-folder "$WORK/out/adir: is a folder: expected a .npy file" \
  "$CELLGAN" score --config "$CFG" --samples "$WORK/out/adir"
expect_one_line score-config-folder "$WORK/out/adir: is a folder: expected a YAML configuration file" \
  "$CELLGAN" score --config "$WORK/out/adir" --ensemble "$E"
# ---- classifier, prepare-mnist: inputs and outputs before any work.
expect_one_line classifier-threads-0 "cellgan classifier: --threads: 0 is out of range: expected 1..64" \
  "$CELLGAN" classifier --dataset idx --data "$WORK/no-data" --threads 0
expect_one_line classifier-quote-in-path "it's: dataset folder not found (relative to the working directory $PWD)" \
  "$CELLGAN" classifier --dataset idx --data "it's"
expect_one_line classifier-out-under-a-file "--out: '$WORK/out/afile/c.pt' cannot be written" \
  "$CELLGAN" classifier --dataset idx --data "$WORK/no-data" --out "$WORK/out/afile/c.pt"
expect_one_line prepare-out-under-a-file "cellgan prepare-mnist: --out: '$WORK/out/afile/m' cannot be created" \
  "$CELLGAN" prepare-mnist --package "$WORK/no-package" --out "$WORK/out/afile/m"
expect_one_line no-command "expected a command" "$CELLGAN"
# A stray word used to be dropped without a word, and the command ran.
expect_one_line stray-word "cellgan sample: too many positional options" \
  "$CELLGAN" sample junk --ensemble "$E" --out "$WORK/out/s.npy"
echo "PASS: bad input to every command is one line, exit 2, nothing written"

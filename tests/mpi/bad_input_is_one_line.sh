#!/usr/bin/env bash
# Bad input: one clear line naming the file and key, exit code 2, nothing
# written — for an unknown key, a wrong type, a 0-row grid, too many
# workers, no worker at all and a missing dataset. A bad configuration is
# named before a bad worker count. No rank may hang.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$(dirname "$0")/toy-2x2.yaml"
expect_bad() {  # NP CONFIG PATTERN
  local np=$1 cfg=$2 pattern=$3 out
  out=$(grep '^output_dir:' "$cfg" | awk '{print $2}')
  local rc=0; run_cellgan "$np" "$cfg" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$WORK/stderr" >&2; fail "$cfg: expected exit 2, got $rc"; }
  local errors; errors=$(grep -c 'cellgan: error:' "$WORK/stderr" || true)
  [ "$errors" -eq 1 ] || { cat "$WORK/stderr" >&2; fail "$cfg: expected exactly one error line, got $errors"; }
  grep 'cellgan: error:' "$WORK/stderr" | grep -q -- "$pattern" || { cat "$WORK/stderr" >&2; fail "$cfg: the error line does not mention '$pattern'"; }
  [ ! -e "$out" ] || fail "$cfg: output directory $out was created"
}
expect_bad 3 "$(make_config "$SRC" "$WORK/o1" 's/^seed: 7/seed: 7\nsede: 1/')" "sede: unknown key"
expect_bad 3 "$(make_config "$SRC" "$WORK/o2" 's/generations: 4/generations: four/')" "training.generations"
expect_bad 3 "$(make_config "$SRC" "$WORK/o3" 's/rows: 2/rows: 0/')" "grid.rows"
expect_bad 6 "$(make_config "$SRC" "$WORK/o4")" "workers"
expect_bad 3 "$(make_config "$SRC" "$WORK/o5" 's/dataset: ring, toy_samples: 2000/dataset: idx, path: \/nonexistent\/folder/' 's/kind: toy, latent_dim: 8, toy_hidden: 32/kind: mlp/')" "/nonexistent/folder: dataset folder not found"
expect_bad 1 "$(make_config "$SRC" "$WORK/o6")" "the job has 1 rank"
expect_bad 1 "$(make_config "$SRC" "$WORK/o7" 's/^seed: 7/seed: 7\nsede: 1/')" "sede: unknown key"
echo "PASS: bad input rejected with one line each"

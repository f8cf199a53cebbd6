#!/usr/bin/env bash
# F4 (tests/bench/README.md): what checkpoints and the status server cost.
# configs/mnist-2x2.yaml with W = 2, short generations, run in pairs
# A/B/A/B...: A with checkpoint.every 1 and the status server on (a free
# port, polled once a second with GET /status as the page does), B with
# checkpoint.every 0 and status.port 0. f4_report.py then prints the time
# per generation of each (the master's "generation g/G" log stamps, from
# generation 1 complete to G complete), the ratio, and the checkpoint size
# and write time per generation (events.log).
#
# Environment (all optional):
#   CELLGAN          cellgan binary                 (build/app/cellgan)
#   F4_PAIRS         A/B pairs                      (3)
#   F4_GENERATIONS   generations per run            (30)
#   F4_BATCHES       batches_per_generation         (30)
#   F4_A_EVERY       checkpoint.every of A          (1)
#   F4_A_STATUS      the status server of A, on|off (on)
#   BENCH_DIR        where runs and logs go         (a new /tmp/cellgan-f4.XXXXXX)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
PAIRS=${F4_PAIRS:-3}
GENERATIONS=${F4_GENERATIONS:-30}
BATCHES=${F4_BATCHES:-30}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-f4.XXXXXX)}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "f4: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "config: configs/mnist-2x2.yaml, W = 2, generations $GENERATIONS, batches_per_generation $BATCHES, final_samples 1000"
} > "$DIR/env.txt"

free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
write_config() {  # NAME EVERY PORT
  sed -e "s|^output_dir: .*|output_dir: $DIR/$1|" -e "s|^  generations: .*|  generations: $GENERATIONS|" \
      -e "s|^  batches_per_generation: .*|  batches_per_generation: $BATCHES|" \
      -e "s|^  final_samples: .*|  final_samples: 1000|" configs/mnist-2x2.yaml > "$DIR/$1.yaml"
  printf 'checkpoint:\n  every: %s\nstatus:\n  port: %s\n' "$2" "$3" >> "$DIR/$1.yaml"
}
run() {  # NAME EVERY PORT
  write_config "$1" "$2" "$3"
  echo "f4: $1 (checkpoint.every $2, status.port $3) started $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" \
    | tee -a "$DIR/env.txt"
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 3 "$CELLGAN" train "$DIR/$1.yaml" \
    >"$DIR/$1.stdout" 2>"$DIR/$1.stderr" &
  local job=$! poller=
  if [ "$3" -ne 0 ]; then
    ( ok=0; while kill -0 "$job" 2>/dev/null; do
        curl -sf -o /dev/null "http://127.0.0.1:$3/status" && ok=$((ok + 1)); sleep 1
      done; echo "$ok" > "$DIR/$1.polls" ) &
    poller=$!
  fi
  wait "$job" || { echo "f4: $1 failed; see $DIR/$1.stderr" >&2; exit 1; }
  [ -z "$poller" ] || wait "$poller"
}
for i in $(seq "$PAIRS"); do
  port=0; [ "${F4_A_STATUS:-on}" = on ] && port=$(free_port)
  run "a$i" "${F4_A_EVERY:-1}" "$port"
  run "b$i" 0 0
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$DIR/env.txt"
/usr/bin/python3 tests/bench/f4_report.py "$DIR" | tee "$DIR/report.md"

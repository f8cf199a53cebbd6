// Fault injection (docs/operations.md, "Fault injection"): the faults a run
// is to suffer, placed by worker rank or cell and by generation, so a run
// with faults is reproducible. Pure values and queries: no Torch, no MPI;
// worker/fault_injector.h carries them out.
//
// A fault comes from the `faults:` list of the configuration, or from a
// `--fault` option of `cellgan train` (repeatable), in the mini-syntax
// KIND:PARAM=VALUE,PARAM=VALUE, e.g. `kill:rank=2,gen=3`. In YAML each
// entry is a mapping of `kind` and the same parameters:
//
//   faults:
//     - {kind: kill, rank: 2, gen: 3}
//     - {kind: nan, cell: 0, gen: 2}
//
// The kinds and their parameters (all integers; gen is 1-based, as in the
// logs: "generation 3" is the third; cells are numbered as in
// metrics.jsonl, 0 .. rows*cols-1; ranks are worker ranks 1..W):
//   kill                rank, gen           the rank SIGKILLs itself at the
//                                           start of generation gen
//   stall               rank, gen, seconds  the rank's process stops (all
//                                           threads, SIGSTOP) for `seconds`
//                                           at the start of gen, then goes on
//   nan                 cell, gen           the cell's generators' weights
//                                           become NaN at the start of gen
//   delay               rank, [gen=1], ms   every training batch of the rank
//                                           takes `ms` longer, from gen on
//   corrupt-checkpoint  gen, [cell]         the checkpoint written at gen is
//                                           corrupted (one cell's part, or
//                                           all when no cell is given)
//   drop-heartbeats     rank, gen           from gen on, the rank's
//                                           communication thread sends the
//                                           master nothing while training
//                                           goes on
//
// Errors (InputError, one line): an unknown kind or parameter, a missing,
// repeated or non-integer parameter, and a value outside its range (a rank
// outside 1..W, a cell outside the grid, gen outside 1..generations). The
// line names `--fault 'TEXT'`, or the file and key (`x.yaml: faults[1].rank`).
//
// Thread-safety: plain values; FaultPlan is immutable once built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace YAML {
class Node;
class Emitter;
}  // namespace YAML

namespace cellgan {

struct Config;

enum class FaultKind { kKill, kStall, kNan, kDelay, kCorruptCheckpoint, kDropHeartbeats };
// "kill", "stall", "nan", "delay", "corrupt-checkpoint", "drop-heartbeats".
const char* to_string(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kKill;
  std::int64_t rank = 0;     // worker rank 1..W; 0 for nan and corrupt-checkpoint
  std::int64_t cell = -1;    // cell 0..rows*cols-1; -1 for the ranked kinds, and "every cell" for corrupt-checkpoint
  std::int64_t gen = 0;      // 1-based generation
  std::int64_t seconds = 0;  // stall only
  std::int64_t ms = 0;       // delay only

  bool operator==(const Fault& other) const;
  bool operator!=(const Fault& other) const { return !(*this == other); }
};

// The --fault form: the kind, then its parameters in the order listed
// above, optional ones only when set ("delay:rank=1,gen=1,ms=50").
std::string to_text(const Fault& fault);
// For logs and events.log: "kill worker rank 2 at the start of generation 3".
std::string describe(const Fault& fault);

// Parses one --fault value. Checks the syntax and what needs no run
// (seconds and ms >= 1); fault_misfit() checks the rest. Throws InputError
// "--fault 'TEXT': what was expected".
Fault parse_fault_option(const std::string& text);

// Reads the `faults:` value of a configuration: a list (possibly empty or
// null) of mappings. Throws InputError "SOURCE: faults[i].key: ...".
std::vector<Fault> read_faults(const YAML::Node& node, const std::string& source);
// Emits `faults` as a YAML list of flow mappings (the caller has emitted the key).
void write_faults(YAML::Emitter& out, const std::vector<Fault>& faults);

// Why a fault does not fit a run: the parameter and what was expected.
struct FaultMisfit {
  std::string param;  // "rank", "cell", "gen"
  std::string what;   // "5 is out of range: expected 1..2 (the worker ranks)"
};
// Checks the fault's placement against the configuration (grid, generations)
// and, when `workers` > 0, the worker count; nullopt when it fits.
std::optional<FaultMisfit> fault_misfit(const Fault& fault, const Config& config, int workers);

// Checks the configuration's faults against `workers` and the command
// line's (--fault) against the run, then appends the latter to
// config.faults. Throws InputError, one line naming the file's
// faults[i].key or the --fault value.
void add_command_line_faults(Config& config, const std::vector<Fault>& command_line, int workers);

// The faults of a run, with the queries the injectors ask.
class FaultPlan {
 public:
  FaultPlan() = default;
  explicit FaultPlan(std::vector<Fault> faults) : faults_(std::move(faults)) {}

  const std::vector<Fault>& faults() const { return faults_; }
  bool empty() const { return faults_.empty(); }

  // The kill, stall and drop-heartbeats faults of worker `rank` that strike
  // at the start of generation `gen`, in plan order.
  std::vector<Fault> at_generation_start(int rank, std::int64_t gen) const;
  // The delay of every training batch of `rank` in generation `gen`: the
  // sum of its delay faults from a generation <= gen, in ms (0 = none).
  std::int64_t batch_delay_ms(int rank, std::int64_t gen) const;
  // A delay of `rank` begins at `gen` (for the events line).
  bool delay_starts(int rank, std::int64_t gen) const;
  // A nan fault poisons `cell` at the start of `gen`.
  bool poisons(int cell, std::int64_t gen) const;
  // The checkpoint written at `gen` is to be corrupted for `cell`: a
  // corrupt-checkpoint fault at gen names the cell, or no cell.
  bool corrupts_checkpoint(std::int64_t gen, int cell) const;
  // The corrupt-checkpoint faults at `gen` (cell -1: the whole checkpoint).
  std::vector<Fault> checkpoint_corruptions(std::int64_t gen) const;

 private:
  std::vector<Fault> faults_;
};

}  // namespace cellgan

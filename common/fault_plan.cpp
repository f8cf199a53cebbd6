// Fault plans: parsing, checking and querying (see fault_plan.h).
#include "common/fault_plan.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <utility>

#include "common/config.h"
#include "common/error.h"

namespace cellgan {
namespace {

using I = std::int64_t;

// One parameter of a kind: its name, member, whether it may be left out,
// its default then, its lowest value, and its highest known without a run.
struct Param {
  const char* name;
  I Fault::*field;
  bool optional;
  I fallback;
  I lo;
  I hi;
};

struct KindSpec {
  FaultKind kind;
  const char* name;
  std::vector<Param> params;  // in the order of the --fault form
  const char* usage;          // the --fault form, for messages
};

constexpr I kMax = INT64_MAX;
const Param kRank{"rank", &Fault::rank, false, 0, 1, kMax};
const Param kGen{"gen", &Fault::gen, false, 0, 1, kMax};
const Param kCell{"cell", &Fault::cell, false, -1, 0, kMax};
const Param kSeconds{"seconds", &Fault::seconds, false, 0, 1, 86400};
const Param kMs{"ms", &Fault::ms, false, 0, 1, 3600000};
const Param kGenFromFirst{"gen", &Fault::gen, true, 1, 1, kMax};
const Param kAnyCell{"cell", &Fault::cell, true, -1, 0, kMax};

const std::vector<KindSpec>& kinds() {
  static const std::vector<KindSpec> specs = {
      {FaultKind::kKill, "kill", {kRank, kGen}, "kill:rank=R,gen=G"},
      {FaultKind::kStall, "stall", {kRank, kGen, kSeconds}, "stall:rank=R,gen=G,seconds=S"},
      {FaultKind::kNan, "nan", {kCell, kGen}, "nan:cell=C,gen=G"},
      {FaultKind::kDelay, "delay", {kRank, kGenFromFirst, kMs}, "delay:rank=R[,gen=G],ms=M"},
      {FaultKind::kCorruptCheckpoint, "corrupt-checkpoint", {kGen, kAnyCell}, "corrupt-checkpoint:gen=G[,cell=C]"},
      {FaultKind::kDropHeartbeats, "drop-heartbeats", {kRank, kGen}, "drop-heartbeats:rank=R,gen=G"},
  };
  return specs;
}

const KindSpec& spec_of(FaultKind kind) {
  for (const KindSpec& s : kinds())
    if (s.kind == kind) return s;
  throw std::logic_error("fault_plan: unknown fault kind");
}

const KindSpec* find_kind(const std::string& name) {
  for (const KindSpec& s : kinds())
    if (name == s.name) return &s;
  return nullptr;
}

std::string kind_list() {
  std::string list;
  for (const KindSpec& s : kinds()) list += (list.empty() ? "" : ", ") + std::string(s.name);
  return list;
}

const Param* find_param(const KindSpec& spec, const std::string& name) {
  for (const Param& p : spec.params)
    if (name == p.name) return &p;
  return nullptr;
}

std::string range_text(I lo, I hi) {
  return hi == kMax ? fmt::format(">= {}", lo) : fmt::format("{}..{}", lo, hi);
}

// Why `value` is not allowed for `p` before the run is known, or "".
std::string static_range(const Param& p, I value) {
  if (value >= p.lo && value <= p.hi) return "";
  return fmt::format("{} is out of range: expected {}", value, range_text(p.lo, p.hi));
}

// Builds a fault of `spec` from its given parameters. `given` holds the
// parameters read, by name; `error(param, what)` makes the InputError to
// throw ("" for the fault as a whole).
template <typename Error>
Fault assemble(const KindSpec& spec, const std::vector<std::pair<std::string, I>>& given, const Error& error) {
  Fault f;
  f.kind = spec.kind;
  std::set<std::string> seen;
  for (const auto& [name, value] : given) {
    const Param* p = find_param(spec, name);
    if (!p) throw error("", fmt::format("{} takes no parameter '{}': expected {}", spec.name, name, spec.usage));
    if (!seen.insert(name).second) throw error("", fmt::format("'{}' is given twice: expected {}", name, spec.usage));
    const std::string why = static_range(*p, value);
    if (!why.empty()) throw error(name, why);
    f.*(p->field) = value;
  }
  for (const Param& p : spec.params) {
    if (seen.count(p.name)) continue;
    if (!p.optional) throw error("", fmt::format("missing {}: expected {}", p.name, spec.usage));
    f.*(p.field) = p.fallback;
  }
  return f;
}

}  // namespace

const char* to_string(FaultKind kind) { return spec_of(kind).name; }

bool Fault::operator==(const Fault& o) const {
  return kind == o.kind && rank == o.rank && cell == o.cell && gen == o.gen && seconds == o.seconds && ms == o.ms;
}

std::string to_text(const Fault& fault) {
  const KindSpec& spec = spec_of(fault.kind);
  std::string text = std::string(spec.name) + ":";
  bool first = true;
  for (const Param& p : spec.params) {
    const I value = fault.*(p.field);
    if (p.optional && p.field == &Fault::cell && value < 0) continue;  // every cell
    text += fmt::format("{}{}={}", first ? "" : ",", p.name, value);
    first = false;
  }
  return text;
}

std::string describe(const Fault& f) {
  switch (f.kind) {
    case FaultKind::kKill: return fmt::format("kill worker rank {} at the start of generation {}", f.rank, f.gen);
    case FaultKind::kStall:
      return fmt::format("stall worker rank {} for {} s at the start of generation {}", f.rank, f.seconds, f.gen);
    case FaultKind::kNan: return fmt::format("nan in the generators of cell {} at the start of generation {}", f.cell, f.gen);
    case FaultKind::kDelay:
      return fmt::format("delay worker rank {} by {} ms per batch from generation {}", f.rank, f.ms, f.gen);
    case FaultKind::kCorruptCheckpoint:
      return f.cell < 0 ? fmt::format("corrupt the checkpoint of generation {}", f.gen)
                        : fmt::format("corrupt cell {} in the checkpoint of generation {}", f.cell, f.gen);
    case FaultKind::kDropHeartbeats:
      return fmt::format("drop the heartbeats of worker rank {} from generation {}", f.rank, f.gen);
  }
  return "?";
}

Fault parse_fault_option(const std::string& text) {
  const auto error = [&](const std::string& param, const std::string& what) {
    return InputError(fmt::format("--fault '{}': {}{}", text, param.empty() ? "" : param + ": ", what));
  };
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const KindSpec* spec = find_kind(kind);
  if (!spec) {
    throw error("", kind.empty() ? fmt::format("expected KIND:PARAM=VALUE,..., KIND one of {}", kind_list())
                                 : fmt::format("unknown kind '{}': expected one of {}", kind, kind_list()));
  }
  std::vector<std::pair<std::string, I>> given;
  const std::string params = colon == std::string::npos ? "" : text.substr(colon + 1);
  std::size_t at = 0;
  while (colon != std::string::npos && at <= params.size()) {
    const std::size_t comma = std::min(params.find(',', at), params.size());
    const std::string item = params.substr(at, comma - at);
    const std::size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0)
      throw error("", fmt::format("'{}' is not PARAM=VALUE: expected {}", item, spec->usage));
    const std::string name = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    I v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      if (!find_param(*spec, name))
        throw error("", fmt::format("{} takes no parameter '{}': expected {}", spec->name, name, spec->usage));
      throw error(name, fmt::format("expected an integer, got '{}'", value));
    }
    given.emplace_back(name, v);
    at = comma + 1;
  }
  return assemble(*spec, given, error);
}

std::vector<Fault> read_faults(const YAML::Node& node, const std::string& source) {
  std::vector<Fault> faults;
  if (!node || node.IsNull()) return faults;
  if (!node.IsSequence())
    throw InputError(fmt::format("{}: faults: expected a list of faults, e.g. - {{kind: kill, rank: 2, gen: 3}}", source));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string where = fmt::format("{}: faults[{}]", source, i);
    const auto error = [&](const std::string& param, const std::string& what) {
      return InputError(fmt::format("{}{}: {}", where, param.empty() ? "" : "." + param, what));
    };
    const YAML::Node entry = node[i];
    if (!entry.IsMap())
      throw error("", fmt::format("expected a mapping of `kind` ({}) and its parameters", kind_list()));
    const YAML::Node kind_node = entry["kind"];
    if (!kind_node) throw error("kind", fmt::format("missing: expected one of {}", kind_list()));
    if (!kind_node.IsScalar()) throw error("kind", fmt::format("expected one of {}", kind_list()));
    const KindSpec* spec = find_kind(kind_node.Scalar());
    if (!spec) throw error("kind", fmt::format("'{}' is not one of {}", kind_node.Scalar(), kind_list()));
    std::vector<std::pair<std::string, I>> given;
    std::set<std::string> keys;
    for (const auto& kv : entry) {
      const std::string key = kv.first.as<std::string>();
      if (!keys.insert(key).second) throw error(key, "duplicate key");
      if (key == "kind") continue;
      if (!find_param(*spec, key)) throw error(key, fmt::format("unknown key: {} takes {}", spec->name, spec->usage));
      if (!kv.second.IsScalar()) throw error(key, "expected an integer");
      I v = 0;
      try {
        v = kv.second.as<I>();
      } catch (const YAML::Exception&) {
        throw error(key, fmt::format("expected an integer, got '{}'", kv.second.Scalar()));
      }
      given.emplace_back(key, v);
    }
    faults.push_back(assemble(*spec, given, error));
  }
  return faults;
}

void write_faults(YAML::Emitter& out, const std::vector<Fault>& faults) {
  if (faults.empty()) out << YAML::Flow;  // "faults: []"
  out << YAML::BeginSeq;
  for (const Fault& f : faults) {
    const KindSpec& spec = spec_of(f.kind);
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << spec.name;
    for (const Param& p : spec.params) {
      const I value = f.*(p.field);
      if (p.optional && p.field == &Fault::cell && value < 0) continue;
      out << YAML::Key << p.name << YAML::Value << value;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

std::optional<FaultMisfit> fault_misfit(const Fault& f, const Config& config, int workers) {
  const KindSpec& spec = spec_of(f.kind);
  const I cells = config.grid.rows * config.grid.cols;
  for (const Param& p : spec.params) {
    const I value = f.*(p.field);
    if (p.field == &Fault::gen && value > config.training.generations)
      return FaultMisfit{"gen", fmt::format("{} is out of range: expected 1..{} (training.generations)", value,
                                            config.training.generations)};
    if (p.field == &Fault::cell && value >= cells)
      return FaultMisfit{"cell", fmt::format("{} is out of range: expected 0..{} (the cells of the {}x{} grid)", value,
                                             cells - 1, config.grid.rows, config.grid.cols)};
    if (p.field == &Fault::rank && workers > 0 && value > workers)
      return FaultMisfit{"rank", fmt::format("{} is out of range: expected 1..{} (the worker ranks)", value, workers)};
  }
  return std::nullopt;
}

std::vector<Fault> FaultPlan::at_generation_start(int rank, std::int64_t gen) const {
  std::vector<Fault> out;
  for (const Fault& f : faults_) {
    const bool at_start =
        f.kind == FaultKind::kKill || f.kind == FaultKind::kStall || f.kind == FaultKind::kDropHeartbeats;
    if (at_start && f.rank == rank && f.gen == gen) out.push_back(f);
  }
  return out;
}

std::int64_t FaultPlan::batch_delay_ms(int rank, std::int64_t gen) const {
  std::int64_t ms = 0;
  for (const Fault& f : faults_)
    if (f.kind == FaultKind::kDelay && f.rank == rank && f.gen <= gen) ms += f.ms;
  return ms;
}

bool FaultPlan::delay_starts(int rank, std::int64_t gen) const {
  for (const Fault& f : faults_)
    if (f.kind == FaultKind::kDelay && f.rank == rank && f.gen == gen) return true;
  return false;
}

bool FaultPlan::poisons(int cell, std::int64_t gen) const {
  for (const Fault& f : faults_)
    if (f.kind == FaultKind::kNan && f.cell == cell && f.gen == gen) return true;
  return false;
}

bool FaultPlan::corrupts_checkpoint(std::int64_t gen, int cell) const {
  for (const Fault& f : checkpoint_corruptions(gen))
    if (f.cell < 0 || f.cell == cell) return true;
  return false;
}

std::vector<Fault> FaultPlan::checkpoint_corruptions(std::int64_t gen) const {
  std::vector<Fault> out;
  for (const Fault& f : faults_)
    if (f.kind == FaultKind::kCorruptCheckpoint && f.gen == gen) out.push_back(f);
  return out;
}

void add_command_line_faults(Config& config, const std::vector<Fault>& command_line, int workers) {
  for (std::size_t i = 0; i < config.faults.size(); ++i)
    if (const auto misfit = fault_misfit(config.faults[i], config, workers))
      throw InputError(fmt::format("{}: faults[{}].{}: {}", config.source, i, misfit->param, misfit->what));
  for (const Fault& f : command_line) {
    if (const auto misfit = fault_misfit(f, config, workers))
      throw InputError(fmt::format("--fault '{}': {}: {}", to_text(f), misfit->param, misfit->what));
    config.faults.push_back(f);
  }
  for (const Fault& f : config.faults)
    if (f.kind == FaultKind::kCorruptCheckpoint &&
        (config.checkpoint.every == 0 || f.gen % config.checkpoint.every != 0 || f.gen >= config.training.generations))
      throw InputError(fmt::format("{}: fault {}: gen {} is not a checkpoint of the run: expected a multiple of "
                                   "checkpoint.every ({}) below training.generations ({})",
                                   config.source, to_text(f), f.gen, config.checkpoint.every,
                                   config.training.generations));
}

}  // namespace cellgan

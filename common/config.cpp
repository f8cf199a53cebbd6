// Parsing, writing and comparing the YAML configuration (see config.h),
// driven by the key tables of config_keys.h.
#include "common/config.h"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/config_keys.h"
#include "common/error.h"
#include "common/path_checks.h"
#include "common/printable.h"

namespace cellgan {
namespace {

// A configuration is a few kilobytes; more is not one.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// Reads one YAML mapping: the keys of one section, in three passes as the
// checks have always run. First every key's type (and names), then the keys
// nobody asked for, then every key's own range, then the section's rules.
class SectionReader {
 public:
  SectionReader(const YAML::Node& node, std::string prefix, const std::string& source)
      : node_(node), prefix_(std::move(prefix)), source_(source) {
    if (present() && !node_.IsMap()) fail("", "expected a mapping");
    // A section that is there but empty ("training:", "--set training=null")
    // would silently stand for its defaults: only leaving it out does.
    if (!prefix_.empty() && node_.IsDefined() && node_.IsNull())
      fail("", "null: expected a mapping of the section's keys (leave the section out for its defaults)");
  }

  void read_keys(const ConfigSection& section, Config& c) {
    for (const ConfigKey& key : section.keys) {
      seen_.insert(key.name);
      if (!present()) continue;
      const YAML::Node value = node_[key.name];
      if (!value) continue;
      const std::string why = key.read(value, c);
      if (!why.empty()) fail(key.name, why);
    }
  }

  // The mapping under `key`, an undefined node if there is none.
  YAML::Node child(const std::string& key) {
    seen_.insert(key);
    if (!present()) return YAML::Node();
    return node_[key];
  }

  void reject_unknown() const {
    if (!present()) return;
    std::set<std::string> keys;
    for (const auto& kv : node_) {
      if (!kv.first.IsScalar()) fail("", "a key that is not a name: expected name: value pairs");
      const std::string key = kv.first.as<std::string>();
      if (!keys.insert(key).second) fail(key, "duplicate key");
      if (!seen_.count(key)) fail(key, "unknown key");
    }
  }

  void check_keys(const ConfigSection& section, const Config& c) const {
    for (const ConfigKey& key : section.keys) {
      const std::string why = key.check(c);
      if (!why.empty()) fail(key.name, why);
    }
    if (section.rules) section.rules(c, [this](const std::string& key, const std::string& what) { fail(key, what); });
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::string path = prefix_;
    if (!key.empty()) path += (path.empty() ? "" : ".") + key;
    throw InputError(fmt::format("{}: {}: {}", source_, path.empty() ? "<top>" : path, what));
  }

 private:
  bool present() const { return node_ && !node_.IsNull(); }

  const YAML::Node node_;
  std::string prefix_;
  const std::string& source_;
  std::set<std::string> seen_;
};

// parse_config, its messages as they are made.
Config read_config(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: line {}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  Config c;
  c.source = source;
  const std::vector<ConfigSection>& sections = config_sections();
  const ConfigSection& top_section = sections.front();
  SectionReader top(root, "", c.source);
  if (!root || root.IsNull()) top.fail("", "the file is empty: expected a mapping of sections");
  top.read_keys(top_section, c);
  for (auto section = sections.begin() + 1; section != sections.end(); ++section) {
    SectionReader reader(top.child(section->name), section->name, c.source);
    reader.read_keys(*section, c);
    reader.reject_unknown();
    reader.check_keys(*section, c);
  }
  c.faults = read_faults(top.child("faults"), c.source);
  top.reject_unknown();
  top.check_keys(top_section, c);
  for (std::size_t i = 0; i < c.faults.size(); ++i)
    if (const auto misfit = fault_misfit(c.faults[i], c, /*workers=*/0))
      top.fail(fmt::format("faults[{}].{}", i, misfit->param), misfit->what);
  return c;
}

// load_config, its messages as they are made.
Config read_config_file(const std::string& path, const std::vector<std::string>& settings) {
  // Only a regular file: a FIFO or a device could block the open or never
  // end, and under mpirun each rank would read it differently.
  if (const std::string why = why_no_input_file(path); !why.empty())
    throw InputError(fmt::format("{}: {}: expected a YAML configuration file", path, why));
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot read the configuration file", path));
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(fmt::format("{}: cannot read the configuration file", path));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes)
    throw InputError(fmt::format("{}: longer than {} bytes: expected a YAML configuration file", path, kMaxConfigBytes));
  if (settings.empty()) return parse_config(text, path);
  const std::string source = fmt::format("{} (with --set)", path);
  return parse_config(apply_settings(text, settings, path), source);
}

}  // namespace

// The messages echo the file's bytes, its path and the settings: printable()
// keeps them one line of text whatever those hold.
Config parse_config(const std::string& yaml_text, const std::string& source) {
  try {
    return read_config(yaml_text, source);
  } catch (const InputError& e) {
    throw InputError(printable(e.what()));
  }
}

Config load_config(const std::string& path) { return load_config(path, {}); }

Config load_config(const std::string& path, const std::vector<std::string>& settings) {
  try {
    return read_config_file(path, settings);
  } catch (const InputError& e) {
    throw InputError(printable(e.what()));
  }
}

std::string to_yaml(const Config& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const ConfigSection& section : config_sections()) {
    if (!section.name.empty()) out << YAML::Key << section.name << YAML::Value << YAML::BeginMap;
    for (const ConfigKey& key : section.keys) {
      out << YAML::Key << key.name << YAML::Value;
      key.write(out, c);
    }
    if (!section.name.empty()) out << YAML::EndMap;
  }
  out << YAML::Key << "faults" << YAML::Value;
  write_faults(out, c.faults);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::string> config_differences(const Config& a, const Config& b) {
  std::vector<std::string> differences;
  for (const ConfigSection& section : config_sections())
    for (const ConfigKey& key : section.keys)
      if (!key.same(a, b)) differences.push_back(fmt::format("{}: {} vs {}", key_path(section, key), key.show(a), key.show(b)));
  if (a.faults != b.faults) {
    const auto show = [](const std::vector<Fault>& faults) {
      std::vector<std::string> texts;
      for (const Fault& f : faults) texts.push_back(to_text(f));
      return texts.empty() ? std::string("none") : fmt::format("{}", fmt::join(texts, " "));
    };
    differences.push_back(fmt::format("faults: {} vs {}", show(a.faults), show(b.faults)));
  }
  return differences;
}

bool may_change_on_resume(const std::string& difference) {
  for (const char* prefix : {"output_dir:", "runtime.", "checkpoint.", "status.", "faults", "training.generations:"})
    if (difference.rfind(prefix, 0) == 0) return true;
  return false;
}

bool same_config(const Config& a, const Config& b) { return config_differences(a, b).empty(); }

bool is_device_spec(const std::string& spec) {
  if (spec == "auto" || spec == "cpu" || spec == "cuda") return true;
  const std::string prefix = "cuda:";
  if (spec.size() <= prefix.size() || spec.size() > prefix.size() + 4 || spec.compare(0, prefix.size(), prefix) != 0)
    return false;
  for (std::size_t i = prefix.size(); i < spec.size(); ++i)
    if (spec[i] < '0' || spec[i] > '9') return false;
  return std::stoi(spec.substr(prefix.size())) < 1024;
}

}  // namespace cellgan

// The configuration's keys, each described once: one table per section.
//
// Every section of the YAML file (the top level, data, network, grid,
// training, evaluation, runtime) has one table in config_keys.cpp. An entry
// gives the key's name, its member in the section struct of config.h, its
// type, its allowed values and a one-line doc; its default is the member's
// initializer in config.h. Everything else is made from the tables:
// parse_config reads and checks each key through its entry, to_yaml writes
// them, config_differences compares them, and the key tables of
// docs/configuration.md are generated from them (config_reference.h).
//
// Rules that involve two keys (training.n_replacements <= population_size,
// a toy network for toy data, ...) are the section's `rules`, written next
// to its table.
//
// Thread-safety: config_sections() builds the tables on first use (a
// function-local static) and never changes them; any thread may read them.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace YAML {
class Node;
class Emitter;
}  // namespace YAML

namespace cellgan {

struct Config;

// One key of a section. The functions address the key inside a whole Config.
struct ConfigKey {
  std::string name;     // the YAML key inside its section
  std::string type;     // for people: integer, non-negative integer, number, boolean, string, choice
  std::string allowed;  // for people: ">= 1", "1..64", "in [0, 1)", "non-empty", the names of a choice; "" = any
  std::string doc;      // one line of Markdown
  // How an empty default is resolved at run time ("per dataset"), or "".
  std::string default_note;

  // Reads the key's YAML value into `c`. Returns why it cannot ("expected an
  // integer, got 'ten'", "'hinge' is not one of bce, ...") or "" when read.
  std::function<std::string(const YAML::Node& value, Config& c)> read;
  // The key's own range: why its value in `c` is not allowed
  // ("0 is out of range: expected 1..64"), or "".
  std::function<std::string(const Config& c)> check;
  // Emits the value (the caller has emitted the key).
  std::function<void(YAML::Emitter& out, const Config& c)> write;
  // The value as text: "100", "0.0002", "true", "bce", "runs/default".
  std::function<std::string(const Config& c)> show;
  std::function<bool(const Config& a, const Config& b)> same;
  // Sets a value that is allowed by the key's own entry and differs from
  // the one in `c`; false when the key allows only one value. For tests.
  std::function<bool(Config& c)> change;
};

// Raises the InputError of a key of the section being checked:
// "SOURCE: section.key: what". Never returns.
using KeyFailure = std::function<void(const std::string& key, const std::string& what)>;

struct ConfigSection {
  std::string name;             // "" for the top level
  std::vector<ConfigKey> keys;  // in the order to_yaml writes them
  // Rules that involve two keys, checked after every key's own range:
  // calls fail(key, what) for the first rule broken. `key` may name a key of
  // another section ("network.kind") when the section is the top level.
  std::function<void(const Config& c, const KeyFailure& fail)> rules;
};

// The top level first, then data, network, grid, training, evaluation,
// runtime: the order of the YAML that to_yaml writes.
const std::vector<ConfigSection>& config_sections();

// "section.key", or "key" at the top level.
std::string key_path(const ConfigSection& section, const ConfigKey& key);

}  // namespace cellgan

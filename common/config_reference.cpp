// Generating the key tables of docs/configuration.md (see config_reference.h).
#include "common/config_reference.h"

#include <fmt/core.h>

#include <regex>
#include <set>

#include "common/config.h"
#include "common/error.h"

namespace cellgan {
namespace {

std::string label(const ConfigSection& section) {
  return section.name.empty() ? "top-level keys" : section.name + " keys";
}

// A table cell must not break the row.
std::string cell(std::string text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string default_cell(const ConfigKey& key, const Config& defaults) {
  const std::string value = key.show(defaults);
  const bool numeric = key.type.find("integer") != std::string::npos || key.type == "number";
  std::string text = value.empty() ? "empty" : numeric ? value : "`" + value + "`";
  if (!key.default_note.empty()) text += ": " + key.default_note;
  return text;
}

}  // namespace

std::string begin_marker(const ConfigSection& section) { return "<!-- generated: " + label(section) + " -->"; }
std::string end_marker(const ConfigSection& section) { return "<!-- end generated: " + label(section) + " -->"; }

std::string reference_table(const ConfigSection& section) {
  const Config defaults;
  std::string table = "| key | type | default | allowed | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const ConfigKey& key : section.keys)
    table += fmt::format("| `{}` | {} | {} | {} | {} |\n", key.name, key.type, cell(default_cell(key, defaults)),
                         key.allowed.empty() ? "any" : cell(key.allowed), cell(key.doc));
  return table;
}

std::string with_generated_tables(const std::string& page, const std::string& source) {
  std::string out = page;
  std::set<std::string> labels;
  for (const ConfigSection& section : config_sections()) {
    labels.insert(label(section));
    const std::string begin = begin_marker(section) + "\n";
    const std::string end = end_marker(section);
    const std::size_t b = out.find(begin);
    const std::size_t e = out.find(end);
    if (b == std::string::npos || e == std::string::npos || e < b + begin.size())
      throw InputError(fmt::format("{}: no '{}' ... '{}' lines around the table of the {}", source, begin_marker(section),
                                   end, label(section)));
    if (out.find(begin, b + 1) != std::string::npos || out.find(end, e + 1) != std::string::npos)
      throw InputError(fmt::format("{}: the markers of the {} appear twice", source, label(section)));
    out.replace(b + begin.size(), e - (b + begin.size()), reference_table(section));
  }
  const std::regex any_marker(R"(<!-- (?:end )?generated: ([a-z_-]+ keys) -->)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), any_marker); it != std::sregex_iterator(); ++it)
    if (!labels.count((*it)[1].str()))
      throw InputError(fmt::format("{}: '{}' names no section of the configuration", source, it->str()));
  return out;
}

}  // namespace cellgan

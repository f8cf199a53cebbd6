// `cellgan train --set KEY=VALUE`: keys replaced or added in the YAML text
// before it is parsed (config.h).
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "common/printable.h"

namespace cellgan {
namespace {

// "a.b.c" as its parts; empty parts are not a key.
std::vector<std::string> key_parts(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t dot = key.find('.', begin);
    parts.push_back(key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  return parts;
}

// apply_settings, its messages as they are made.
std::string settings_applied(const std::string& yaml_text, const std::vector<std::string>& settings,
                             const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: line {}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping of sections", source));
  for (const std::string& setting : settings) {
    // Checked first: writing the YAML back would turn such bytes into U+FFFD
    // and the messages below could no longer show them.
    if (printable(setting) != setting)
      throw InputError(fmt::format("--set {}: holds bytes that are not printable UTF-8 text (shown as \\xNN): "
                                   "expected KEY=VALUE text",
                                   printable(setting)));
    const std::size_t equals = setting.find('=');
    const std::string key = setting.substr(0, equals);
    const std::vector<std::string> parts = key_parts(key);
    bool named = equals != std::string::npos;
    for (const std::string& part : parts) named = named && !part.empty();
    if (!named)
      throw InputError(fmt::format("--set {}: expected KEY=VALUE, e.g. --set grid.rows=3", setting));
    YAML::Node value;
    try {
      value = YAML::Load(setting.substr(equals + 1));
    } catch (const YAML::Exception& e) {
      throw InputError(fmt::format("--set {}: the value is not valid YAML: {}", setting, e.msg));
    }
    // yaml-cpp's operator[] on a Node is a reference into the tree; walk
    // down with fresh nodes so each step re-binds instead of assigning.
    std::vector<YAML::Node> path{root};
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      const YAML::Node existing = path.back()[parts[i]];
      if (existing.IsDefined() && !existing.IsNull() && !existing.IsMap())
        throw InputError(fmt::format("--set {}: {} is not a section", setting, parts[i]));
      if (!existing.IsDefined() || existing.IsNull()) path.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
      path.push_back(path.back()[parts[i]]);
    }
    path.back()[parts.back()] = value;
  }
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

}  // namespace

std::string apply_settings(const std::string& yaml_text, const std::vector<std::string>& settings,
                           const std::string& source) {
  try {
    return settings_applied(yaml_text, settings, source);
  } catch (const InputError& e) {
    throw InputError(printable(e.what()));  // the settings and the file may hold any bytes
  }
}

}  // namespace cellgan

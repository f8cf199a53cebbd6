// Tests of common/config_keys.h: the key tables drive parsing, to_yaml and
// config_differences for every key, so a key added to a table is covered here
// without a line of its own.
#include "common/config_keys.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;

// `layout` chooses the kind of job, and each layout's rules tie it to other
// keys (per_class: a K×1 grid of image classes), so changing it alone, or
// with every other key, breaks a rule by design. It keeps its default here;
// each layout's own configuration tests read it.
bool is_layout(const ConfigSection& section, const ConfigKey& key) {
  return section.name.empty() && key.name == "layout";
}

// Every key set to a value other than its default, through the tables.
// Keys that allow one value only, and layout, keep it and are listed in
// `single_valued`.
Config every_key_changed(std::vector<std::string>* single_valued = nullptr) {
  Config c;
  for (const ConfigSection& section : config_sections())
    for (const ConfigKey& key : section.keys)
      if ((is_layout(section, key) || !key.change(c)) && single_valued != nullptr)
        single_valued->push_back(key_path(section, key));
  return c;
}

std::size_t key_count() {
  std::size_t n = 0;
  for (const ConfigSection& section : config_sections()) n += section.keys.size();
  return n;
}

TEST(ConfigKeys, NamesAreUniqueWithinASectionAndSectionsAreNotKeys) {
  std::set<std::string> top_names;
  for (const ConfigSection& section : config_sections()) {
    if (!section.name.empty()) {
      EXPECT_TRUE(top_names.insert(section.name).second) << "section " << section.name;
    }
    std::set<std::string> names;
    for (const ConfigKey& key : section.keys) {
      EXPECT_TRUE(names.insert(key.name).second) << "twice: " << key_path(section, key);
      EXPECT_FALSE(key.doc.empty()) << key_path(section, key) << " has no doc";
      EXPECT_FALSE(key.type.empty()) << key_path(section, key) << " has no type";
      if (section.name.empty()) {
        EXPECT_TRUE(top_names.insert(key.name).second) << "twice: " << key.name;
      }
    }
  }
  EXPECT_EQ(config_sections().front().name, "") << "the top level comes first";
}

TEST(ConfigKeys, EveryKeyCanTakeANonDefaultValue) {
  std::vector<std::string> single_valued;
  const Config c = every_key_changed(&single_valued);
  // Only layout is kept today; a new single-valued key is fine, but the
  // round trip below then cannot tell whether it is read at all.
  EXPECT_EQ(single_valued, std::vector<std::string>{"layout"});
  EXPECT_EQ(config_differences(Config{}, c).size(), key_count() - single_valued.size());
}

TEST(ConfigKeys, RoundTripOfEveryKeyChanged) {
  const Config c = every_key_changed();
  Config back;
  try {
    back = parse_config(to_yaml(c), "every-key.yaml");
  } catch (const InputError& e) {
    FAIL() << "the changed values break a rule; adjust ConfigKey::change or the rule: " << e.what() << "\n"
           << to_yaml(c);
  }
  EXPECT_EQ(config_differences(c, back), std::vector<std::string>{}) << to_yaml(c);
  EXPECT_TRUE(same_config(c, back));
  EXPECT_EQ(back.source, "every-key.yaml");
}

TEST(ConfigKeys, RoundTripOfTheDefaults) {
  const Config back = parse_config(to_yaml(Config{}), "defaults.yaml");
  EXPECT_EQ(config_differences(Config{}, back), std::vector<std::string>{});
}

// Each key's comparison looks at its own member and no other.
TEST(ConfigKeys, EachKeyIsComparedOnItsOwn) {
  for (const ConfigSection& section : config_sections())
    for (const ConfigKey& key : section.keys) {
      const std::string path = key_path(section, key);
      Config c;
      if (!key.change(c)) continue;
      const std::vector<std::string> differences = config_differences(Config{}, c);
      ASSERT_EQ(differences.size(), 1u) << path;
      EXPECT_EQ(differences[0].rfind(path + ": ", 0), 0u) << differences[0];
      EXPECT_FALSE(same_config(Config{}, c)) << path;
    }
}

// Each key is read from its own YAML key: written alone into a file of
// defaults, it comes back and changes nothing else.
TEST(ConfigKeys, EachKeyIsReadFromItsOwnYamlKey) {
  for (const ConfigSection& section : config_sections())
    for (const ConfigKey& key : section.keys) {
      const std::string path = key_path(section, key);
      Config c;
      if (is_layout(section, key) || !key.change(c)) continue;
      YAML::Emitter value;
      key.write(value, c);
      const std::string line = key.name + ": " + value.c_str() + "\n";
      const std::string yaml = section.name.empty() ? line : section.name + ":\n  " + line;
      // A rule may refuse one key changed alone (n_replacements > population_size).
      Config back;
      try {
        back = parse_config(yaml, "one-key.yaml");
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
        continue;
      }
      EXPECT_EQ(config_differences(c, back), std::vector<std::string>{}) << yaml;
    }
}

TEST(ConfigKeys, ToYamlWritesEveryKeyAndNothingElse) {
  const YAML::Node root = YAML::Load(to_yaml(Config{}));
  ASSERT_TRUE(root.IsMap());
  std::set<std::string> expected;
  std::set<std::string> written;
  for (const ConfigSection& section : config_sections()) {
    if (!section.name.empty()) {
      ASSERT_TRUE(root[section.name].IsMap()) << section.name;
    }
    for (const ConfigKey& key : section.keys) expected.insert(key_path(section, key));
  }
  expected.insert("faults");  // a list, not a table (common/fault_plan.h)
  for (const auto& kv : root) {
    const std::string name = kv.first.as<std::string>();
    if (kv.second.IsMap())
      for (const auto& inner : kv.second) written.insert(name + "." + inner.first.as<std::string>());
    else
      written.insert(name);
  }
  EXPECT_EQ(written, expected);
}

TEST(ConfigKeys, ToYamlKeepsTheTableOrder) {
  const std::string yaml = to_yaml(Config{});
  std::size_t at = 0;
  for (const ConfigSection& section : config_sections())
    for (const ConfigKey& key : section.keys) {
      const std::size_t found = yaml.find(key.name + ":", at);
      ASSERT_NE(found, std::string::npos) << key_path(section, key) << " out of order in:\n" << yaml;
      at = found;
    }
}

TEST(ConfigKeys, LayoutIsCoevolutionByDefault) {
  EXPECT_EQ(Config{}.layout, LayoutKind::kCoevolution);
  EXPECT_STREQ(to_string(LayoutKind::kCoevolution), "coevolution");
  EXPECT_EQ(parse_config("layout: coevolution\n", "layout.yaml").layout, LayoutKind::kCoevolution);
  EXPECT_NE(to_yaml(Config{}).find("layout: coevolution\n"), std::string::npos);
  const std::string message = input_error_of([] { parse_config("layout: islands\n", "configs/bad.yaml"); });
  for (const char* part : {"configs/bad.yaml: layout:", "'islands'", "coevolution"})
    EXPECT_NE(message.find(part), std::string::npos) << part << " missing in: " << message;
}

TEST(ConfigKeys, DifferencesNameTheKeyAndBothValues) {
  Config a;
  Config b;
  b.training.batch_size = 64;
  b.runtime.log_level = "warn";
  EXPECT_EQ(config_differences(a, b),
            (std::vector<std::string>{"training.batch_size: 100 vs 64", "runtime.log_level: info vs warn"}));
  b = a;
  b.source = "elsewhere.yaml";
  EXPECT_TRUE(same_config(a, b)) << "source is not a key";
}

}  // namespace
}  // namespace cellgan

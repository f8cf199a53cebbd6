// Every number a configuration holds has a range a real user would accept,
// with an upper bound: a learning rate of 1e30, `generations: 10^12`, NaN or
// infinity is one line naming the file and the key (issue 19, "bad input").
// Driven by the key tables, so a key added later is covered without a line
// of its own. Also the file-level errors of load_config: a folder, a file
// that never ends, keys that are not names.
#include "common/config.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/config_keys.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::TempDir;

// YAML setting one key of `section` to `value`.
std::string yaml_of(const ConfigSection& section, const ConfigKey& key, const std::string& value) {
  if (section.name.empty()) return key.name + ": " + value + "\n";
  return section.name + ":\n  " + key.name + ": " + value + "\n";
}

// The key's value is rejected with one line naming the file and the key.
void expect_rejected(const ConfigSection& section, const ConfigKey& key, const std::string& value) {
  const std::string path = key_path(section, key);
  SCOPED_TRACE(path + ": " + value);
  const std::string message = input_error_of([&] { parse_config(yaml_of(section, key, value), "configs/x.yaml"); });
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("configs/x.yaml: " + path + ": ", 0), 0u) << message;
}

// The numeric keys of the tables (the seed, any 64-bit value, aside).
template <typename F>
void for_each_numeric_key(F&& f) {
  int seen = 0;
  for (const ConfigSection& section : config_sections())
    for (const ConfigKey& key : section.keys)
      if (key.type == "integer" || key.type == "number") {
        f(section, key);
        ++seen;
      }
  EXPECT_GT(seen, 20) << "the tables lost their numeric keys";
}

TEST(ConfigRanges, EveryIntegerKeyRejectsHugeAndHugeNegativeValues) {
  for_each_numeric_key([](const ConfigSection& section, const ConfigKey& key) {
    expect_rejected(section, key, "1000000000000");
    expect_rejected(section, key, "-1000000000000");
  });
}

TEST(ConfigRanges, EveryNumberKeyRejectsNonFiniteAndAbsurdValues) {
  for_each_numeric_key([](const ConfigSection& section, const ConfigKey& key) {
    if (key.type != "number") return;
    for (const char* value : {"1.0e30", "-1.0e30", ".nan", ".inf", "-.inf"}) expect_rejected(section, key, value);
  });
}

TEST(ConfigRanges, EveryNumericKeyDocumentsItsBounds) {
  for_each_numeric_key([](const ConfigSection& section, const ConfigKey& key) {
    EXPECT_FALSE(key.allowed.empty()) << key_path(section, key);
  });
}

TEST(ConfigRanges, TheIssuesExamplesSayWhatIsExpected) {
  EXPECT_EQ(input_error_of([] { parse_config("training: {learning_rate: 1.0e30}\n", "x.yaml"); }),
            "x.yaml: training.learning_rate: 1e+30 is out of range: expected in (0, 1]");
  EXPECT_EQ(input_error_of([] { parse_config("training: {generations: 1000000000000}\n", "x.yaml"); }),
            "x.yaml: training.generations: 1000000000000 is out of range: expected 1..1000000");
  EXPECT_EQ(input_error_of([] { parse_config("runtime: {dead_after_ms: 99999999999}\n", "x.yaml"); }),
            "x.yaml: runtime.dead_after_ms: 99999999999 is out of range: expected > late_after_ms, which is 2000, "
            "and <= 3600000");
}

TEST(ConfigRanges, TheEdgesOfARangeAreAccepted) {
  EXPECT_NO_THROW(parse_config("training: {learning_rate: 1.0, generations: 1000000}\n", "x.yaml"));
  EXPECT_NO_THROW(parse_config("evaluation: {final_samples: 100000}\n", "x.yaml"));
  EXPECT_NO_THROW(parse_config("runtime: {dead_after_ms: 3600000}\n", "x.yaml"));
  input_error_of([] { parse_config("evaluation: {final_samples: 100001}\n", "x.yaml"); });
}

TEST(ConfigFile, AKeyThatIsNotANameIsOneLine) {
  const std::string message = input_error_of([] { parse_config("{[1, 2]: 3}\n", "x.yaml"); });
  EXPECT_NE(message.find("x.yaml: <top>: a key that is not a name"), std::string::npos) << message;
  const std::string inner = input_error_of([] { parse_config("grid: {{a: 1}: 2}\n", "x.yaml"); });
  EXPECT_NE(inner.find("x.yaml: grid: a key that is not a name"), std::string::npos) << inner;
}

TEST(ConfigFile, AFolderIsNamedAsOne) {
  TempDir tmp;
  const std::string message = input_error_of([&] { load_config(tmp.path().string()); });
  EXPECT_EQ(message, tmp.path().string() + ": is a folder: expected a YAML configuration file");
}

TEST(ConfigFile, ADeviceIsRefusedAtOnce) {
  const std::string message = input_error_of([] { load_config("/dev/zero"); });
  EXPECT_EQ(message, "/dev/zero: is not a regular file (a device, a pipe or a socket): expected a YAML configuration file");
}

TEST(ConfigFile, AFifoIsRefusedWithoutOpeningIt) {
  // Opening a FIFO that no one writes would block for ever.
  TempDir tmp;
  const std::string fifo = (tmp.path() / "config.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string message = input_error_of([&] { load_config(fifo); });
  EXPECT_EQ(message, fifo + ": is not a regular file (a device, a pipe or a socket): expected a YAML configuration file");
}

TEST(ConfigFile, AFileOverAMegabyteIsRefused) {
  TempDir tmp;
  const std::string big = (tmp.path() / "big.yaml").string();
  std::ofstream(big) << "# " << std::string(1 << 20, 'x') << "\n";
  const std::string message = input_error_of([&] { load_config(big); });
  EXPECT_NE(message.find(big + ": longer than"), std::string::npos) << message;
}

}  // namespace
}  // namespace cellgan

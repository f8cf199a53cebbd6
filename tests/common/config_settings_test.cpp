// `--set KEY=VALUE` on top of a configuration file (load_config with
// settings, apply_settings in config.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::TempDir;
using test::write_bytes;

std::string config_file(const TempDir& dir) {
  const std::string path = dir.file("base.yaml");
  write_bytes(path, "seed: 4\ngrid:\n  rows: 2\n  cols: 2\ntraining:\n  generations: 3\n");
  return path;
}

TEST(ConfigSettings, ReplaceKeysOfTheFileAndAddMissingOnes) {
  TempDir dir;
  const Config c = load_config(config_file(dir), {"grid.rows=3", "seed=9", "checkpoint.every=2",
                                                   "output_dir=runs/sweep/r1", "faults=[]"});
  EXPECT_EQ(c.grid.rows, 3);
  EXPECT_EQ(c.grid.cols, 2);  // untouched keys keep the file's value
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.training.generations, 3);
  EXPECT_EQ(c.checkpoint.every, 2);  // a section the file does not have
  EXPECT_EQ(c.output_dir, "runs/sweep/r1");
}

TEST(ConfigSettings, NoSettingsIsTheFileItself) {
  TempDir dir;
  const std::string path = config_file(dir);
  EXPECT_TRUE(same_config(load_config(path), load_config(path, {})));
  EXPECT_EQ(load_config(path, {}).source, path);
}

TEST(ConfigSettings, TheLastOfTwoSettingsOfOneKeyWins) {
  TempDir dir;
  EXPECT_EQ(load_config(config_file(dir), {"grid.cols=3", "grid.cols=4"}).grid.cols, 4);
}

TEST(ConfigSettings, AnUnknownOrBadKeyNamesTheFileTheSetAndTheKey) {
  TempDir dir;
  const std::string path = config_file(dir);
  const std::string unknown = input_error_of([&] { load_config(path, {"grid.rowz=3"}); });
  EXPECT_NE(unknown.find(path + " (with --set)"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("grid.rowz"), std::string::npos) << unknown;
  const std::string range = input_error_of([&] { load_config(path, {"grid.rows=0"}); });
  EXPECT_NE(range.find("grid.rows"), std::string::npos) << range;
}

TEST(ConfigSettings, ASettingThatIsNotKeyEqualsValueIsOneClearLine) {
  TempDir dir;
  const std::string path = config_file(dir);
  for (const std::string bad : {"grid.rows", "=3", "grid..rows=3", ".rows=1", "grid.=2"}) {
    const std::string message = input_error_of([&] { load_config(path, {bad}); });
    EXPECT_NE(message.find("--set " + bad + ": expected KEY=VALUE"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  const std::string not_section = input_error_of([&] { load_config(path, {"seed.x=1"}); });
  EXPECT_NE(not_section.find("seed is not a section"), std::string::npos) << not_section;
  const std::string bad_yaml = input_error_of([&] { load_config(path, {"grid.rows=[1"}); });
  EXPECT_NE(bad_yaml.find("not valid YAML"), std::string::npos) << bad_yaml;
}


// A section set to null used to stand for its defaults without a word; a
// scalar is no section either. Each is one line naming the key.
TEST(ConfigSettings, ASectionSetToNullOrAScalarIsAnErrorNamingIt) {
  TempDir dir;
  const std::string path = config_file(dir);
  for (const std::string value : {"null", "~", ""}) {
    const std::string message = input_error_of([&] { load_config(path, {"training=" + value}); });
    EXPECT_NE(message.find(path + " (with --set): training: null: expected a mapping"), std::string::npos)
        << "training=" << value << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  const std::string scalar = input_error_of([&] { load_config(path, {"grid=5"}); });
  EXPECT_NE(scalar.find(path + " (with --set): grid: expected a mapping"), std::string::npos) << scalar;
  // A key inside a null section still makes the section.
  EXPECT_EQ(load_config(path, {"checkpoint=null", "checkpoint.every=2"}).checkpoint.every, 2);
}

// The settings are echoed in messages: bytes that are not printable UTF-8
// are refused at once and shown as \xNN, before the YAML round trip could
// turn them into U+FFFD.
TEST(ConfigSettings, UnprintableBytesOfASettingAreRefusedAndEscaped) {
  TempDir dir;
  const std::string path = config_file(dir);
  const std::string key = input_error_of([&] { load_config(path, {"grid.r\xff\x1bws=3"}); });
  EXPECT_NE(key.find("--set grid.r\\xFF\\x1Bws=3: holds bytes that are not printable UTF-8 text"), std::string::npos)
      << key;
  const std::string value = input_error_of([&] { load_config(path, {"training.loss=\"\xc3\x28\""}); });
  EXPECT_NE(value.find("--set training.loss=\"\\xC3(\": holds bytes"), std::string::npos) << value;
  EXPECT_EQ(load_config(path, {"output_dir=runs/caf\xc3\xa9"}).output_dir, "runs/caf\xc3\xa9") << "UTF-8 is text";
}

}  // namespace
}  // namespace cellgan

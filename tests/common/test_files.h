// Helpers shared by the common tests: a temporary folder removed at the
// end of the test, whole-file reads and writes, a folder's whole state,
// and catching InputError.
//
// Thread-safety: each TempDir is owned by one test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "common/error.h"

namespace cellgan::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "cellgan-common-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    if (info != nullptr) name += std::string("-") + info->name();
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // The full path of `name` inside the folder.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Everything under `dir`: each entry's path (relative) with its bytes (a
// file), "<dir>" (a folder) or "<other>", and its modification time; a
// change anywhere shows as a different map.
inline std::map<std::string, std::string> folder_state(const std::string& dir) {
  std::map<std::string, std::string> state;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string what = entry.is_directory()      ? "<dir>"
                             : entry.is_regular_file() ? read_bytes(entry.path().string())
                                                       : "<other>";
    const auto time = entry.last_write_time().time_since_epoch().count();
    state[std::filesystem::relative(entry.path(), dir).string()] = what + " @" + std::to_string(time);
  }
  return state;
}

// Runs `f`, expecting an InputError; returns its message ("" and a test
// failure if none was thrown).
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

}  // namespace cellgan::test

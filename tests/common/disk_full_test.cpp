// A full disk: its own exit code (error.h), one line naming the file, and
// run.json rewritten in the space it holds already (run_state.h).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "common/error.h"
#include "common/image_files.h"
#include "common/run_state.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

TEST(DiskFull, HasItsOwnExitCode) {
  EXPECT_EQ(exit_code_of(DiskFull("x: no space left")), kExitDiskFull);
  // std::filesystem's errors (create_directories) carry the errno.
  const std::filesystem::filesystem_error no_space("cannot create directories", "/x/checkpoints",
                                                   std::make_error_code(std::errc::no_space_on_device));
  EXPECT_EQ(exit_code_of(no_space), kExitDiskFull);
  const std::filesystem::filesystem_error denied("cannot create directories", "/x/checkpoints",
                                                 std::make_error_code(std::errc::permission_denied));
  EXPECT_EQ(exit_code_of(denied), kExitFailure);
  EXPECT_TRUE(is_disk_full(ENOSPC));
  EXPECT_TRUE(is_disk_full(EDQUOT));
  EXPECT_FALSE(is_disk_full(EIO));
}

TEST(DiskFull, AWriteFailureNamesTheFileOnOneLine) {
  try {
    throw_write_failure("/runs/a/metrics.jsonl", ENOSPC);
    FAIL() << "nothing thrown";
  } catch (const DiskFull& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("/runs/a/metrics.jsonl: no space left on the device"), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  try {
    throw_write_failure("/runs/a/metrics.jsonl", EIO);
    FAIL() << "nothing thrown";
  } catch (const DiskFull&) {
    FAIL() << "EIO is no full disk";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(exit_code_of(e), kExitFailure);
  }
}

TEST(DiskFull, RunJsonIsRewrittenInPlace) {
  test::TempDir dir;
  RunState state;
  state.layout = "coevolution";
  state.generation = 10;
  ASSERT_EQ(write_run_state(dir.path().string(), state), "");
  struct stat before {};
  ASSERT_EQ(::stat(dir.file("run.json").c_str(), &before), 0);
  state.status = "failed";
  state.exit_code = kExitDiskFull;
  state.message = "/runs/a/metrics.jsonl: no space left on the device (No space left on device)";
  ASSERT_TRUE(write_run_state_in_place(dir.path().string(), state));
  struct stat after {};
  ASSERT_EQ(::stat(dir.file("run.json").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "rewritten through a new file, which a full disk has no room for";
  const std::optional<RunState> read = read_run_state(dir.path().string());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, "failed");
  EXPECT_EQ(read->exit_code, kExitDiskFull);
  EXPECT_EQ(read->message, state.message);
  EXPECT_EQ(read->generation, 10);
  // Nothing to rewrite: no new file is made.
  test::TempDir empty;
  EXPECT_FALSE(write_run_state_in_place(empty.path().string(), state));
  EXPECT_FALSE(std::filesystem::exists(empty.file("run.json")));
}

}  // namespace
}  // namespace cellgan

// Tests of common/path_checks.h: inputs that are folders, devices or
// missing; outputs under a regular file, in a missing folder, or folders
// themselves. The checks create nothing.
#include "common/path_checks.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::TempDir;
using test::write_bytes;
namespace fs = std::filesystem;

TEST(InputFile, ARegularFilePasses) {
  TempDir tmp;
  write_bytes(tmp.file("a.npy"), "x");
  EXPECT_EQ(why_no_input_file(tmp.file("a.npy")), "");
}

TEST(InputFile, MissingFolderDeviceAndDanglingLinkAreNamed) {
  TempDir tmp;
  EXPECT_EQ(why_no_input_file(tmp.file("none.bin")), "does not exist");
  EXPECT_EQ(why_no_input_file(tmp.path().string()), "is a folder");
  EXPECT_EQ(why_no_input_file("/dev/zero"), "is not a regular file (a device, a pipe or a socket)");
  fs::create_symlink(tmp.file("gone"), tmp.file("link"));
  EXPECT_EQ(why_no_input_file(tmp.file("link")), "is a symbolic link to nothing");
  EXPECT_EQ(why_no_input_file(""), "is empty: expected a file name");
}

TEST(OutputFolder, NewNestedAndExistingFoldersPassAndNothingIsCreated) {
  TempDir tmp;
  EXPECT_EQ(why_no_directory(tmp.file("run")), "");
  EXPECT_EQ(why_no_directory(tmp.file("a/b/c")), "");
  EXPECT_EQ(why_no_directory(tmp.path().string()), "");
  EXPECT_FALSE(fs::exists(tmp.file("run")));
  EXPECT_FALSE(fs::exists(tmp.file("a")));
}

TEST(OutputFolder, AFileInTheWayIsNamed) {
  TempDir tmp;
  write_bytes(tmp.file("f"), "x");
  EXPECT_EQ(why_no_directory(tmp.file("f")), "exists and is not a folder");
  EXPECT_EQ(why_no_directory(tmp.file("f/run")), "cannot be created: '" + tmp.file("f") + "' is a file, not a folder");
  EXPECT_EQ(why_no_directory(tmp.file("f/a/b")), "cannot be created: '" + tmp.file("f") + "' is a file, not a folder");
  fs::create_symlink(tmp.file("gone"), tmp.file("link"));
  EXPECT_EQ(why_no_directory(tmp.file("link")), "is a symbolic link to nothing");
}

TEST(OutputFolder, AReadOnlyFolderIsNamedUnlessRoot) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write into any folder";
  TempDir tmp;
  fs::create_directories(tmp.file("ro"));
  ::chmod(tmp.file("ro").c_str(), 0555);
  EXPECT_EQ(why_no_directory(tmp.file("ro/run")), "cannot be created: the folder '" + tmp.file("ro") + "' is not writable");
  EXPECT_EQ(why_no_file(tmp.file("ro/s.npy")), "cannot be written: the folder '" + tmp.file("ro") + "' is not writable");
  ::chmod(tmp.file("ro").c_str(), 0755);
}

// access(2) says yes to root for any folder, /proc included: the check
// makes (and removes) an entry to know, and leaves nothing behind.
TEST(OutputFolder, AFolderThatTakesNoNewEntryIsNamedEvenForRoot) {
  EXPECT_EQ(why_no_directory("/proc/cellgan-run").rfind("cannot be created: ", 0), 0u)
      << why_no_directory("/proc/cellgan-run");
  EXPECT_NE(why_no_directory("/proc/cellgan/a/b"), "");
  EXPECT_NE(why_no_file("/proc/cellgan.npy"), "");
  TempDir tmp;
  fs::create_directories(tmp.file("run"));
  EXPECT_EQ(why_no_directory(tmp.file("run")), "");
  EXPECT_EQ(why_no_directory(tmp.file("run/a")), "");
  EXPECT_EQ(why_no_file(tmp.file("run/s.npy")), "");
  EXPECT_TRUE(fs::is_empty(tmp.file("run"))) << "the check left an entry behind";
}

TEST(OutputFile, ANewFileInAFolderPasses) {
  TempDir tmp;
  EXPECT_EQ(why_no_file(tmp.file("s.npy")), "");
  write_bytes(tmp.file("old.npy"), "x");
  EXPECT_EQ(why_no_file(tmp.file("old.npy")), "") << "an existing file is replaced";
  EXPECT_FALSE(fs::exists(tmp.file("s.npy")));
}

TEST(OutputFile, FoldersMissingFoldersAndFilesInTheWayAreNamed) {
  TempDir tmp;
  write_bytes(tmp.file("f"), "x");
  EXPECT_EQ(why_no_file(tmp.path().string()), "is a folder: expected a file name");
  EXPECT_EQ(why_no_file(tmp.file("none/s.npy")), "cannot be written: the folder '" + tmp.file("none") + "' does not exist");
  EXPECT_EQ(why_no_file(tmp.file("f/s.npy")), "cannot be written: '" + tmp.file("f") + "' is a file, not a folder");
  EXPECT_EQ(why_no_file("/dev/null"), "exists and is not a regular file");
  EXPECT_EQ(why_no_file(""), "is empty: expected a file name");
}

}  // namespace
}  // namespace cellgan

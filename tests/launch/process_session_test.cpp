// Ending a whole session: a child, its grandchildren in groups of their
// own, and a stopped one.
#include "launch/process_session.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "launch/child_process.h"

namespace cellgan::launch {
namespace {

TEST(ProcessSession, EndsEveryProcessOfTheSessionAStoppedOneIncluded) {
  // bash -m gives each background job a process group of its own, as
  // mpirun does for its ranks; one of them stops itself.
  ChildProcess child({"bash", "-mc", "sleep 300 & (kill -STOP $BASHPID; sleep 300) & sleep 300 & wait"},
                     ChildOptions{"/dev/null", "", true, {}});
  ASSERT_TRUE(child.started()) << child.start_error();
  std::vector<pid_t> members;
  for (int i = 0; i < 100 && members.size() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    members = session_members(child.pid());
  }
  ASSERT_EQ(members.size(), 4u) << "bash and its three jobs";
  EXPECT_EQ(end_session(child.pid(), std::chrono::milliseconds(2000)), 0);
  EXPECT_TRUE(session_members(child.pid()).empty());
  EXPECT_TRUE(child.wait_for(std::chrono::milliseconds(2000)).has_value());
}

TEST(ProcessSession, TheChildsEnvironmentHasTheExtraVariables) {
  ChildProcess child({"bash", "-c", "[ \"$CELLGAN_TEST_VALUE\" = 42 ]"},
                     ChildOptions{"", "", true, {"CELLGAN_TEST_VALUE=42"}});
  ASSERT_TRUE(child.started());
  EXPECT_EQ(child.wait(), 0);
}

}  // namespace
}  // namespace cellgan::launch

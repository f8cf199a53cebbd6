// Ending worker processes by PID: only this host's, never the master's own;
// which of them have ended.
#include "master/worker_processes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <vector>

#include "common/process_stats.h"

namespace cellgan {
namespace {

// A child process that waits until it is killed (-1 if fork failed).
pid_t paused_child() {
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  return child;
}

TEST(WorkerProcesses, KillsAWorkerOfThisHostAndSaysSo) {
  const pid_t child = paused_child();
  ASSERT_GE(child, 0);
  WorkerProcesses p(2);
  p.set(2, IdentityMessage{child, host_name()});
  EXPECT_EQ(p.kill(1), "") << "worker 1 never said who it is";
  EXPECT_EQ(p.kill(2), "killed worker rank 2 (pid " + std::to_string(child) + " on " + host_name() +
                           "), so that the job can end cleanly");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(p.kill_remaining().empty()) << "the worker is gone";
}

// A worker's process that died is ended, reaped or not (a zombie);
// workers elsewhere, or threads of this process, never are.
TEST(WorkerProcesses, SaysWhichWorkersOfThisHostHaveEnded) {
  const pid_t child = paused_child();
  ASSERT_GE(child, 0);
  WorkerProcesses p(4);
  p.set(1, IdentityMessage{::getpid(), host_name()});
  p.set(2, IdentityMessage{child, host_name()});
  p.set(3, IdentityMessage{child, host_name() + "-elsewhere"});
  EXPECT_TRUE(p.ended().empty()) << "worker 2's process runs";
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  for (int i = 0; i < 200 && p.ended().empty(); ++i) ::usleep(10000);  // until it is a zombie
  EXPECT_EQ(p.ended(), std::vector<int>{2}) << "died, not yet reaped";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(p.ended(), std::vector<int>{2}) << "reaped";
}

TEST(WorkerProcesses, NeverTheMasterItselfNorAnotherHost) {
  EXPECT_FALSE(is_killable(IdentityMessage{::getpid(), host_name()}));  // one-process jobs: workers are threads
  EXPECT_FALSE(is_killable(IdentityMessage{1, host_name() + "-elsewhere"}));
  EXPECT_FALSE(is_killable(IdentityMessage{0, host_name()}));
  WorkerProcesses p(1);
  p.set(1, IdentityMessage{::getpid(), host_name()});
  EXPECT_EQ(p.kill(1), "");
  EXPECT_TRUE(p.kill_remaining().empty());
}

}  // namespace
}  // namespace cellgan

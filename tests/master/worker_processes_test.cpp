// Ending worker processes by PID: only this host's, never the master's own.
#include "master/worker_processes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "common/process_stats.h"

namespace cellgan {
namespace {

TEST(WorkerProcesses, KillsAWorkerOfThisHostAndSaysSo) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
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

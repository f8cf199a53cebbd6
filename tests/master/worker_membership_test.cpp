// Tests of master/worker_membership.h: members, GLOBAL's ranks, epochs and
// who is out.
#include "master/worker_membership.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace cellgan {
namespace {

TEST(WorkerMembership, AdmitsTheReadyAsEpochZeroWithGlobalTheMasterThenThem) {
  WorkerMembership m(3);
  m.admit({1, 3});
  EXPECT_EQ(m.members(), (std::vector<int>{1, 3}));
  EXPECT_EQ(m.global_ranks(), (std::vector<int>{kMasterRank, 1, 3}));
  EXPECT_EQ(m.world_rank(2), 3);
  EXPECT_THROW(m.world_rank(3), std::out_of_range);
  EXPECT_EQ(m.epoch(), 0);
}

TEST(WorkerMembership, RehomingStartsTheNextEpochWithTheSurvivorsAndAFreshTag) {
  WorkerMembership m(3);
  m.admit({1, 2, 3});
  m.lose(2);
  const std::vector<int> survivors = m.survivors([&](int w) { return !m.out(w); });
  EXPECT_EQ(survivors, (std::vector<int>{1, 3}));
  const MembersMessage first = m.rehome(survivors, 4, "/run/checkpoints/gen-000004");
  EXPECT_EQ(m.epoch(), 1);
  EXPECT_EQ(m.members(), (std::vector<int>{1, 3}));
  EXPECT_EQ(first.members, (std::vector<std::int32_t>{1, 3}));
  EXPECT_EQ(first.generation, 4);
  EXPECT_EQ(first.folder, "/run/checkpoints/gen-000004");
  EXPECT_EQ(first.local_tag, kLocalGroupTag + 1000);
  EXPECT_EQ(m.global_ranks(), (std::vector<int>{kMasterRank, 1, 2, 3})) << "GLOBAL stays as it was made";
  const MembersMessage second = m.rehome({3}, 0, "");
  EXPECT_EQ(m.epoch(), 2);
  EXPECT_EQ(second.local_tag, kLocalGroupTag + 2000);
  EXPECT_EQ(second.folder, "");
}

TEST(WorkerMembership, ALostOrFailedWorkerIsOutButOnlyALostOneCountsAsLost) {
  WorkerMembership m(3);
  EXPECT_FALSE(m.any_lost());
  m.fail(1);
  EXPECT_TRUE(m.failed(1));
  EXPECT_TRUE(m.out(1));
  EXPECT_FALSE(m.lost(1));
  EXPECT_FALSE(m.any_lost()) << "a failure is not a lost worker";
  m.lose(3);
  EXPECT_TRUE(m.lost(3));
  EXPECT_TRUE(m.out(3));
  EXPECT_FALSE(m.out(2));
  EXPECT_TRUE(m.any_lost());
  EXPECT_THROW(m.lose(4), std::out_of_range);
}

TEST(WorkerMembership, KillsNoProcessItHasNoIdentityFor) {
  WorkerMembership m(2);
  EXPECT_EQ(m.kill(1), "");
  m.set_identity(2, IdentityMessage{0, "another-host"});
  EXPECT_EQ(m.kill(2), "") << "a process on another host is never signalled";
}

}  // namespace
}  // namespace cellgan

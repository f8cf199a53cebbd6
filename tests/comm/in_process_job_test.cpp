// The in-process job factory: WORLD, and groups made collectively by their
// members, each member getting its index as its rank; a group rebuilt over
// the same ranks is a new communicator; a non-member is refused.
#include "common/comm/in_process_job.h"

#include <gtest/gtest.h>

#include <thread>

namespace cellgan {
namespace {

constexpr std::chrono::milliseconds kTimeout{10000};

TEST(InProcessJob, GroupsGiveEachMemberItsIndexAndCarryMessages) {
  InProcessJob job(4);
  std::vector<std::unique_ptr<JobCommsFactory>> f;
  for (int r = 0; r < 4; ++r) f.push_back(job.factory(r));
  EXPECT_EQ(f[2]->world_rank(), 2);
  EXPECT_EQ(f[2]->world_size(), 4);
  std::vector<std::thread> threads;
  std::vector<int> local_rank(4, -1);
  for (int r = 1; r < 4; ++r) {
    threads.emplace_back([&, r] {
      auto local = f[static_cast<std::size_t>(r)]->cartesian({1, 2, 3}, 1, 3, 7);
      local_rank[static_cast<std::size_t>(r)] = local->rank();
      local->send((local->rank() + 1) % 3, 5, Bytes{static_cast<std::uint8_t>(r)});
      const Message m = receive_blocking(*local, kAnySource, 5, kTimeout).value();
      EXPECT_EQ(m.source, (local->rank() + 2) % 3);
      // Rebuilt over the same ranks: a fresh communicator, not the old one.
      auto again = f[static_cast<std::size_t>(r)]->group({1, 2, 3}, 7);
      EXPECT_FALSE(again->try_receive().has_value());
      again->barrier();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(local_rank, (std::vector<int>{-1, 0, 1, 2}));
}

TEST(InProcessJob, RefusesNonMembersBadGridsAndASecondFactory) {
  InProcessJob job(3);
  auto f0 = job.factory(0);
  EXPECT_THROW(f0->group({1, 2}, 1), std::invalid_argument);
  EXPECT_THROW(f0->group({2, 0}, 1), std::invalid_argument);
  EXPECT_THROW(f0->cartesian({0, 1}, 2, 2, 1), std::invalid_argument);
  EXPECT_THROW(job.factory(0), std::logic_error);
  EXPECT_THROW(job.factory(3), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan

// Tests of common/process_stats.h: the resident set read from /proc adds
// up, never exceeds the peak, and sees memory this process touches; the
// heap in use follows allocations.
#include "common/process_stats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace cellgan {
namespace {

TEST(ProcessStats, ResidentSetIsReadAndBoundedByThePeak) {
  const ResidentSet rss = current_rss();
  EXPECT_GT(rss.anonymous, 0);
  EXPECT_GT(rss.file, 0);  // at least this executable's own pages
  EXPECT_GE(rss.shared, 0);
  EXPECT_GE(peak_rss_bytes(), rss.anonymous + rss.file + rss.shared);
}

TEST(ProcessStats, TouchedMemoryShowsAsAnonymous) {
  constexpr std::size_t kBytes = 64u << 20;
  const std::int64_t before = current_rss().anonymous;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);
  const std::int64_t during = current_rss().anonymous;
  EXPECT_GE(during - before, static_cast<std::int64_t>(kBytes) * 9 / 10);
  EXPECT_EQ(block[kBytes - 1], 1);
  block.reset();
  release_free_memory();
  EXPECT_LT(current_rss().anonymous, during - static_cast<std::int64_t>(kBytes) / 2);
}

TEST(ProcessStats, HeapInUseCountsLiveAllocationsOnly) {
  constexpr std::size_t kBytes = 8u << 20;
  const std::int64_t before = current_rss().heap_in_use;
  EXPECT_GT(before, 0);
  auto block = std::make_unique<char[]>(kBytes);
  block[0] = 1;
  const std::int64_t during = current_rss().heap_in_use;
  EXPECT_GE(during - before, static_cast<std::int64_t>(kBytes));
  EXPECT_EQ(block[0], 1);
  block.reset();
  EXPECT_LT(current_rss().heap_in_use, during - static_cast<std::int64_t>(kBytes) / 2);
}

}  // namespace
}  // namespace cellgan

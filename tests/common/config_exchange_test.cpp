// grid.exchange: sync by default, async read, and async refused with one
// line for the layouts that exchange no centres.
#include <gtest/gtest.h>

#include <string>

#include "common/config.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;

std::string error_of(const std::string& yaml) {
  return input_error_of([&] { parse_config(yaml, "configs/x.yaml"); });
}

void expect_one_line_naming(const std::string& message, const std::string& key, const std::string& expected) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("configs/x.yaml: " + key + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

TEST(ConfigExchange, SyncByDefaultAndAsyncRead) {
  EXPECT_EQ(parse_config("grid: {rows: 3, cols: 3}\n", "c.yaml").grid.exchange, ExchangeMode::kSync);
  EXPECT_EQ(parse_config("grid: {rows: 3, cols: 3, exchange: async}\n", "c.yaml").grid.exchange, ExchangeMode::kAsync);
  expect_one_line_naming(error_of("grid: {exchange: later}\n"), "grid.exchange", "async");
}

TEST(ConfigExchange, AsyncIsCoevolutionsOnly) {
  expect_one_line_naming(error_of("layout: data_parallel\ngrid: {rows: 1, cols: 1, exchange: async}\n"),
                         "grid.exchange",
                         "async is for layout coevolution only (layout data_parallel all-reduces every step): "
                         "expected sync");
  expect_one_line_naming(error_of("layout: per_class\ndata: {dataset: mnist}\nnetwork: {kind: mlp}\n"
                                  "grid: {rows: 2, cols: 1, exchange: async}\n"),
                         "grid.exchange", "(layout per_class exchanges no centres): expected sync");
}

}  // namespace
}  // namespace cellgan

// layout: per_class in the configuration: a K×1 grid of at most the 10
// classes of an image dataset; anything else is one line naming the key.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "common/config.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

std::string per_class(const std::string& rest) {
  return "layout: per_class\ndata: {dataset: mnist}\nnetwork: {kind: dcgan}\n" + rest;
}

std::string error_of(const std::string& yaml) {
  return test::input_error_of([&] { parse_config(yaml, "configs/bad.yaml"); });
}

void expect_one_line_with(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing in: " << message;
}

TEST(PerClassConfig, AKByOneGridOfImageClassesParsesAndRoundTrips) {
  for (const int k : {1, 2, 4, 10}) {
    const Config c = parse_config(per_class("grid: {rows: " + std::to_string(k) + ", cols: 1}\n"), "x.yaml");
    EXPECT_EQ(c.layout, LayoutKind::kPerClass);
    EXPECT_EQ(c.grid.rows, k);
    EXPECT_STREQ(to_string(c.layout), "per_class");
    EXPECT_TRUE(same_config(parse_config(to_yaml(c), "again.yaml"), c));
  }
}

TEST(PerClassConfig, MoreClassesThanTheDatasetHasAreRejected) {
  expect_one_line_with(error_of(per_class("grid: {rows: 11, cols: 1}\n")),
                       {"configs/bad.yaml", "grid", "11x1", "per_class", "K <= 10"});
}

TEST(PerClassConfig, AGridOfMoreThanOneColumnIsRejected) {
  expect_one_line_with(error_of(per_class("grid: {rows: 2, cols: 2}\n")),
                       {"configs/bad.yaml", "grid", "2x2", "1 column"});
}

TEST(PerClassConfig, ToyDataHasNoClassesAndIsRejected) {
  expect_one_line_with(
      error_of("layout: per_class\ndata: {dataset: ring}\nnetwork: {kind: toy}\ngrid: {rows: 2, cols: 1}\n"),
      {"configs/bad.yaml", "layout", "per_class", "labelled images", "ring"});
}

TEST(PerClassConfig, AnUnknownLayoutNamesTheChoices) {
  expect_one_line_with(error_of("layout: per_klass\n"), {"configs/bad.yaml", "layout", "per_klass", "per_class"});
}

}  // namespace
}  // namespace cellgan

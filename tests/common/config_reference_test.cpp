// Tests of common/config_reference.h and of docs/configuration.md: the page
// holds the tables generated from common/config_keys.cpp, and the generator
// keeps the hand-written text around them.
#include "common/config_reference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/config_keys.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::read_bytes;

const char* const kRegenerate =
    "regenerate the tables of docs/configuration.md from common/config_keys.cpp with\n"
    "  cmake --build build --target config_reference\n"
    "(it runs build/tests/update_config_reference docs/configuration.md) and commit the page";

std::string reference_page() {
  return read_bytes((std::filesystem::path(CELLGAN_SOURCE_DIR) / "docs" / "configuration.md").string());
}

// The text between a section's markers in `page` ("" if they are missing).
std::string block_of(const std::string& page, const ConfigSection& section) {
  const std::size_t b = page.find(begin_marker(section));
  const std::size_t e = page.find(end_marker(section));
  if (b == std::string::npos || e == std::string::npos || e < b) return "";
  return page.substr(b, e - b);
}

TEST(ConfigReference, ThePageHasEveryKeyInItsSection) {
  const std::string page = reference_page();
  for (const ConfigSection& section : config_sections()) {
    const std::string block = block_of(page, section);
    EXPECT_FALSE(block.empty()) << "docs/configuration.md has no '" << begin_marker(section) << "' table; "
                                << kRegenerate;
    for (const ConfigKey& key : section.keys)
      EXPECT_NE(block.find("| `" + key.name + "` |"), std::string::npos)
          << "docs/configuration.md does not document " << key_path(section, key) << "; " << kRegenerate;
  }
}

TEST(ConfigReference, ThePageTablesAreTheGeneratedOnes) {
  const std::string page = reference_page();
  std::string generated;
  try {
    generated = with_generated_tables(page, "docs/configuration.md");
  } catch (const InputError& e) {
    FAIL() << e.what() << "; " << kRegenerate;
  }
  if (generated == page) return;
  // Show the first line that differs.
  std::size_t at = 0;
  while (at < page.size() && at < generated.size() && page[at] == generated[at]) ++at;
  const std::size_t line_start = page.rfind('\n', at == 0 ? 0 : at - 1);
  const std::size_t from = line_start == std::string::npos ? 0 : line_start + 1;
  const std::string was = page.substr(from, page.find('\n', from) - from);
  const std::string now = generated.substr(from, generated.find('\n', from) - from);
  ADD_FAILURE() << "docs/configuration.md differs from the key tables.\n  page:      " << was
                << "\n  generated: " << now << "\n"
                << kRegenerate;
}

// A page with every section's markers, prose between them, and stale rows.
std::string page_with_markers(const std::string& inside) {
  std::string page = "# Title\n\nIntro prose.\n";
  for (const ConfigSection& section : config_sections())
    page += "\n## " + section.name + "\n\n" + begin_marker(section) + "\n" + inside + end_marker(section) +
            "\n\nProse after " + section.name + ".\n";
  return page;
}

TEST(ConfigReference, GeneratingReplacesOnlyTheTablesAndIsStable) {
  const std::string page = page_with_markers("| stale | row |\n");
  const std::string once = with_generated_tables(page, "page.md");
  EXPECT_EQ(once.find("| stale | row |"), std::string::npos);
  EXPECT_EQ(once.rfind("# Title\n\nIntro prose.\n", 0), 0u);
  for (const ConfigSection& section : config_sections()) {
    EXPECT_NE(once.find("Prose after " + section.name + ".\n"), std::string::npos) << section.name;
    EXPECT_NE(once.find(begin_marker(section) + "\n" + reference_table(section) + end_marker(section)),
              std::string::npos)
        << section.name;
  }
  EXPECT_EQ(with_generated_tables(once, "page.md"), once);
  EXPECT_EQ(with_generated_tables(page_with_markers(""), "page.md"), once);
}

TEST(ConfigReference, RowsShowTypeDefaultAllowedValuesAndDoc) {
  for (const ConfigSection& section : config_sections()) {
    if (section.name != "grid") continue;
    const std::string table = reference_table(section);
    EXPECT_NE(table.find("| `rows` | integer | 2 | 1..64 | "), std::string::npos) << table;
    EXPECT_NE(table.find("| `neighbourhood` | choice | `von_neumann` | `von_neumann`, `moore` | "), std::string::npos)
        << table;
  }
}

TEST(ConfigReference, MissingOrUnknownMarkersAreNamed) {
  const ConfigSection& training = config_sections().at(4);
  ASSERT_EQ(training.name, "training");
  std::string page = page_with_markers("");
  page.erase(page.find(end_marker(training)), end_marker(training).size());
  std::string message = input_error_of([&] { with_generated_tables(page, "page.md"); });
  EXPECT_NE(message.find("page.md"), std::string::npos) << message;
  EXPECT_NE(message.find("training keys"), std::string::npos) << message;

  message = input_error_of(
      [&] { with_generated_tables(page_with_markers("") + "<!-- generated: olden keys -->\n", "page.md"); });
  EXPECT_NE(message.find("olden keys"), std::string::npos) << message;
}

}  // namespace
}  // namespace cellgan

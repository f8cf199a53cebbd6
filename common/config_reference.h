// The key tables of docs/configuration.md, generated from the tables of
// config_keys.h so that the reference page cannot drift from the parser.
//
// In the page, each section's table sits between two marker lines:
//
//   <!-- generated: training keys -->
//   | key | type | default | allowed | meaning |
//   ...
//   <!-- end generated: training keys -->
//
// ("top-level keys" for the top level). Everything outside the markers is
// hand-written prose and is kept as it is. tests/common/
// update_config_reference.cpp rewrites the page in place
// (cmake --build build --target config_reference).
//
// Thread-safety: pure functions of their arguments and the (read-only) tables.
#pragma once

#include <string>

#include "common/config_keys.h"

namespace cellgan {

// The Markdown table of one section: a row per key, in table order, with its
// type, default (from the struct's initializer), allowed values and doc.
std::string reference_table(const ConfigSection& section);

// The marker lines around a section's table (without the newline).
std::string begin_marker(const ConfigSection& section);
std::string end_marker(const ConfigSection& section);

// `page` with the text between every section's markers replaced by its
// generated table. Throws InputError naming `source` when a section's
// markers are missing, doubled or out of order, or when the page has markers
// of a section that no longer exists.
std::string with_generated_tables(const std::string& page, const std::string& source);

}  // namespace cellgan

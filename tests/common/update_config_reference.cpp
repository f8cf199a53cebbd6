// update_config_reference PAGE: rewrites the generated key tables of PAGE
// (docs/configuration.md) from the tables of common/config_keys.cpp, keeping
// the hand-written text around them (see common/config_reference.h).
// `cmake --build build --target config_reference` runs it on the page.
// Exit 0 when the page is up to date or was updated, 2 on bad input.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "common/config_reference.h"
#include "common/error.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: update_config_reference docs/configuration.md\n";
    return cellgan::kExitBadInput;
  }
  const std::string path = argv[1];
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw cellgan::InputError(path + ": cannot read the page");
    std::stringstream text;
    text << in.rdbuf();
    const std::string page = text.str();
    const std::string updated = cellgan::with_generated_tables(page, path);
    if (updated == page) {
      std::cout << path << ": the key tables are up to date\n";
      return cellgan::kExitOk;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << updated;
    if (!out.flush()) throw cellgan::InputError(path + ": cannot write the page");
    std::cout << path << ": key tables regenerated\n";
  } catch (const cellgan::InputError& e) {
    std::cerr << "update_config_reference: error: " << e.what() << "\n";
    return cellgan::kExitBadInput;
  }
  return cellgan::kExitOk;
}

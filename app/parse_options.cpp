// Shared option parsing (see parse_options.h).
#include "app/parse_options.h"

#include <fmt/core.h>

#include <iostream>

#include "common/error.h"
#include "common/launch_rank.h"

namespace cellgan::app {

namespace po = boost::program_options;

bool parse_options(const std::string& command, const std::string& synopsis, po::options_description& options,
                   po::positional_options_description* positional, const std::vector<std::string>& args,
                   po::variables_map& vm) {
  options.add_options()("help,h", "show this help");
  try {
    po::command_line_parser parser(args);
    parser.options(options);
    // No positional arguments unless the command takes some: a stray word
    // is an error, not silently dropped.
    const po::positional_options_description none;
    parser.positional(positional ? *positional : none);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      if (launch_rank() == 0) std::cout << "usage: cellgan " << command << " " << synopsis << "\n\n" << options << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(fmt::format("cellgan {}: {} (see cellgan {} --help)", command, e.what(), command));
  }
  return true;
}

}  // namespace cellgan::app

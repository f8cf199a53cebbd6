// Shared option parsing for the subcommands: unknown options, missing
// values and --help are handled the same way everywhere.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

namespace cellgan::app {

// Returns false if --help was asked for (the help has been printed).
// Throws InputError naming the bad option otherwise.
bool parse_options(const std::string& command, const std::string& synopsis,
                   boost::program_options::options_description& options,
                   boost::program_options::positional_options_description* positional,
                   const std::vector<std::string>& args, boost::program_options::variables_map& vm);

}  // namespace cellgan::app

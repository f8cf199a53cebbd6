// Checks of option values the subcommands share, each raising InputError
// as one line that names the command and the flag:
//   "cellgan sample: --count: 0 is out of range: expected 1..100000 (...)".
// They run before a command reads its inputs or writes anything.
//
// Thread-safety: free functions of the main thread.
#pragma once

#include <boost/program_options.hpp>

#include <cstdint>
#include <string>

namespace cellgan::app {

// The integer option `flag` (without its dashes) within lo..hi; `why`
// follows the range in the message when not empty.
std::int64_t int_option(const boost::program_options::variables_map& vm, const std::string& command,
                        const std::string& flag, std::int64_t lo, std::int64_t hi, const std::string& why = "");

// A seed given as text (the option is a std::string): a non-negative
// integer that fits 64 bits, as the configuration's `seed` is. Boost would
// turn "-1" into 2^64 - 1 without a word.
std::uint64_t seed_option(const boost::program_options::variables_map& vm, const std::string& command,
                          const std::string& flag);

// The help of --device, which sample, score and classifier take (the value
// is resolved by common/nn/device.h, as runtime.device is).
inline constexpr const char* kDeviceHelp = "auto | cpu | cuda | cuda:N (a GPU when one is visible)";

// Rejects `flag` when it was given on the command line (not defaulted):
// it has no effect unless `needs` is given too.
void reject_unused(const boost::program_options::variables_map& vm, const std::string& command,
                   const std::string& flag, const std::string& needs);

// The file `flag` names can be written, or the folder it names created.
void check_output_file(const std::string& command, const std::string& flag, const std::string& path);
void check_output_folder(const std::string& command, const std::string& flag, const std::string& path);

}  // namespace cellgan::app

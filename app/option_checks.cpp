// Shared checks of option values (see option_checks.h).
#include "app/option_checks.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "common/error.h"
#include "common/path_checks.h"

namespace cellgan::app {

namespace po = boost::program_options;

std::int64_t int_option(const po::variables_map& vm, const std::string& command, const std::string& flag,
                        std::int64_t lo, std::int64_t hi, const std::string& why) {
  const std::int64_t v = vm[flag].as<std::int64_t>();
  if (v >= lo && v <= hi) return v;
  throw InputError(fmt::format("cellgan {}: --{}: {} is out of range: expected {}..{}{}", command, flag, v, lo, hi,
                               why.empty() ? "" : " (" + why + ")"));
}

std::uint64_t seed_option(const po::variables_map& vm, const std::string& command, const std::string& flag) {
  const std::string text = vm[flag].as<std::string>();
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = digits ? std::strtoull(text.c_str(), &end, 10) : 0;
  if (!digits || errno == ERANGE || *end != '\0')
    throw InputError(fmt::format("cellgan {}: --{}: '{}': expected a non-negative integer below 2^64", command, flag,
                                 text));
  return static_cast<std::uint64_t>(v);
}

void reject_unused(const po::variables_map& vm, const std::string& command, const std::string& flag,
                   const std::string& needs) {
  if (vm.count(flag) && !vm[flag].defaulted())
    throw InputError(fmt::format("cellgan {}: --{}: has no effect without --{}: expected it only with --{}", command,
                                 flag, needs, needs));
}

void check_output_file(const std::string& command, const std::string& flag, const std::string& path) {
  const std::string why = why_no_file(path);
  if (!why.empty()) throw InputError(fmt::format("cellgan {}: --{}: '{}' {}", command, flag, path, why));
}

void check_output_folder(const std::string& command, const std::string& flag, const std::string& path) {
  const std::string why = why_no_directory(path);
  if (!why.empty()) throw InputError(fmt::format("cellgan {}: --{}: '{}' {}", command, flag, path, why));
}

}  // namespace cellgan::app

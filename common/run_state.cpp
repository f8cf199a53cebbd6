// run.json (see run_state.h).
#include "common/run_state.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "common/image_files.h"
#include "common/run_files.h"

namespace cellgan {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string to_json(const RunState& s) {
  nlohmann::json j = {{"layout", s.layout},           {"grid", {s.rows, s.cols}},
                      {"workers", s.workers},         {"device", s.device},
                      {"seed", s.seed},               {"generations", s.generations},
                      {"generation", s.generation},   {"status", s.status},
                      {"exit_code", nullptr},         {"message", s.message},
                      {"stretches", s.stretches},     {"objective", s.objective},
                      {"seconds", s.seconds},         {"spans", nlohmann::json::array()},
                      {"exchange", s.exchange}};
  for (const auto& [from, to] : s.spans) j["spans"].push_back({from, to});
  if (s.exit_code) j["exit_code"] = *s.exit_code;
  return j.dump() + "\n";
}

std::string write_run_state(const std::string& dir, const RunState& state) {
  try {
    // No fsync: written at every generation by the master's control loop,
    // which must not wait for the disk.
    write_file_atomic((std::filesystem::path(dir) / run_files::kRunState).string(), to_json(state), false);
    return "";
  } catch (const DiskFull&) {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  }
}

bool write_run_state_in_place(const std::string& dir, const RunState& state) {
  const std::string path = (std::filesystem::path(dir) / run_files::kRunState).string();
  const std::string text = to_json(state);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  // Within the blocks the file holds already: no new space is needed.
  const bool fits = ::fstat(fd, &st) == 0 && static_cast<std::int64_t>(text.size()) <=
                                                  std::max<std::int64_t>(st.st_blocks * 512, st.st_size);
  bool written = fits && ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
                 ::ftruncate(fd, static_cast<off_t>(text.size())) == 0;
  if (::close(fd) != 0) written = false;
  return written;
}

void touch_run_state(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / run_files::kRunState).string();
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
}

std::optional<RunState> read_run_state(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / run_files::kRunState).string();
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json j = nlohmann::json::parse(text.str());
    RunState s;
    s.layout = j.at("layout").get<std::string>();
    s.rows = j.at("grid").at(0).get<int>();
    s.cols = j.at("grid").at(1).get<int>();
    s.workers = j.at("workers").get<int>();
    s.device = j.at("device").get<std::string>();
    s.seed = j.at("seed").get<std::uint64_t>();
    s.generations = j.at("generations").get<std::int64_t>();
    s.generation = j.at("generation").get<std::int64_t>();
    s.status = j.at("status").get<std::string>();
    if (!j.at("exit_code").is_null()) s.exit_code = j.at("exit_code").get<int>();
    s.message = j.at("message").get<std::string>();
    s.stretches = j.at("stretches").get<int>();
    // Recorded since the report and sweep read them; absent in older runs.
    s.objective = j.value("objective", std::string());
    s.seconds = j.value("seconds", 0.0);
    s.exchange = j.value("exchange", std::string("sync"));
    if (j.contains("spans"))
      for (const auto& span : j.at("spans")) s.spans.emplace_back(span.at(0).get<double>(), span.at(1).get<double>());
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not a cellgan run.json: {}", path, e.what()));
  }
}

}  // namespace cellgan

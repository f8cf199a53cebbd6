// The files of the test jobs: the toy 2x2 configuration
// (tests/mpi/toy-2x2.yaml) written for a test, and metrics.jsonl read back
// without its timings, for comparing runs to the bit.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/math_kernels.h"
#include "tests/common/test_files.h"

namespace cellgan::test {

// tests/mpi/toy-2x2.yaml writing to `output_dir`, with sed-like
// replacements (each must match), saved as `name`.yaml in `tmp`.
inline std::string toy_config(const TempDir& tmp, const std::string& name, const std::string& output_dir,
                              const std::map<std::string, std::string>& replace = {}) {
  std::string text = read_bytes(std::string(CELLGAN_SOURCE_DIR) + "/tests/mpi/toy-2x2.yaml");
  text = std::regex_replace(text, std::regex("output_dir: .*"), "output_dir: " + output_dir);
  for (const auto& [from, to] : replace) {
    const auto at = text.find(from);
    if (at == std::string::npos) throw std::logic_error("toy_config: '" + from + "' not in toy-2x2.yaml");
    text.replace(at, from.size(), to);
  }
  const std::string path = tmp.file(name + ".yaml");
  write_bytes(path, text);
  return path;
}

// The same with a `faults:` list (YAML) added.
inline std::string toy_config(const TempDir& tmp, const std::string& name, const std::string& output_dir,
                              const std::string& faults) {
  const std::string path = toy_config(tmp, name, output_dir);
  if (!faults.empty()) write_bytes(path, read_bytes(path) + "faults: " + faults + "\n");
  return path;
}

// The same, `generations` long, with the status server on `port`, saved as toy.yaml.
inline std::string toy_config_with_status(const TempDir& tmp, const std::string& output_dir, int generations,
                                          int port) {
  const std::string path =
      toy_config(tmp, "toy", output_dir, {{"generations: 4,", "generations: " + std::to_string(generations) + ","}});
  write_bytes(path, read_bytes(path) + "status: {port: " + std::to_string(port) + "}\n");
  return path;
}

// "OPENBLAS_CORETYPE=<this process's kernels> ", to put before a cellgan
// command whose results must equal this process's to the bit: cellgan
// otherwise runs on the kernels it chooses (app/kernel_choice.h), which
// round differently when OpenBLAS picked others here. "" without OpenBLAS.
inline std::string these_blas_kernels() {
  const std::string kernels = blas_kernels();
  const std::string prefix = "OpenBLAS ";
  if (kernels.rfind(prefix, 0) != 0) return "";
  return "OPENBLAS_CORETYPE=" + kernels.substr(prefix.size()) + " ";
}

// metrics.jsonl of the run in `dir` without the timings, one JSON line per record.
inline std::vector<std::string> metrics_without_seconds(const std::string& dir) {
  std::istringstream in(read_bytes(dir + "/metrics.jsonl"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    j.erase("seconds");
    if (j.contains("counts")) j["counts"].erase("images_per_second");  // a timing too (data_parallel)
    lines.push_back(j.dump());
  }
  return lines;
}

}  // namespace cellgan::test

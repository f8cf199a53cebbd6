// The records of a run folder (see run_records.h).
#include "common/run_records.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "common/error.h"
#include "common/image_files.h"
#include "common/run_files.h"

namespace cellgan {
namespace {

using nlohmann::json;

// What is wrong with a record, beside nlohmann's own exceptions.
class NotARecord : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

double number(const json& value) {
  return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

std::vector<double> numbers(const json& value, const char* key) {
  if (!value.is_array()) throw NotARecord(fmt::format("\"{}\" is not a list", key));
  std::vector<double> out;
  out.reserve(value.size());
  for (const json& v : value) out.push_back(number(v));
  return out;
}

std::map<std::string, double> named_numbers(const json& value, const char* key) {
  if (!value.is_object()) throw NotARecord(fmt::format("\"{}\" is not an object", key));
  std::map<std::string, double> out;
  for (const auto& [name, v] : value.items()) out[name] = number(v);
  return out;
}

// Calls read(value) when `object` has `key`.
template <typename Read>
void if_present(const json& object, const char* key, Read read) {
  if (const auto it = object.find(key); it != object.end()) read(*it);
}

GenerationRecord record_of(const json& j) {
  if (!j.is_object()) throw NotARecord("not a JSON object");
  GenerationRecord r;
  r.cell = j.at("cell").get<int>();
  r.generation = j.at("generation").get<std::int64_t>();
  r.generator_loss = r.discriminator_loss = std::numeric_limits<double>::quiet_NaN();
  if_present(j, "generator_loss", [&](const json& v) { r.generator_loss = number(v); });
  if_present(j, "discriminator_loss", [&](const json& v) { r.discriminator_loss = number(v); });
  if_present(j, "scores", [&](const json& v) { r.scores = named_numbers(v, "scores"); });
  if_present(j, "generator_lrs", [&](const json& v) { r.generator_lrs = numbers(v, "generator_lrs"); });
  if_present(j, "discriminator_lrs", [&](const json& v) { r.discriminator_lrs = numbers(v, "discriminator_lrs"); });
  if_present(j, "mixture_weights", [&](const json& v) { r.mixture_weights = numbers(v, "mixture_weights"); });
  if_present(j, "generators_replaced", [&](const json& v) { r.generators_replaced = v.get<int>(); });
  if_present(j, "discriminators_replaced", [&](const json& v) { r.discriminators_replaced = v.get<int>(); });
  if_present(j, "mixture_improved", [&](const json& v) { r.mixture_improved = v.get<bool>(); });
  if_present(j, "seconds", [&](const json& v) { r.seconds = named_numbers(v, "seconds"); });
  if_present(j, "counts", [&](const json& v) { r.counts = named_numbers(v, "counts"); });
  return r;
}

std::string text_of(const json& value) { return value.get<std::string>(); }

std::vector<std::string> texts(const json& value, const char* key) {
  if (!value.is_array()) throw NotARecord(fmt::format("\"{}\" is not a list", key));
  std::vector<std::string> out;
  for (const json& v : value) out.push_back(text_of(v));
  return out;
}

// {"master": ..., "workers": [...]}, as "blas_kernels" and "device" are.
void master_and_workers(const json& value, const char* key, std::string& master, std::vector<std::string>& workers) {
  if (!value.is_object()) throw NotARecord(fmt::format("\"{}\" is not an object", key));
  if_present(value, "master", [&](const json& v) { master = text_of(v); });
  if_present(value, "workers", [&](const json& v) { workers = texts(v, key); });
}

std::vector<EnsembleScores> cells_of(const json& value) {
  if (!value.is_array()) throw NotARecord("\"cells\" is not a list");
  std::vector<EnsembleScores> out;
  for (const json& c : value) {
    if (!c.is_object()) throw NotARecord("an entry of \"cells\" is not an object");
    out.push_back({c.at("cell").get<int>(), named_numbers(c.at("scores"), "scores")});
  }
  return out;
}

ResultRecord result_of(const json& j) {
  if (!j.is_object()) throw NotARecord("not a JSON object");
  ResultRecord r;
  r.scores = named_numbers(j.at("scores"), "scores");
  r.seconds = j.at("seconds").get<double>();
  if_present(j, "best", [&](const json& v) { r.best = text_of(v); });
  if_present(j, "best_cell", [&](const json& v) { r.best_cell = v.get<int>(); });
  if_present(j, "best_label", [&](const json& v) { r.best_label = text_of(v); });
  if_present(j, "objective", [&](const json& v) { r.objective = text_of(v); });
  if_present(j, "mixture_weights", [&](const json& v) { r.mixture_weights = numbers(v, "mixture_weights"); });
  if_present(j, "final_samples", [&](const json& v) { r.final_samples = v.get<std::int64_t>(); });
  if_present(j, "cells", [&](const json& v) { r.cells = cells_of(v); });
  if_present(j, "grid_ensemble", [&](const json& v) {
    if (!v.is_null()) r.grid_ensemble = named_numbers(v.at("scores"), "scores");
  });
  if_present(j, "blas_kernels",
             [&](const json& v) { master_and_workers(v, "blas_kernels", r.master_kernels, r.worker_kernels); });
  if_present(j, "device",
             [&](const json& v) { master_and_workers(v, "device", r.master_device, r.worker_devices); });
  if_present(j, "precision", [&](const json& v) { r.precision = text_of(v); });
  return r;
}

}  // namespace

// ---- metrics.jsonl

std::string to_json_line(const GenerationRecord& r) {
  json j;
  j["cell"] = r.cell;
  j["generation"] = r.generation;
  j["generator_loss"] = r.generator_loss;
  j["discriminator_loss"] = r.discriminator_loss;
  j["scores"] = r.scores;
  j["generator_lrs"] = r.generator_lrs;
  j["discriminator_lrs"] = r.discriminator_lrs;
  j["mixture_weights"] = r.mixture_weights;
  j["generators_replaced"] = r.generators_replaced;
  j["discriminators_replaced"] = r.discriminators_replaced;
  j["mixture_improved"] = r.mixture_improved;
  j["seconds"] = r.seconds;
  if (!r.counts.empty()) j["counts"] = r.counts;
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<GenerationRecord> parse_metrics_line(const std::string& line, std::string* why) {
  try {
    return record_of(json::parse(line));
  } catch (const json::exception& e) {
    if (why) *why = e.what();
  } catch (const NotARecord& e) {
    if (why) *why = e.what();
  }
  return std::nullopt;
}

std::vector<GenerationRecord> read_metrics(const std::string& path, std::vector<std::string>* unreadable) {
  std::vector<GenerationRecord> out;
  std::ifstream in(path);
  std::string line, why;
  for (std::int64_t number = 1; in && std::getline(in, line); ++number) {
    if (in.eof()) break;  // no newline after it: still being written, or cut
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::optional<GenerationRecord> record = parse_metrics_line(line, &why);
    if (!record) {
      const std::string what = fmt::format("{}:{}: not a metrics record: {}", path, number, why);
      if (unreadable == nullptr) throw InputError(what);
      unreadable->push_back(what);
      continue;
    }
    out.push_back(std::move(*record));
  }
  return out;
}

// ---- result.json

std::string to_json(const ResultRecord& r) {
  json cells = json::array();
  for (const EnsembleScores& c : r.cells) cells.push_back({{"cell", c.cell}, {"scores", c.scores}});
  const json grid = r.grid_ensemble ? json{{"scores", *r.grid_ensemble}} : json(nullptr);
  const json j = {{"best", r.best},
                  {"best_cell", r.best_cell},
                  {"best_label", r.best_label},
                  {"objective", r.objective},
                  {"scores", r.scores},
                  {"mixture_weights", r.mixture_weights},
                  {"final_samples", r.final_samples},
                  {"cells", cells},
                  {"grid_ensemble", grid},
                  {"blas_kernels", {{"master", r.master_kernels}, {"workers", r.worker_kernels}}},
                  {"device", {{"master", r.master_device}, {"workers", r.worker_devices}}},
                  {"precision", r.precision},
                  {"seconds", r.seconds}};
  return j.dump(2) + "\n";
}

ResultRecord parse_result(const std::string& text, const std::string& path) {
  try {
    return result_of(json::parse(text));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not a result of cellgan: {}", path, e.what()));
  } catch (const NotARecord& e) {
    throw InputError(fmt::format("{}: not a result of cellgan: {}", path, e.what()));
  }
}

std::optional<ResultRecord> read_result(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / run_files::kResult).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const std::optional<std::string> text = read_file(path);
  if (!text) throw InputError(fmt::format("{}: cannot be read", path));
  return parse_result(*text, path);
}

}  // namespace cellgan

// A record as a line of metrics.jsonl (see metrics_line.h).
#include "master/metrics_line.h"

#include <nlohmann/json.hpp>

namespace cellgan {

std::string to_json_line(const GenerationRecord& r) {
  nlohmann::json j;
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
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cellgan

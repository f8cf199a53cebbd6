// The coevolution layout, worker half (see coevolution_layout.h).
#include "worker/coevolution_layout.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/comm/protocol.h"
#include "common/log.h"
#include "common/nn/scores.h"
#include "common/nn/torch_generator_lock.h"
#include "common/nn/training_data.h"
#include "common/process_stats.h"
#include "worker/cell_block.h"

namespace cellgan {
namespace {

void log_memory(const char* when) {
  if (!log::enabled(log::Level::kDebug)) return;  // reading /proc and the heap's books is not free
  const ResidentSet rss = current_rss();
  log::debug("memory {}: anonymous {:.1f} MB (heap in use {:.1f} MB), files {:.1f} MB, shared {:.1f} MB", when,
             static_cast<double>(rss.anonymous) / 1e6, static_cast<double>(rss.heap_in_use) / 1e6,
             static_cast<double>(rss.file) / 1e6, static_cast<double>(rss.shared) / 1e6);
}

}  // namespace

CoevolutionLayout::CoevolutionLayout(const Config& config, int workers, c10::Device device)
    : config_(config), device_(device),
      grid_(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols)),
      partition_(partition_cells(grid_, workers)) {}

CoevolutionLayout::~CoevolutionLayout() = default;

std::string CoevolutionLayout::start(int local_rank, const ResumeFrom& from) {
  plan_ = halo_plan(grid_, partition_, config_.grid.neighbourhood, local_rank);
  for (const auto& out : plan_.sends) sent_cells_.push_back(out.cell);
  // Networks are built here: under the generator lock (torch_generator_lock.h).
  const auto lock = lock_torch_generator();
  data_ = std::make_unique<TrainingData>(config_, device_);
  log_memory("with the training data");
  scorer_ = make_scorer(config_, device_);
  log_memory("with the scorer");
  block_ = std::make_unique<CellBlock>(config_, grid_, partition_.cells_of[static_cast<std::size_t>(local_rank)],
                                       *data_, *scorer_, from);
  log_memory("with the cells");
  return fmt::format("cells {} ({} to send, {} to receive per generation)", fmt::join(block_->cells(), ","),
                     plan_.sends.size(), plan_.receives.size());
}

Waited<std::vector<GenerationRecord>> CoevolutionLayout::run_generation(std::int64_t generation,
                                                                       WorkerExchange& exchange) {
  // 1. Send the centres the other workers need; the last destination of
  // each takes the encoding, the others a copy.
  auto centres = block_->centres(sent_cells_);
  for (const auto& out : plan_.sends) {
    auto& [g_bytes, d_bytes] = centres.at(out.cell);
    Bytes payload = encode(HaloMessage{generation, out.cell, std::move(g_bytes), std::move(d_bytes)});
    for (std::size_t i = 0; i + 1 < out.to_workers.size(); ++i) exchange.send_local(out.to_workers[i], kTagHalo, payload);
    if (!out.to_workers.empty()) exchange.send_local(out.to_workers.back(), kTagHalo, std::move(payload));
  }
  // 2. Take in the halos.
  const auto waited_from = std::chrono::steady_clock::now();
  std::optional<Interruption> interruption = config_.grid.exchange == ExchangeMode::kAsync
                                                 ? newest_halos(generation, exchange)
                                                 : same_generation_halos(generation, exchange);
  if (interruption) return std::move(*interruption);
  const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - waited_from).count();
  // 3. Train every cell.
  std::vector<GenerationRecord> records = block_->run_generation(halos_, faults_);
  if (config_.grid.exchange == ExchangeMode::kSync) halos_.clear();  // async trains with them again if none newer come
  for (auto& r : records) r.seconds["idle"] = idle / static_cast<double>(records.size());
  log_memory(fmt::format("after generation {}", generation + 1).c_str());
  return records;
}

std::optional<Interruption> CoevolutionLayout::same_generation_halos(std::int64_t generation,
                                                                    WorkerExchange& exchange) {
  // From each worker, its cells come in cell order.
  halos_.clear();
  for (std::size_t i = 0; i < plan_.receives.size(); ++i) {
    Waited<Message> message = exchange.receive_local(plan_.receive_from[i], kTagHalo);
    if (auto* interruption = std::get_if<Interruption>(&message)) return std::move(*interruption);
    HaloMessage halo = decode_halo(std::get<Message>(message).payload);
    if (halo.generation != generation || halo.cell != plan_.receives[i])
      throw std::logic_error(fmt::format("halo exchange out of step: expected cell {} of generation {}, got cell {} "
                                         "of generation {}",
                                         plan_.receives[i], generation, halo.cell, halo.generation));
    halos_.emplace(halo.cell, std::move(halo));
  }
  return std::nullopt;
}

std::optional<Interruption> CoevolutionLayout::newest_halos(std::int64_t generation, WorkerExchange& exchange) {
  const auto keep = [this](HaloMessage halo) {
    const auto it = halos_.find(halo.cell);
    if (it == halos_.end() || it->second.generation < halo.generation) halos_[halo.cell] = std::move(halo);
  };
  // Everything that has arrived, each source once...
  std::vector<int> sources(plan_.receive_from.begin(), plan_.receive_from.end());
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  for (const int source : sources) {
    for (;;) {
      Waited<std::optional<Message>> message = exchange.try_receive_local(source, kTagHalo);
      if (auto* interruption = std::get_if<Interruption>(&message)) return std::move(*interruption);
      if (!std::get<std::optional<Message>>(message)) break;
      keep(decode_halo(std::get<std::optional<Message>>(message)->payload));
    }
  }
  // ...and a wait only for a cell never heard from (the first generation)
  // or more than async_lag generations behind.
  const std::int64_t oldest = generation - config_.grid.async_lag;
  const auto behind = [&](int cell) {
    const auto it = halos_.find(cell);
    return it == halos_.end() || it->second.generation < oldest;
  };
  for (std::size_t i = 0; i < plan_.receives.size(); ++i) {
    while (behind(plan_.receives[i])) {
      Waited<Message> message = exchange.receive_local(plan_.receive_from[i], kTagHalo);
      if (auto* interruption = std::get_if<Interruption>(&message)) return std::move(*interruption);
      keep(decode_halo(std::get<Message>(message).payload));
    }
  }
  return std::nullopt;
}

Bytes CoevolutionLayout::results() { return block_->encoded_results(); }

Waited<std::vector<CellBytes>> CoevolutionLayout::checkpoint(WorkerExchange& /*exchange*/) {
  return block_->checkpoint();
}

}  // namespace cellgan

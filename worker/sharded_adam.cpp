// ZeRO stage 1 (see sharded_adam.h).
#include "worker/sharded_adam.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "common/comm/protocol.h"
#include "worker/gradient_fusion.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {

torch::Tensor host_floats(float* data, std::int64_t count) {
  return torch::from_blob(data, {count}, torch::TensorOptions().dtype(torch::kFloat32));
}

}  // namespace

ShardedAdam::ShardedAdam(StackedMembers& net, std::int64_t fusion_bytes, int rank, int workers)
    : net_(net), rank_(rank), workers_(workers) {
  if (net.size() != 1) throw std::invalid_argument("ShardedAdam: the network must be a stack of one member");
  BatchedAdam& adam = net.optimizer();
  for (const torch::Tensor& p : adam.params()) numels_.push_back(p.numel());
  numels_.push_back(1);
  groups_ = fusion_groups(numels_, fusion_bytes);
  pieces_ = pieces_of(rank);
  step_ = adam.steps()[0].item<std::int64_t>();
  torch::NoGradGuard no_grad;
  for (Piece& piece : pieces_) {
    if (step_ > 0) {
      piece.exp_avg = adam.exp_avg()[piece.param].reshape({-1}).narrow(0, piece.from, piece.count).clone();
      piece.exp_avg_sq = adam.exp_avg_sq()[piece.param].reshape({-1}).narrow(0, piece.from, piece.count).clone();
    } else {
      piece.exp_avg = torch::zeros({piece.count}, adam.params()[piece.param].options());
      piece.exp_avg_sq = torch::zeros({piece.count}, adam.params()[piece.param].options());
    }
  }
  adam.drop_moments();
  adam.set_step(0, 0);
}

std::vector<ShardedAdam::Piece> ShardedAdam::pieces_of(int rank) const {
  std::vector<Piece> pieces;
  const std::size_t params = numels_.size() - 1;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    std::size_t total = 0;
    for (std::size_t i : groups_[g]) total += static_cast<std::size_t>(numels_[i]);
    const Shard own = own_shard(total, rank, workers_);
    std::size_t at = 0;
    for (std::size_t i : groups_[g]) {
      const std::size_t end = at + static_cast<std::size_t>(numels_[i]);
      const std::size_t lo = std::max(at, own.first);
      const std::size_t hi = std::min(end, own.first + own.count);
      if (i < params && lo < hi)
        pieces.push_back({i, static_cast<std::int64_t>(lo - at), static_cast<std::int64_t>(hi - lo), g, lo, {}, {}});
      at = end;
    }
  }
  return pieces;
}

void ShardedAdam::pack(const std::vector<torch::Tensor>& tensors, std::vector<std::vector<float>>& buffers) const {
  buffers.resize(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    std::size_t total = 0;
    for (std::size_t i : groups_[g]) total += static_cast<std::size_t>(numels_[i]);
    buffers[g].resize(total);
    std::size_t at = 0;
    for (std::size_t i : groups_[g]) {
      const torch::Tensor host = tensors[i].detach().to(torch::kCPU).contiguous();
      std::memcpy(buffers[g].data() + at, host.data_ptr<float>(), static_cast<std::size_t>(numels_[i]) * sizeof(float));
      at += static_cast<std::size_t>(numels_[i]);
    }
  }
}

std::optional<Interruption> ShardedAdam::step(GradientAllreduce& reduce, float& loss, double clip_grad_norm) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor>& params = net_.optimizer().params();
  std::vector<torch::Tensor> tensors;
  for (const torch::Tensor& p : params) tensors.push_back(p.grad().defined() ? p.grad() : torch::zeros_like(p));
  tensors.push_back(torch::full({1}, loss, torch::TensorOptions().dtype(torch::kFloat32)));
  std::vector<std::vector<float>> buffers;
  pack(tensors, buffers);
  for (auto& buffer : buffers)  // 1
    if (auto interruption = reduce.reduce_scatter(buffer)) return interruption;
  const auto gradient = [&](const Piece& piece) {
    return host_floats(buffers[piece.group].data() + piece.at, piece.count);
  };
  if (clip_grad_norm > 0.0) {  // 2
    std::vector<float> squares{0.0f};
    for (const Piece& piece : pieces_) squares[0] += gradient(piece).pow(2).sum().item<float>();
    if (auto interruption = reduce.sum(squares)) return interruption;
    const double coef = clip_grad_norm / (std::sqrt(static_cast<double>(squares[0])) + 1e-6);
    if (coef < 1.0)
      for (const Piece& piece : pieces_) gradient(piece).mul_(coef);
  }
  ++step_;  // 3
  const BatchedAdamOptions& adam = net_.optimizer().options();
  const torch::Tensor& rates = net_.optimizer().learning_rates();
  const AdamStepScalars scalars =
      adam_step_scalars(torch::full({1}, step_, rates.options().dtype(torch::kLong)), rates, adam);
  for (Piece& piece : pieces_) {
    const torch::Tensor g = gradient(piece).to(piece.exp_avg.device());
    const torch::Tensor p = params[piece.param].detach().view({-1}).narrow(0, piece.from, piece.count);
    adam_update(p, g, piece.exp_avg, piece.exp_avg_sq, scalars.neg_step_size, scalars.sqrt_bias_correction2, adam);
  }
  // 4: the loss's slot is the last value of the last buffer; its owner has the sum.
  const float summed_loss = buffers.back().back();
  tensors.assign(params.begin(), params.end());
  tensors.push_back(torch::full({1}, summed_loss, torch::TensorOptions().dtype(torch::kFloat32)));
  pack(tensors, buffers);
  for (auto& buffer : buffers)
    if (auto interruption = all_gather(reduce.exchange(), buffer, reduce.tally())) return interruption;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    std::size_t at = 0;
    for (std::size_t i : groups_[g]) {
      if (i < params.size())
        params[i].detach().view({-1}).copy_(host_floats(buffers[g].data() + at, numels_[i]));
      at += static_cast<std::size_t>(numels_[i]);
    }
  }
  loss = buffers.back().back();
  return std::nullopt;
}

std::optional<Interruption> ShardedAdam::gather(WorkerExchange& exchange) {
  if (rank_ != 0) {
    std::vector<float> values;
    for (const Piece& piece : pieces_)
      for (const torch::Tensor& t : {piece.exp_avg, piece.exp_avg_sq}) {
        const torch::Tensor host = t.to(torch::kCPU).contiguous();
        values.insert(values.end(), host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
      }
    AllreduceTally sent;
    send_wire(exchange, 0, WireCompression::kNone, values.data(), values.size(), sent);
    return std::nullopt;
  }
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor>& params = net_.optimizer().params();
  std::vector<torch::Tensor> m, v;
  for (const torch::Tensor& p : params) {
    m.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
    v.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
  }
  for (const Piece& piece : pieces_) {
    m[piece.param].view({-1}).narrow(0, piece.from, piece.count).copy_(piece.exp_avg);
    v[piece.param].view({-1}).narrow(0, piece.from, piece.count).copy_(piece.exp_avg_sq);
  }
  for (int r = 1; r < workers_; ++r) {
    Waited<Message> in = exchange.receive_local(r, kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&in)) return std::move(*interruption);
    const std::vector<Piece> pieces = pieces_of(r);
    std::size_t total = 0;
    for (const Piece& piece : pieces) total += 2 * static_cast<std::size_t>(piece.count);
    std::vector<float> values(total);
    decode_wire(WireCompression::kNone, std::get<Message>(in).payload, values.data(), total);  // logic_error: short
    std::size_t at = 0;
    for (const Piece& piece : pieces)
      for (std::vector<torch::Tensor>* moments : {&m, &v}) {
        (*moments)[piece.param].view({-1}).narrow(0, piece.from, piece.count).copy_(
            host_floats(values.data() + at, piece.count));
        at += static_cast<std::size_t>(piece.count);
      }
  }
  net_.optimizer().set_moments(std::move(m), std::move(v));
  net_.optimizer().set_step(0, step_);
  return std::nullopt;
}

void ShardedAdam::release() {
  net_.optimizer().drop_moments();
  net_.optimizer().set_step(0, 0);
}

void ShardedAdam::hand_back() {
  std::vector<torch::Tensor> m, v;
  for (const torch::Tensor& p : net_.optimizer().params()) {
    m.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
    v.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
  }
  net_.optimizer().set_moments(std::move(m), std::move(v));
  net_.optimizer().set_step(0, 0);
}

std::int64_t ShardedAdam::state_bytes() const {
  std::int64_t bytes = 0;
  for (const Piece& piece : pieces_) bytes += 2 * piece.count * static_cast<std::int64_t>(sizeof(float));
  return bytes;
}

}  // namespace cellgan

// Seed derivation: one run seed determines every random stream.
//
// Each consumer derives its own 64-bit seed from (run seed, a stream kind,
// an index such as the cell id), so streams never depend on thread timing
// or on how cells are spread over workers. SplitMix64 mixes the parts.
//
// Thread-safety: pure functions; SplitMix64 objects are not shared.
#pragma once

#include <cmath>
#include <cstdint>

namespace cellgan {

// What a derived stream is for; part of the derivation.
enum class Stream : std::uint64_t {
  kCellTraining = 1,  // everything a cell draws while it trains
  kCellInit = 2,      // initial weights of a cell's individuals
  kDataSplit = 3,     // the fixed shuffle that splits a dataset
  kToyData = 4,       // toy mixture samples
  kEvaluation = 5,    // latent vectors of final scoring and sampling
  kClassifier = 6,    // training the score classifier
  // layout data_parallel (worker/replica_trainer.h):
  kReplicaInit = 11,   // the replicas' initial weights (one draw, every worker)
  kReplicaOrder = 12,  // the shuffle of each epoch, index = epoch
  kReplicaStep = 13,   // a worker's latent vectors and dropout in one micro-batch
};

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : state_(state) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Normal N(mean, stddev^2) by Box-Muller (one value per call, so the
  // stream does not depend on a cached second value).
  double normal(double mean = 0.0, double stddev = 1.0) {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

// The seed of stream `kind` number `index` of a run seeded with `seed`.
inline std::uint64_t derive_seed(std::uint64_t seed, Stream kind, std::uint64_t index = 0) {
  SplitMix64 mix(seed);
  std::uint64_t s = mix.next();
  SplitMix64 mix2(s ^ (static_cast<std::uint64_t>(kind) * 0xD1B54A32D192ED03ULL));
  s = mix2.next();
  SplitMix64 mix3(s ^ (index * 0x8CB92BA72F3D8DD7ULL + 0x632BE59BD9B4E019ULL));
  return mix3.next();
}

}  // namespace cellgan

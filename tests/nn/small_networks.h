// Test helper: the smallest toy network shape (latent 4 -> 8 -> 8 -> 2),
// for tests that need real individuals but not their quality.
//
// Thread-safety: pure function.
#pragma once

#include "common/nn/networks.h"

namespace cellgan::test {

inline NetworkShape small_toy_shape() {
  NetworkShape s;
  s.kind = NetworkKind::kToy;
  s.latent_dim = 4;
  s.data_dim = 2;
  s.toy_hidden = 8;
  return s;
}

}  // namespace cellgan::test

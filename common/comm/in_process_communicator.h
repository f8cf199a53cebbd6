// An in-process Communicator for unit tests: N ranks that are threads of
// one process, sharing mailboxes. Same contract as communicator.h,
// including the ordering of messages and the collectives.
//
// Thread-safety: InProcessNetwork is thread-safe; each communicator it
// hands out belongs to one thread, like an MPI one.
#pragma once

#include <memory>

#include "common/comm/communicator.h"

namespace cellgan {

class InProcessNetwork {
 public:
  explicit InProcessNetwork(int size);
  ~InProcessNetwork();
  int size() const;
  // The communicator of `rank`; call once per rank.
  std::unique_ptr<Communicator> communicator(int rank);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cellgan

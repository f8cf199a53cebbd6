// Torch's global random generator is one per process. cellgan's training
// seeds it (torch::manual_seed) and then draws from it, and building a
// network draws from it too. Ranks that are threads of one process (the
// one-process job of the tests) would otherwise interleave their draws:
// whoever seeds the generator and draws from it, or builds networks while
// another may, holds this lock for the whole stretch, so every rank draws
// exactly the numbers it would draw alone. In an MPI process nobody else
// holds it, and it costs nothing.
//
// Thread-safety: any thread; recursive, so a locked stretch may call code
// that locks again.
#pragma once

#include <mutex>

namespace cellgan {

std::unique_lock<std::recursive_mutex> lock_torch_generator();

}  // namespace cellgan

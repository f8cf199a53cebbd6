// Interrupts of the commands that supervise children (launch, sweep): the
// signals that ask them to stop are counted instead of ending the process,
// and the command's loop reads the count (the first asks for a clean stop,
// the second ends the child at once).
//
// Thread-safety: catch_interrupts() once, on the main thread; the count is
// an atomic a signal handler raises.
#pragma once

#include <atomic>
#include <initializer_list>

namespace cellgan::app {

// From now on each of `signals` adds one to the returned count.
const std::atomic<int>& catch_interrupts(std::initializer_list<int> signals);

}  // namespace cellgan::app

// What the operating system says about this process, for logs and
// benchmarks: peak resident set size (VmHWM in /proc/self/status).
//
// Thread-safety: free function, reads /proc.
#pragma once

#include <cstdint>

namespace cellgan {

// Peak RSS in bytes, or 0 where /proc is not available.
std::int64_t peak_rss_bytes();

}  // namespace cellgan

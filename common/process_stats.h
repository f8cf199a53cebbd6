// What the operating system says about this process, for logs and
// benchmarks: peak resident set size (VmHWM in /proc/self/status), the
// current resident set split into anonymous and file-backed pages, and the
// heap in use by malloc's own count (mallinfo2); and a way to hand freed
// heap memory back; and the host it runs on.
//
// Thread-safety: free functions; they read /proc and malloc's statistics.
#pragma once

#include <cstdint>
#include <string>

namespace cellgan {

// This machine's host name ("" if it cannot be read).
std::string host_name();

// Peak RSS in bytes, or 0 where /proc is not available.
std::int64_t peak_rss_bytes();

// The current resident set, in bytes (all 0 where /proc is not available).
struct ResidentSet {
  std::int64_t anonymous = 0;  // RssAnon: heap, tensors, stacks
  std::int64_t file = 0;       // RssFile: mapped libraries and files
  std::int64_t shared = 0;     // RssShmem: shared memory (MPI segments)
  std::int64_t heap_in_use = 0;  // bytes malloc has handed out and not got back
};
ResidentSet current_rss();

// Hands the heap's free pages back to the operating system (glibc's
// malloc_trim). Torch's short-lived tensors of many sizes otherwise leave
// the heap fragmented and the resident set growing; a worker calls this
// after each cell's generation.
void release_free_memory();

}  // namespace cellgan

// Whether a command can read what it was given and write where it was told
// to, checked before anything is written: an input file, a run directory, a
// sample file, an IDX folder, a classifier. Each returns "" when the path
// will do, or why not, as words that follow the path in an error line
// ("cannot be created: 'a/b' is a file, not a folder"); the caller names
// its flag or key and throws InputError.
//
// Writability is asked of access(2), then of the folder itself: an empty
// folder is made in it and removed at once (root passes access(2) for any
// folder; /proc takes no new entry whatever its mode says). Nothing is left
// behind.
//
// Thread-safety: free functions; they only look at the file system.
#pragma once

#include <string>

namespace cellgan {

// `path` is a regular file (after symbolic links) that may be read: not
// missing, not a folder, not a device or a pipe that may never end.
std::string why_no_input_file(const std::string& path);

// `dir` is a folder this process may write into, or can be created: the
// nearest part of it that exists is a folder it may write into.
std::string why_no_directory(const std::string& dir);

// A file can be written at `path` (created, or replaced by a rename): it is
// not a folder, and its folder exists and may be written into.
std::string why_no_file(const std::string& path);

}  // namespace cellgan

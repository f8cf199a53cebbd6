#!/usr/bin/env python3
"""B4 aid: where a running process's resident set lives, grouped by what put it there.

    python3 tests/bench/rss_by_library.py PID [--top N]

Reads /proc/PID/smaps and /proc/PID/exe, and sorts every mapping's resident
kilobytes into:
  - private memory: the heap and anonymous mappings (tensors, buffers, ...);
  - the executable itself;
  - LibTorch: libtorch*.so and libc10.so;
  - the libraries the executable links (its NEEDED entries and what they
    need, LibTorch aside): the C/C++ runtime, Open MPI, Boost, fmt, ...;
  - the libraries only LibTorch needs (OpenCV, FFmpeg, GDAL, Qt, ... in
    Debian's build): loaded, relocated and initialised in every process that
    links LibTorch, whether or not it calls them;
  - what was loaded at run time rather than linked (Open MPI's plugins,
    shared-memory segments).
The dependency closures come from `ldd`. Resident pages of a shared library
are mostly file-backed (shared between processes through the page cache);
the "anon" column is the part that is private to the process (relocations,
library data).
"""
import argparse
import collections
import os
import re
import subprocess
import sys

MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def closure(path):
    """Real paths of every library `path` loads, from ldd."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    libs = set()
    for line in out.splitlines():
        m = re.search(r"=> (/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            libs.add(os.path.realpath(m.group(1)))
    return libs


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)


def is_torch(path):
    name = os.path.basename(path)
    return name.startswith("libtorch") or name.startswith("libc10")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("--top", type=int, default=12, help="largest libraries listed in the last group")
    args = ap.parse_args()
    try:
        exe = os.path.realpath(f"/proc/{args.pid}/exe")
        smaps = open(f"/proc/{args.pid}/smaps").read().splitlines()
    except OSError as e:
        sys.exit(f"rss_by_library: pid {args.pid}: {e.strerror}: expected a running process of this user")

    rss = collections.Counter()
    anon = collections.Counter()
    current = None
    for line in smaps:
        if MAPPING.match(line):
            fields = line.split()
            current = os.path.realpath(fields[5]) if len(fields) > 5 and fields[5].startswith("/") else "[private]"
        elif line.startswith("Rss:"):
            rss[current] += int(line.split()[1])
        elif line.startswith("Anonymous:"):
            anon[current] += int(line.split()[1])

    exe_libs = closure(exe)
    # What the executable's own dependencies need, with LibTorch's share left out.
    direct = {name.split(".so")[0] for name in needed(exe)}
    own = set()
    for lib in exe_libs:
        if os.path.basename(lib).split(".so")[0] in direct and not is_torch(lib):
            own |= closure(lib) | {lib}
    groups = collections.OrderedDict(
        (name, collections.Counter()) for name in
        ["private memory (heap, anonymous)", "the executable", "LibTorch (libtorch*, libc10)",
         "libraries the executable links", "libraries only LibTorch needs",
         "loaded at run time (Open MPI plugins, shared memory)"])
    labels = list(groups)
    for path, kb in rss.items():
        if path == "[private]":
            g = labels[0]
        elif path == exe:
            g = labels[1]
        elif is_torch(path):
            g = labels[2]
        elif path in own:
            g = labels[3]
        elif path in exe_libs:
            g = labels[4]
        else:
            g = labels[5]
        groups[g][path] += kb

    total = sum(rss.values())
    print(f"pid {args.pid} ({os.path.basename(exe)}): resident {total / 1024:.1f} MB in {len(rss)} mappings")
    for name, members in groups.items():
        kb = sum(members.values())
        private = sum(anon[p] for p in members)
        libs = sum(1 for p in members if p.startswith("/"))
        count = f", {libs} files" if name not in labels[:2] and libs else ""
        print(f"  {kb / 1024:7.1f} MB  (anon {private / 1024:5.1f})  {name}{count}")
    print(f"largest of the {labels[4]}:")
    for path, kb in groups[labels[4]].most_common(args.top):
        print(f"  {kb / 1024:7.1f} MB  {os.path.basename(path)}")


if __name__ == "__main__":
    main()

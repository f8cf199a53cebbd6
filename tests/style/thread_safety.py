#!/usr/bin/python3
"""The locks the compiler checks (common/thread_annotations.h): compiles the
sources of the classes that share state across threads with Debian's clang
and -Wthread-safety as an error, syntax only, with the flags the build gives
each file (compile_commands.json; GCC's precompiled header left out).

    thread_safety.py BUILD_DIR FILE...   checks these sources (relative to the
                                         source tree the build was made from)
Exits 1 and prints clang's diagnostics when an access misses its lock; exits 2
when it cannot check (no clang++, a file the build does not compile).
"""
import json
import pathlib
import shlex
import shutil
import subprocess
import sys


def cannot_check(why):
    print(f"thread_safety.py: {why}", file=sys.stderr)
    sys.exit(2)


def clang_command(entry):
    """The build's command for one file, as a clang syntax check."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = ["clang++"], False
    for arg in args[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-include"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-Winvalid-pch") or arg.endswith("/c++") or arg == "c++":
            continue
        out.append(arg)
    return out + ["-fsyntax-only", "-Wno-everything", "-Wthread-safety", "-Werror=thread-safety"]


def main():
    if len(sys.argv) < 3:
        cannot_check("usage: thread_safety.py BUILD_DIR FILE...")
    if shutil.which("clang++") is None:
        cannot_check("clang++ not found (Debian package clang)")
    build = pathlib.Path(sys.argv[1])
    entries = {pathlib.Path(e["file"]).resolve(): e for e in json.loads((build / "compile_commands.json").read_text())}
    failed = False
    for name in sys.argv[2:]:
        matches = [e for path, e in entries.items() if path.as_posix().endswith("/" + name)]
        if not matches:
            cannot_check(f"{name}: not compiled by the build in {build}")
        entry = matches[0]
        run = subprocess.run(clang_command(entry) + [entry["file"]], cwd=entry["directory"], capture_output=True,
                             text=True, check=False)
        if run.returncode != 0:
            failed = True
            print(f"{name}:\n{run.stderr.strip()}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Usage: pch_definitions.py BUILD_DIR

Every translation unit that includes a precompiled header (REUSE_FROM
cellgan_nn) is compiled with at least the macro definitions the header was
compiled with. GCC otherwise ignores the header without an error ("not used
because `FMT_SHARED' not defined", under -Winvalid-pch) and the unit
compiles <torch/torch.h> again: a minute more per file. LibTorch 2.x's
headers include fmt, so there fmt's FMT_SHARED must be everywhere the header is.
"""
import json
import shlex
import sys
from pathlib import Path


def definitions(command):
    args = shlex.split(command)
    return {a for a in args if a.startswith(("-D", "-U"))}


def main():
    build = Path(sys.argv[1])
    commands = json.loads((build / "compile_commands.json").read_text())
    headers = {}  # the header's .hxx path -> its definitions
    for entry in commands:
        if entry["file"].endswith("cmake_pch.hxx.cxx"):
            headers[entry["file"][: -len(".cxx")]] = definitions(entry["command"])
    if not headers:
        print(f"FAIL: {build}/compile_commands.json: no precompiled header compiled")
        return 1
    failures, users = [], 0
    for entry in commands:
        if entry["file"].endswith("cmake_pch.hxx.cxx"):
            continue
        for header, defined in headers.items():
            if header not in entry["command"]:
                continue
            users += 1
            missing = defined - definitions(entry["command"])
            if missing:
                failures.append(f"{entry['file']}: lacks {' '.join(sorted(missing))} of {header}")
    for line in failures:
        print(f"FAIL: {line}")
    if users == 0:
        print("FAIL: no translation unit uses a precompiled header")
        return 1
    if not failures:
        print(f"PASS: {users} translation units see their precompiled header's definitions")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

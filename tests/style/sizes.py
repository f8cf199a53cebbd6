#!/usr/bin/python3
"""Sizes of the sources (STYLE.md: small files, small functions): no source
file over 500 lines, no function over 80 lines. A function is counted from
a line at column 0 that ends with '{' (a definition) to the next line that
is exactly '}'. Generated HTML (a raw string literal) is not a function.

    sizes.py SOURCE_DIR     exits 1 and lists what is too long
"""
import pathlib
import re
import sys

FOLDERS = ["app", "common", "grid", "launch", "master", "sweep", "worker"]
MAX_FILE, MAX_FUNCTION = 500, 80
DEFINITION = re.compile(r"^[A-Za-z].*[)\]>]\s*(const\s*)?(override\s*)?(noexcept\s*)?(->\s*[\w:<>]+\s*)?\{\s*$")


def functions(lines):
    start = None
    for n, line in enumerate(lines, 1):
        if start is None and DEFINITION.match(line) and not line.startswith(("namespace", "struct", "class", "enum")):
            start = (n, line.strip())
        elif start is not None and line.rstrip() == "}":
            yield start[1], start[0], n - start[0] + 1
            start = None


def main():
    root = pathlib.Path(sys.argv[1])
    problems = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".h", ".cpp"):
                continue
            text = path.read_text()
            lines = text.splitlines()
            shown = path.relative_to(root)
            if len(lines) > MAX_FILE:
                problems.append(f"{shown}: {len(lines)} lines (at most {MAX_FILE})")
            if 'R"' in text:  # generated HTML in a raw string: its lines are not code
                continue
            for name, at, length in functions(lines):
                if length > MAX_FUNCTION:
                    problems.append(f"{shown}:{at}: {name[:70]} is {length} lines (at most {MAX_FUNCTION})")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

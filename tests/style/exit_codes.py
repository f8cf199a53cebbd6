#!/usr/bin/python3
"""Exit codes by name only (common/run_status.h): no source outside that
table writes one of cellgan's own exit codes as a number.

Reported, in code (comments and string literals left out):
  - the numbers 70, 74, 75 and 130, cellgan's codes that no other number in
    the sources shares;
  - exit(N), _Exit(N) or std::_Exit(N) with a literal N;
  - a comparison of an exit code with a literal other than 0 (success for
    every program, gnuplot's too), `code == 75`, `exit_code != 1` (a name
    ending in "exit_code" or equal to "code").

    exit_codes.py SOURCE_DIR      checks the sources under SOURCE_DIR's folders
    exit_codes.py --file FILE...  checks these files only
Exits 1 and prints one line per finding.
"""
import pathlib
import re
import sys

FOLDERS = ["app", "common", "grid", "launch", "master", "sweep", "worker"]
TABLE = pathlib.Path("common/run_status.h")

PATTERNS = [
    (re.compile(r"(?<![\w.])(70|74|75|130)(?![\w.])"), "the exit code {} as a number"),
    (re.compile(r"\b(?:std::)?_?[Ee]xit\s*\(\s*(\d+)\s*\)"), "exit({}) with a literal code"),
    (re.compile(r"\b(?:\w*exit_code|code)\s*[!=]=\s*([1-9]\d*)\b"), "an exit code compared with {}"),
]


def code_only(text):
    """text with comments and string and character literals blanked out,
    line breaks kept (so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(quote * 2)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def findings(path, shown):
    for number, line in enumerate(code_only(path.read_text()).splitlines(), 1):
        for pattern, what in PATTERNS:
            for m in pattern.finditer(line):
                yield f"{shown}:{number}: {what.format(m.group(1))}: use the names of common/run_status.h"


def main(argv):
    if len(argv) >= 2 and argv[0] == "--file":
        files = [(pathlib.Path(f), f) for f in argv[1:]]
    elif len(argv) == 1:
        root = pathlib.Path(argv[0])
        files = [(p, str(p.relative_to(root))) for folder in FOLDERS for p in sorted((root / folder).rglob("*"))
                 if p.suffix in (".h", ".cpp") and p.relative_to(root) != TABLE]
    else:
        print(__doc__, file=sys.stderr)
        return 2
    found = [line for path, shown in files for line in findings(path, shown)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

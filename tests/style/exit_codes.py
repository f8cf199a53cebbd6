#!/usr/bin/python3
"""Exit codes have names (common/error.h) and one map to a run's status
(common/run_status.h): no source compares with, returns or exits with a
literal exit code of cellgan's (1, 2, 70, 74, 75) outside common/error.h.

    exit_codes.py SOURCE_DIR      checks the sources under SOURCE_DIR's folders
    exit_codes.py --file FILE...  checks these files only
Exits 1 and prints one line per literal found.
"""
import pathlib
import re
import sys

FOLDERS = ["app", "common", "grid", "launch", "master", "sweep", "worker"]
ALLOWED = {"common/error.h"}
CODES = r"(?:1|2|70|74|75)"
PATTERNS = [
    re.compile(r"\b(?:std::)?(?:_Exit|exit|quick_exit)\(\s*" + CODES + r"\s*\)"),
    re.compile(r"\b(?:code|exit_code|status)\w*\s*[!=]=\s*" + CODES + r"\b"),
    re.compile(r"\b" + CODES + r"\s*[!=]=\s*\w*(?:code|status)\b"),
]


def literals(path, text):
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        for pattern in PATTERNS:
            if pattern.search(code):
                yield f"{path}:{number}: a literal exit code: {line.strip()}"


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--file":
        files = [(pathlib.Path(f), pathlib.Path(f).name) for f in sys.argv[2:]]
    elif len(sys.argv) == 2:
        root = pathlib.Path(sys.argv[1])
        files = [(p, p.relative_to(root).as_posix()) for folder in FOLDERS
                 for p in sorted((root / folder).rglob("*")) if p.suffix in (".h", ".cpp")]
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    found = [line for path, name in files if name not in ALLOWED for line in literals(name, path.read_text())]
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Sizes of the sources (STYLE.md: small files, small functions): no source
file over 500 lines, no function over 80 lines.

A function's length runs from the line that names it (the first line of its
signature) to its closing brace, both included. Universal Ctags finds the
definitions and their ends (`ctags --fields=+ne`): it parses C++, so a
signature over several lines, a brace or a quote inside a string or a raw
string literal, and a lambda (counted on its own as well as inside its
function) are all measured as the compiler sees them.

    sizes.py SOURCE_DIR      checks the sources under SOURCE_DIR's folders
    sizes.py --file FILE...  checks these files only
Exits 1 and prints one line per file or function that is too long; exits 2
when the sources cannot be measured (no ctags, or a definition without end).
"""
import json
import pathlib
import shutil
import subprocess
import sys

FOLDERS = ["app", "common", "grid", "launch", "master", "sweep", "worker"]
MAX_FILE, MAX_FUNCTION = 500, 80


def cannot_measure(why):
    print(f"sizes.py: {why}", file=sys.stderr)
    sys.exit(2)


def sources(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".h", ".cpp"):
                yield path


def function_tags(paths):
    """Every function definition ctags finds in paths, as its JSON tag."""
    if shutil.which("ctags") is None:
        cannot_measure("ctags not found (Debian package universal-ctags)")
    run = subprocess.run(
        ["ctags", "--fields=+ne", "--kinds-C++=f", "--language-force=C++", "--output-format=json", "-L", "-", "-o", "-"],
        input="\n".join(str(p) for p in paths), capture_output=True, text=True, check=False)
    if run.returncode != 0:
        cannot_measure(f"ctags failed: {run.stderr.strip()}")
    for line in run.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag.get("kind") == "function":
            yield tag


def display_name(tag):
    name = tag["name"]
    if name.startswith("__anon"):  # a lambda: name its enclosing scope
        return f"a lambda in {tag.get('scope', 'namespace scope')}"
    return f"{tag['scope']}::{name}" if tag.get("scope") else name


def problems(paths, shown):
    found = []
    for path in paths:
        lines = len(path.read_text(errors="replace").splitlines())
        if lines > MAX_FILE:
            found.append(f"{shown(path)}: {lines} lines (at most {MAX_FILE})")
    for tag in function_tags(paths):
        where = f"{shown(pathlib.Path(tag['path']))}:{tag['line']}"
        if "end" not in tag:
            cannot_measure(f"{where}: ctags found no end of {display_name(tag)}")
        length = tag["end"] - tag["line"] + 1
        if length > MAX_FUNCTION:
            found.append(f"{where}: {display_name(tag)} is {length} lines (at most {MAX_FUNCTION})")
    return found


def main():
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--file":
        paths = [pathlib.Path(a) for a in args[1:]]
        shown = str
    elif len(args) == 1 and not args[0].startswith("-"):
        root = pathlib.Path(args[0])
        paths = list(sources(root))
        shown = lambda p: str(p.relative_to(root))  # noqa: E731
    else:
        cannot_measure("usage: sizes.py SOURCE_DIR | sizes.py --file FILE...")
    found = problems(paths, shown)
    for p in found:
        print(p)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()

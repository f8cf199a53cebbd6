#!/usr/bin/env python3
"""Short docs: no project doc over its word limit, counted as `wc -w` counts
(runs of non-blank bytes).

  doc_words.py ROOT                 checks the limits below under ROOT
  doc_words.py --file PATH LIMIT    checks one file against LIMIT

Prints one line per file over its limit (`PATH: N words (at most LIMIT)`) and
exits 1 if there is one, else prints each count and exits 0. A missing file is
an error (exit 2), so a renamed doc cannot pass unchecked.
"""
import pathlib
import sys

LIMITS = {
    "docs/architecture.md": 3000,
    "docs/operations.md": 4000,
    "docs/results.md": 6000,
}


def words(path):
    return len(path.read_bytes().split())


def check(files):
    over = 0
    for path, limit in files:
        if not path.is_file():
            print(f"{path}: missing (expected a doc to count)")
            return 2
        n = words(path)
        if n > limit:
            print(f"{path}: {n} words (at most {limit})")
            over += 1
        else:
            print(f"{path}: {n} words (limit {limit})")
    return 1 if over else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--file":
        return check([(pathlib.Path(argv[2]), int(argv[3]))])
    if len(argv) == 2:
        root = pathlib.Path(argv[1])
        return check([(root / name, limit) for name, limit in LIMITS.items()])
    print(__doc__.strip().splitlines()[0])
    print("usage: doc_words.py ROOT | doc_words.py --file PATH LIMIT")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

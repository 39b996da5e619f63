#!/usr/bin/env python3
"""Keeps src/common/wire_names.h true to the contract.

Every name in the header must be a property or a parameter of
docs/openapi.yaml, and every snake_case field web/app.js reads
(`.session_name`) must be in the header. Standard library only: the YAML is
read by its indentation, enough for property and parameter names.

Usage: wire_names_test.py SOURCE_DIR
"""
import re
import sys
from pathlib import Path


def header_names(path):
    pairs = re.findall(r'inline constexpr Name (k\w+) = "([^"]*)";',
                       path.read_text())
    if not pairs:
        sys.exit(f"{path}: no names found (has its form changed?)")
    return pairs


def openapi_names(path):
    """The keys under every `properties:` and each parameter's `name:`."""
    names = set()
    stack = []  # indents of the `properties:` blocks we are inside
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack and indent <= stack[-1]:
            stack.pop()
        key = re.match(r"\s*([A-Za-z_][\w-]*):", line)
        if stack and key and indent == stack[-1] + 2:
            names.add(key.group(1))
        if re.match(r"\s*properties:\s*$", line):
            stack.append(indent)
        param = re.match(r"\s*(?:- )?name: ([\w-]+)\s*$", line)
        if param and i + 1 < len(lines) and \
                re.match(r"\s*in: (query|path|header)", lines[i + 1]):
            names.add(param.group(1))
    return names


def main():
    root = Path(sys.argv[1])
    header = root / "src/common/wire_names.h"
    names = header_names(header)
    contract = openapi_names(root / "docs/openapi.yaml")
    failures = [f"{header.name}: {const} = \"{text}\" is not a property or "
                f"parameter of docs/openapi.yaml"
                for const, text in names if text not in contract]
    texts = {text for _, text in names}
    app = root / "web/app.js"
    for read in sorted(set(re.findall(r"\.([a-z]+(?:_[a-z]+)+)\b",
                                      app.read_text()))):
        if read not in texts:
            failures.append(f"web/app.js reads .{read}, which is not in "
                            f"{header.name}")
    for f in failures:
        print(f)
    print(f"wire_names: {len(names)} names in the header, "
          f"{len(contract)} in the contract, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

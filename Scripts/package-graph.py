#!/usr/bin/env python3
"""Prints Peregrine's target graph from `swift package dump-package`, and keeps the copy in
Docs/Architecture.md true.

    python3 Scripts/package-graph.py              # print the graph
    python3 Scripts/package-graph.py --check      # fail when Docs/Architecture.md disagrees
    python3 Scripts/package-graph.py --write      # rewrite the graph in Docs/Architecture.md

The document holds the graph between `<!-- package-graph:begin -->` and
`<!-- package-graph:end -->`; CI runs --check (Scripts/test.sh).
"""
import difflib
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "Docs" / "Architecture.md"
BEGIN, END = "<!-- package-graph:begin -->", "<!-- package-graph:end -->"


def graph() -> str:
    manifest = json.loads(
        subprocess.run(
            ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    )
    products = {product["name"] for product in manifest["products"] if "library" in product["type"]}
    targets = {t["name"]: t for t in manifest["targets"] if t["type"] != "test"}

    def dependencies(target):
        names = []
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            condition = next((item for item in value if isinstance(item, dict)), None) or {}
            traits = condition.get("traits") or []
            suffix = f" [trait {', '.join(traits)}]" if traits else ""
            if kind in ("byName", "target"):
                names.append(value[0] + suffix)
            elif kind == "product":
                names.append(f"{value[0]} ({value[1]})" + suffix)
        return names

    # Dependencies first, then by name: each line names only targets above it.
    order, seen = [], set()

    def visit(name):
        if name in seen or name not in targets:
            return
        seen.add(name)
        for dependency in sorted(dependencies(targets[name])):
            visit(dependency.split(" [trait")[0])
        order.append(name)

    for name in sorted(targets):
        visit(name)
    width = max(len(name) for name in order) + 2
    lines = []
    for name in order:
        target = targets[name]
        kind = {"system": "C", "executable": "exe"}.get(target["type"], "lib" if name in products else "")
        uses = ", ".join(dependencies(target)) or "—"
        lines.append(f"{name:<{width}}{kind:<5}← {uses}")
    return "\n".join(lines) + "\n"


def unused_dependencies() -> list:
    """Declared dependencies of non-test targets that no source file of the target imports."""
    manifest = json.loads(
        subprocess.run(
            ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    )
    unused = []
    for target in manifest["targets"]:
        if target["type"] in ("test", "system"):
            continue
        path = ROOT / (target.get("path") or f"Modules/{target['name']}")
        sources = "\n".join(file.read_text() for file in path.rglob("*.swift") if ".build" not in file.parts)
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            module = value[0]
            if not re.search(rf"^\s*(@_exported |@testable |internal |public |package )?import {module}\s*$",
                             sources, re.MULTILINE):
                unused.append(f"{target['name']} declares {module} and never imports it")
    return unused


def main() -> int:
    text = graph()
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "":
        sys.stdout.write(text)
        return 0
    document = DOCUMENT.read_text()
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        print(f"error: {DOCUMENT} has no {BEGIN} … {END} block", file=sys.stderr)
        return 1
    block = f"{BEGIN}\n```\n{text}```\n"
    current = document[start:end]
    if mode == "--write":
        DOCUMENT.write_text(document[:start] + block + document[end:])
        return 0
    if mode == "--check":
        unused = unused_dependencies()
        for line in unused:
            print(f"error: {line}", file=sys.stderr)
        if unused:
            return 1
        if current == block:
            print("Docs/Architecture.md shows the package's target graph")
            return 0
        diff = difflib.unified_diff(
            current.splitlines(), block.splitlines(), "Docs/Architecture.md", "Package.swift", lineterm="")
        print("\n".join(diff), file=sys.stderr)
        print("error: Docs/Architecture.md disagrees with Package.swift; "
              "run python3 Scripts/package-graph.py --write", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main())

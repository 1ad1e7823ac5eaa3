#!/usr/bin/env python3
"""Tidies the mdoc pages swift-argument-parser's generate-manual writes, for man-db and lintian.

Usage: fix-manual.py PAGE...   (rewritten in place)

- A subcommand's page names it "peregrine get", which man-db's whatis parser (lexgrog) cannot
  read: the NAME section gets the page's own name, `peregrine.get` (what `man peregrine.get`
  opens), and the synopsis keeps the command as it is typed, `peregrine get`.
- `.Nd "…"` keeps its quotes in the output: they go.
- A blank line inside a page is a groff warning: it becomes a paragraph break (`.Pp`).
"""

import re
import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().rstrip("\n").split("\n")
    out = []
    named = None
    for line in lines:
        quoted = re.fullmatch(r'\.Nm "(.+)"', line)
        if named is None and quoted:
            named = quoted.group(1)
            out.append(".Nm " + named.replace(" ", "."))
            continue
        if named is not None and line == ".Nm":
            out.append(f'.Nm "{named}"')
            continue
        description = re.fullmatch(r'\.Nd "(.*)"', line)
        if description:
            out.append(".Nd " + description.group(1))
            continue
        out.append(".Pp" if line.strip() == "" else line)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out) + "\n")

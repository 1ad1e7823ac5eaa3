#!/usr/bin/env python3
"""Where a running program's resident pages of its own executable are: by ELF section, and
the symbols whose pages are resident, largest first.

Usage: python3 Benchmarks/resident-pages.py PID [--top N]

VmRSS counts every page of the executable that the process has mapped in (its code, its
read-only data, the relocation and symbol tables the dynamic loader read at start-up), not
only the heap. This reads the present bit of each page of the executable's mappings from
/proc/PID/pagemap (readable for one's own processes) and names the section (readelf) and
the symbol (nm) each resident page starts in. Needs binutils (readelf, nm).
"""
import argparse
import bisect
import collections
import os
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def mappings(pid, executable):
    """The executable's mappings: (start, end, file offset, permissions)."""
    result = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].strip() == executable:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                result.append((start, end, int(fields[2], 16), fields[1]))
    return result


def sections(executable):
    """(virtual address, size, name) of each allocated section."""
    output = subprocess.run(["readelf", "-SW", executable], capture_output=True, text=True, check=True).stdout
    result = []
    for line in output.splitlines():
        line = line.replace("[ ", "[")
        fields = line.split()
        if len(fields) > 6 and fields[0].startswith("[") and fields[0] != "[Nr]":
            try:
                address, size = int(fields[3], 16), int(fields[5], 16)
            except ValueError:
                continue
            if address:
                result.append((address, size, fields[1]))
    return sorted(result)


def symbols(executable):
    """(address, name) of each defined symbol, sorted."""
    output = subprocess.run(
        ["nm", "--defined-only", "--demangle=none", executable], capture_output=True, text=True
    ).stdout
    result = []
    for line in output.splitlines():
        fields = line.split()
        if len(fields) == 3:
            try:
                result.append((int(fields[0], 16), fields[2]))
            except ValueError:
                pass
    return sorted(result)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pid", type=int)
    parser.add_argument("--top", type=int, default=15, help="how many symbols to list (default 15)")
    arguments = parser.parse_args()
    try:
        executable = os.readlink(f"/proc/{arguments.pid}/exe")
    except OSError as error:
        sys.exit(f"resident-pages: cannot read process {arguments.pid}: {error.strerror}")
    regions = mappings(arguments.pid, executable)
    if not regions:
        sys.exit(f"resident-pages: {executable} is not mapped in process {arguments.pid}")
    # A PIE's first mapping is at file offset 0: its start is the load base.
    base = min(start - offset for start, _, offset, _ in regions)
    section_list = sections(executable)
    section_starts = [address for address, _, _ in section_list]
    symbol_list = symbols(executable)
    symbol_starts = [address for address, _ in symbol_list]
    by_section = collections.Counter()
    by_symbol = collections.Counter()
    by_mapping = []
    with open(f"/proc/{arguments.pid}/pagemap", "rb") as pagemap:
        for start, end, offset, permissions in regions:
            count = (end - start) // PAGE
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read(count * 8)
            resident = 0
            for index in range(count):
                (entry,) = struct.unpack_from("<Q", entries, index * 8)
                if not entry >> 63:
                    continue
                resident += 1
                address = start + index * PAGE - base
                position = bisect.bisect_right(section_starts, address) - 1
                name = "(between sections)"
                if position >= 0:
                    section_address, size, section = section_list[position]
                    if address < section_address + max(size, 1):
                        name = section
                by_section[name] += 1
                if name in (".text", ".rodata"):
                    position = bisect.bisect_right(symbol_starts, address) - 1
                    by_symbol[(name, symbol_list[position][1] if position >= 0 else "?")] += 1
            by_mapping.append((start, end, permissions, offset, resident))
    kib = PAGE // 1024
    print(f"{executable} in process {arguments.pid}, resident pages of its mappings:\n")
    print("| mapping | permissions | file offset | size | resident |\n|---|---|---:|---:|---:|")
    for start, end, permissions, offset, resident in by_mapping:
        print(f"| {start:x}–{end:x} | {permissions} | {offset:#x} | {(end - start) // 1024:,} KiB | {resident * kib:,} KiB |")
    print("\n| section | resident |\n|---|---:|")
    for name, pages in by_section.most_common():
        print(f"| {name} | {pages * kib:,} KiB |")
    print(f"\n| section | symbol at the page's start | resident |\n|---|---|---:|")
    for (section, name), pages in by_symbol.most_common(arguments.top):
        shown = name if len(name) <= 90 else name[:87] + "…"
        print(f"| {section} | `{shown}` | {pages * kib:,} KiB |")


if __name__ == "__main__":
    main()

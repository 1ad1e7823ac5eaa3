#!/usr/bin/env python3
"""Writes the service's catalogue of aria2's options from the aria2c installed here.

Usage: python3 Scripts/aria2-options.py [--write | --check]

The catalogue (Modules/PeregrineService/Aria2OptionCatalogue.swift) is what `aria2.addUri`,
`changeOption`, `changeGlobalOption`, `getOption` and `getGlobalOption` know of aria2's options:
each name, the values aria2 takes (from `aria2c --help=#all`), aria2's default, and whether it
is an option of one download. Which options belong to a download is asked of aria2 itself: an
`aria2c --enable-rpc` is started on a free port, and each option is given to a paused `addUri`
and looked for in its `getOption`. `--check` fails when the file differs from what aria2 says.
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(REPO, "Modules/PeregrineService/Aria2OptionCatalogue.swift")
# Options of the command line only (help, the configuration file, RPC itself, the session's
# input): not options a running aria2 takes by RPC.
COMMAND_LINE_ONLY = {"help", "version", "conf-path", "no-conf", "daemon", "enable-rpc"}
# Defaults that describe the aria2 this script ran (its working directory, its port), not aria2.
MACHINE_DEFAULTS = {"dir", "rpc-listen-port"}
# Placeholders whose values take aria2's K and M suffixes.
SIZE_PLACEHOLDERS = {"SIZE", "SPEED", "LENGTH"}


def parse_help():
    text = subprocess.run(["aria2c", "--help=#all"], capture_output=True, text=True, check=True).stdout
    options = {}
    current = None
    for line in text.splitlines():
        match = re.match(r"^ (?:-\w, )?--([a-z0-9-]+)(?:\[?=([^\]\s]+)\]?)?\s", line + " ")
        if match:
            current = {"name": match.group(1), "placeholder": match.group(2) or "", "possible": None,
                       "default": None, "text": ""}
            options[current["name"]] = current
            continue
        if current is None:
            continue
        stripped = line.strip()
        if stripped.startswith("Possible Values:"):
            current["possible"] = stripped[len("Possible Values:"):].strip()
        elif stripped.startswith("Default:"):
            current["default"] = stripped[len("Default:"):].strip()
        else:
            current["text"] += " " + stripped
    return options


def kind_of(option):
    possible = option["possible"] or ""
    sizes = option["placeholder"] in SIZE_PLACEHOLDERS or "append K or M" in option["text"]
    if possible == "true, false":
        return ("boolean", None)
    match = re.fullmatch(r"(\d+)-(\d+|\*)", possible)
    if match:
        upper = None if match.group(2) == "*" else int(match.group(2))
        return ("size" if sizes else "integer", (int(match.group(1)), upper))
    match = re.fullmatch(r"(\d+\.\d+)-(\*)", possible)
    if match:
        return ("decimal", (float(match.group(1)), None))
    if re.fullmatch(r"[a-z][a-zA-Z0-9.]*(, [a-z][a-zA-Z0-9.]*)+", possible):
        return ("choice", possible.split(", "))
    return ("text", None)


def sample(option, kind):
    name, (what, detail) = option["name"], kind
    if option["default"] not in (None, ""):
        return option["default"]
    if what == "boolean":
        return "true"
    if what in ("integer", "size"):
        return str(detail[0])
    if what == "decimal":
        return "1.0"
    if what == "choice":
        return detail[0]
    if name == "checksum":
        return "sha-1=0123456789012345678901234567890123456789"
    if name == "gid":
        return "0123456789abcdef"
    if name in ("index-out", "select-file"):
        return "1=x" if name == "index-out" else "1"
    if "proxy" in name and "user" not in name and "passwd" not in name and "method" not in name:
        return "http://127.0.0.1:3128"
    return "x"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Aria2:
    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="aria2-options-")
        self.port = free_port()
        self.process = subprocess.Popen(
            ["aria2c", "--no-conf", "--enable-rpc", f"--rpc-listen-port={self.port}", f"--dir={self.directory}",
             "--quiet", "--pause=true"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.call("aria2.getVersion")
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("aria2-options: aria2c --enable-rpc did not answer")

    def call(self, method, *params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/jsonrpc", data=body)
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as error:
            return json.load(error)

    def close(self):
        self.process.terminate()
        self.process.wait()
        subprocess.run(["rm", "-rf", self.directory], check=False)


def catalogue():
    options = {name: option for name, option in parse_help().items() if name not in COMMAND_LINE_ONLY}
    aria2 = Aria2()
    try:
        version = aria2.call("aria2.getVersion")["result"]["version"]
        global_values = aria2.call("aria2.getGlobalOption")["result"]
        entries = []
        for name in sorted(options):
            option = options[name]
            kind = kind_of(option)
            gid = aria2.call("aria2.addUri", ["http://127.0.0.1:9/probe"], {name: sample(option, kind)}).get("result")
            per_download = False
            if gid is not None:
                per_download = name in aria2.call("aria2.getOption", gid).get("result", {})
                aria2.call("aria2.forceRemove", gid)
                aria2.call("aria2.removeDownloadResult", gid)
            default = option["default"]
            if name in global_values:
                default = global_values[name]
            if name in MACHINE_DEFAULTS:
                default = None
            entries.append((name, kind, default, per_download))
        return version, entries
    finally:
        aria2.close()


def swift_string(text):
    return json.dumps(text, ensure_ascii=False)


def render(version, entries):
    lines = [
        "// Generated by Scripts/aria2-options.py from aria2c " + version + "; do not edit.",
        "",
        "extension Aria2Option {",
        "    /// aria2's options by name (without the ones of its command line only).",
        "    static let catalogue: [String: Aria2Option] = {",
        "        var options: [String: Aria2Option] = [:]",
        "        for option in list { options[option.name] = option }",
        "        return options",
        "    }()",
        "",
        "    private static let list: [Aria2Option] = [",
    ]
    for name, (what, detail), default, per_download in entries:
        if what == "boolean":
            values = ".boolean"
        elif what in ("integer", "size"):
            upper = "nil" if detail[1] is None else str(detail[1])
            values = f".{what}({detail[0]}, {upper})"
        elif what == "decimal":
            values = f".decimal({detail[0]})"
        elif what == "choice":
            values = ".choice([" + ", ".join(swift_string(v) for v in detail) + "])"
        else:
            values = ".text"
        default_text = "nil" if default in (None, "") else swift_string(default)
        lines.append(
            f"        Aria2Option({swift_string(name)}, {values}, default: {default_text}, "
            f"perDownload: {'true' if per_download else 'false'}),")
    lines += ["    ]", "}", ""]
    # In the tree's format (swift-format, with the repository's configuration).
    formatted = subprocess.run(
        ["swift", "format", "format", "--assume-filename", TARGET, "-"], input="\n".join(lines), text=True,
        capture_output=True, check=True, cwd=REPO)
    return formatted.stdout


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "--check"
    if mode not in ("--write", "--check"):
        raise SystemExit(__doc__)
    text = render(*catalogue())
    if mode == "--write":
        with open(TARGET, "w") as file:
            file.write(text)
        print(f"wrote {os.path.relpath(TARGET, REPO)}")
        return
    with open(TARGET) as file:
        if file.read() != text:
            raise SystemExit("aria2-options: the catalogue differs from aria2c's options: "
                             "run python3 Scripts/aria2-options.py --write")
    print("the aria2 option catalogue matches aria2c")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# P7: 10 000 zero-byte tasks through the download engine on the in-memory mock transport
# (see shared BENCHMARKS.md): tasks per second, target ≥ 20 000/s.
#
# Builds Benchmarks/EngineBenchmark in release (a separate package that depends on the
# repository by path), then for each download directory and each maxDownloadCount runs one
# warm-up and N timed rounds. A round adds every task with one `download` call on a
# `MockTransport` in automatic mode (every task answers 200 with an empty body) and ends when
# the last completion handler ran and every file is in the directory; route setup and file
# cleanup are outside the timing. It prints a Markdown table of medians with the date, the
# machine and the command. Besides wall time it reports the process's CPU time: machines here
# are shared, and CPU time shows the engine's own cost when other jobs take the cores.
#
# Two directories by default, because creating a file is most of a zero-byte task's I/O:
# tmpfs (/dev/shm: the engine's and the mock's own cost — the figure to hold against the
# target) and the repository's disk (Benchmarks/.work/p7, what a download directory costs on
# this machine). The disk figure depends on the file system's recent history more than on
# the engine: for a minute or more after tens of thousands of files were deleted (by an
# earlier run, say), ext4 scans past its recently freed inodes on every creation (perf shows
# the kernel in find_get_block_common and recently_deleted), and the same run measures from
# 2 000 to 17 000 tasks/s. Runs write into fresh subdirectories and delete only at the end.
#
# Usage: bash Benchmarks/p7.sh [--tasks 10000] [--rounds 5] [--limits 16,1] [--directory DIR]...
#                              [--no-build]
#   --tasks N        tasks per round (default 10000).
#   --rounds N       timed rounds after the warm-up (at least 5 for real figures; default 5).
#   --limits LIST    comma-separated maxDownloadCount values; 0 means unlimited (default 16,1).
#                    Unlimited is slow because the mock transport scans every active transfer
#                    per step (quadratic in the tasks in flight), not because of the engine.
#   --directory DIR  a download directory to measure in (repeatable; replaces the defaults).
#                    It is emptied and removed by every run: give a path of its own.
#   --no-build       reuse the binary built before.
#
# Exit status: 0 when every run succeeded (whether or not the target was met), non-zero when a
# run failed.
set -euo pipefail

die() { printf 'p7.sh: error: %s\n' "$*" >&2; exit 1; }
note() { printf '==> %s\n' "$*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
COMMAND="bash Benchmarks/p7.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

TASKS=10000
ROUNDS=5
LIMITS=16,1
BUILD=1
DIRECTORIES=()

while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) [[ $# -ge 2 ]] || die "--tasks needs a value"; TASKS=$2; shift 2 ;;
        --tasks=*) TASKS=${1#*=}; shift ;;
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --rounds=*) ROUNDS=${1#*=}; shift ;;
        --limits) [[ $# -ge 2 ]] || die "--limits needs a value (e.g. 16,1)"; LIMITS=$2; shift 2 ;;
        --limits=*) LIMITS=${1#*=}; shift ;;
        --directory) [[ $# -ge 2 ]] || die "--directory needs a value"; DIRECTORIES+=("$2"); shift 2 ;;
        --directory=*) DIRECTORIES+=("${1#*=}"); shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done

[[ $TASKS =~ ^[0-9]+$ && $TASKS -ge 1 ]] || die "--tasks must be a positive integer, got '$TASKS'"
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "--rounds must be a positive integer, got '$ROUNDS'"
[[ $LIMITS =~ ^-?[0-9]+(,-?[0-9]+)*$ ]] || die "--limits must be comma-separated integers, got '$LIMITS'"
(( ROUNDS >= 5 )) || note "fewer than 5 rounds: fine for a try, not for a recorded figure"

WORK="$REPO/Benchmarks/.work/p7"
mkdir -p "$WORK"
if [[ ${#DIRECTORIES[@]} -eq 0 ]]; then
    if [[ -d /dev/shm && -w /dev/shm ]]; then DIRECTORIES+=("/dev/shm/peregrine-p7.$$"); fi
    DIRECTORIES+=("$WORK/downloads")
fi
for directory in "${DIRECTORIES[@]}"; do
    [[ $directory == /* ]] || die "--directory must be an absolute path, got '$directory'"
    [[ $directory != / && $directory != "$REPO" && $directory != "$HOME" ]] || die "refusing to use '$directory' (it is emptied by every run)"
done

PACKAGE="$REPO/Benchmarks/EngineBenchmark"
BINARY="$PACKAGE/.build/release/EngineBenchmark"
if (( BUILD )); then
    note "building EngineBenchmark (release)"
    rm -f "$PACKAGE"/.build/*.yaml  # plan again: files added to the library since (see lib.sh)
    (cd "$PACKAGE" && swift build -c release --scratch-path .build 2>&1 | tail -n 3) >&2
fi
[[ -x $BINARY ]] || die "no benchmark binary at $BINARY (run without --no-build)"

ARGS=(--tasks "$TASKS" --rounds "$ROUNDS" --limits "$LIMITS")
for directory in "${DIRECTORIES[@]}"; do ARGS+=(--directory "$directory"); done

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
LOAD=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo unknown)
note "running: $BINARY ${ARGS[*]}"
TABLE=$("$BINARY" "${ARGS[@]}")

printf '### P7 — %s zero-byte tasks through the engine on the mock transport\n\n' "$TASKS"
printf -- '- date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
printf -- '- machine: %s, %s cores (%s), load average at start %s\n' \
    "$(uname -srm)" "$(nproc)" "${CPU_MODEL:-unknown CPU}" "$LOAD"
printf -- '- Swift: %s\n' "$(swift --version 2>/dev/null | head -n 1)"
printf -- '- command: `%s`\n\n' "$COMMAND"
printf '%s\n' "$TABLE"

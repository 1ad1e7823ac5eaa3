#!/usr/bin/env bash
# P5: the download list at 100 000 tasks (see shared BENCHMARKS.md).
#
# Builds Benchmarks/SortingBenchmark in release (a separate package that depends on this one by
# path) and runs it: sorting by name with A–Z + "#" index sections and by size with size sections
# (target: median ≤ 150 ms each), adding 10 000 tasks to a 100 000-task addTime list (in one call,
# in 10 000 calls, and older tasks that must be merged in), and lookups by URL and by index path.
# Each figure is the median of N timed rounds after a warm-up round. Prints a Markdown section
# with the date, the machine and the command, ready for Docs/Benchmarks.md.
#
# Usage: bash Benchmarks/p5.sh [--rounds 7] [--count 100000] [--no-build]
#   --rounds N   timed rounds per figure (at least 5 for real figures; default 7).
#   --count N    tasks in the list (default 100000; the insertion adds a tenth of it).
#   --no-build   reuse the binary built before.
set -euo pipefail

die() { printf 'p5.sh: error: %s\n' "$*" >&2; exit 1; }
note() { printf '==> %s\n' "$*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PACKAGE="$SCRIPT_DIR/SortingBenchmark"
COMMAND="bash Benchmarks/p5.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

ROUNDS=7
COUNT=100000
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --rounds=*) ROUNDS=${1#*=}; shift ;;
        --count) [[ $# -ge 2 ]] || die "--count needs a value"; COUNT=$2; shift 2 ;;
        --count=*) COUNT=${1#*=}; shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "--rounds must be a positive integer, got '$ROUNDS'"
[[ $COUNT =~ ^[0-9]+$ && $COUNT -ge 1000 ]] || die "--count must be an integer of at least 1000, got '$COUNT'"
(( ROUNDS >= 5 )) || note "fewer than 5 rounds: fine for a try, not for a recorded figure"

command -v swift >/dev/null || die "swift is not on PATH"
if (( BUILD )); then
    note "building Benchmarks/SortingBenchmark in release"
    swift build -c release --package-path "$PACKAGE" >&2 || die "the benchmark did not build"
fi
BIN="$PACKAGE/.build/release/SortingBenchmark"
[[ -x $BIN ]] || die "no benchmark binary at $BIN (run without --no-build)"

CPU=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
MEMORY=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
SWIFT_VERSION=$(swift --version 2>/dev/null | head -n1)

note "running $ROUNDS rounds per figure with $COUNT tasks"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
TABLE=$("$BIN" --rounds "$ROUNDS" --count "$COUNT" 2>/dev/null) || die "the benchmark failed"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

cat <<REPORT
### P5 — download list: sorts, insertion, lookups

- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Machine: ${CPU:-unknown CPU}, $(nproc) cores, ${MEMORY:-? memory}, $(uname -sr); load average ${LOAD_BEFORE} before, ${LOAD_AFTER} after (shared machine)
- Toolchain: ${SWIFT_VERSION}, release build
- Command: \`${COMMAND}\`
- Medians of ${ROUNDS} timed rounds after a warm-up. Sorts start from an add-time order; lists hold
  realistic names (numbered series, mixed case, accents, Cyrillic and CJK), sizes across every size
  group, add times over 60 days, all sectioning options on.

${TABLE}
REPORT

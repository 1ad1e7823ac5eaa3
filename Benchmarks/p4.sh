#!/usr/bin/env bash
# P4: the task stores at 100 000 and 1 000 000 tasks (see shared BENCHMARKS.md).
#
# Builds Benchmarks/StorageBenchmark in release (a separate package that depends on this one by
# path) and, for both backends (JSON and binary property list), measures:
#   - load: opening a compacted store and loading every task (targets: 100 000 ≤ 0.3 s,
#     1 000 000 ≤ 3 s), with the loading process's peak RSS;
#   - one change at the largest count: mean time of record() for progress updates (buffered,
#     written within the flush delay) and for durable state changes (written and fdatasync'ed
#     before record returns, with their p99), the mean over all changes (target ≤ 1 ms
#     amortized), and the compaction the journal eventually needs, amortized over the
#     entries that trigger it;
#   - the SQLite peer (issue 19): the same tasks in one SQLite table through GRDB 7.10, WAL
#     mode with synchronous=FULL (every commit durable), loaded into the same StoredTask values;
#     its changes are each one durable transaction, and its "compaction" is a WAL checkpoint;
#   - the naive peer: the whole list as one Codable document (JSONEncoder / binary
#     PropertyListEncoder) rewritten atomically after each change, and its load.
# Each load figure is the median of N rounds after a warm-up round, backends in rotating order,
# each measurement in its own process. Prints a Markdown section for Docs/Benchmarks.md.
#
# Usage: bash Benchmarks/p4.sh [--rounds 5] [--counts "100000 1000000"] [--changes 20000] [--no-build]
set -euo pipefail

die() { printf 'p4.sh: error: %s\n' "$*" >&2; exit 1; }
note() { printf '==> %s\n' "$*" >&2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PACKAGE="$SCRIPT_DIR/StorageBenchmark"
WORK="$SCRIPT_DIR/.work/p4"
COMMAND="bash Benchmarks/p4.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

ROUNDS=5
COUNTS="100000 1000000"
CHANGES=20000
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --counts) [[ $# -ge 2 ]] || die "--counts needs a value"; COUNTS=$2; shift 2 ;;
        --changes) [[ $# -ge 2 ]] || die "--changes needs a value"; CHANGES=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "--rounds must be a positive integer, got '$ROUNDS'"
[[ $CHANGES =~ ^[0-9]+$ && $CHANGES -ge 10 ]] || die "--changes must be an integer of at least 10"
(( ROUNDS >= 5 )) || note "fewer than 5 rounds: fine for a try, not for a recorded figure"

command -v swift >/dev/null || die "swift is not on PATH"
if (( BUILD )); then
    note "building Benchmarks/StorageBenchmark in release"
    rm -f "$PACKAGE"/.build/*.yaml  # plan again: files added to the library since (see lib.sh)
    swift build -c release --package-path "$PACKAGE" >&2 || die "the benchmark did not build"
fi
BIN="$PACKAGE/.build/release/StorageBenchmark"
[[ -x $BIN ]] || die "no benchmark binary at $BIN (run without --no-build)"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -n1; }
maximum() { sort -g | tail -n1; }
mib() { du -cm "$@" 2>/dev/null | tail -n1 | cut -f1; }

CPU=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
MEMORY=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
SWIFT_VERSION=$(swift --version 2>/dev/null | head -n1)
FILESYSTEM=$(mkdir -p "$WORK" && df -T "$WORK" | awk 'NR == 2 { print $2 }')
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

BACKENDS="json plist sqlite naive-json naive-plist"
LOAD_ROWS=""
CHANGE_ROWS=""
NAIVE_ROWS=""
LARGEST=0
for COUNT in $COUNTS; do (( COUNT > LARGEST )) && LARGEST=$COUNT; done

for COUNT in $COUNTS; do
    DIR="$WORK/$COUNT"
    rm -rf "$DIR"
    mkdir -p "$DIR"
    for B in $BACKENDS; do
        note "preparing $B with $COUNT tasks"
        "$BIN" prepare --backend "$B" --count "$COUNT" --root "$DIR" || die "prepare $B failed"
    done
    declare -A TIMES=() RSS=() HELD=()
    ORDER=($BACKENDS)
    for ((ROUND = 0; ROUND <= ROUNDS; ROUND++)); do
        note "load round $ROUND of $ROUNDS at $COUNT tasks"
        for ((I = 0; I < ${#ORDER[@]}; I++)); do
            B=${ORDER[$(( (I + ROUND) % ${#ORDER[@]} ))]}
            read -r SECONDS_TAKEN _ PEAK RESIDENT < <("$BIN" load --backend "$B" --count "$COUNT" --root "$DIR") || die "load $B failed"
            (( ROUND == 0 )) && continue
            TIMES[$B]+="$SECONDS_TAKEN "
            RSS[$B]+="$PEAK "
            HELD[$B]+="$RESIDENT "
        done
    done
    for B in $BACKENDS; do
        MED=$(tr ' ' '\n' <<<"${TIMES[$B]}" | grep . | median)
        MIN=$(tr ' ' '\n' <<<"${TIMES[$B]}" | grep . | minimum)
        MAX=$(tr ' ' '\n' <<<"${TIMES[$B]}" | grep . | maximum)
        PEAK=$(tr ' ' '\n' <<<"${RSS[$B]}" | grep . | median)
        RESIDENT=$(tr ' ' '\n' <<<"${HELD[$B]}" | grep . | median)
        case $B in
            json) FILES=("$DIR"/bench.json*) ;;
            plist) FILES=("$DIR"/bench.plist*) ;;
            sqlite) FILES=("$DIR"/bench.sqlite*) ;;
            *) FILES=("$DIR/bench.$B") ;;
        esac
        SIZE=$(mib "${FILES[@]}")
        TARGET="—"
        if [[ $B == json || $B == plist ]]; then
            LIMIT=$(awk -v c="$COUNT" 'BEGIN { print (c <= 100000) ? 0.3 : 3 * c / 1000000 }')
            TARGET=$(awk -v m="$MED" -v l="$LIMIT" 'BEGIN { printf "≤ %s s: %s", l, (m <= l) ? "met" : "missed" }')
        fi
        LOAD_ROWS+=$(printf '| %s | %s | %.3f s | %.3f–%.3f s | %.0f MiB | %.0f MiB | %s MiB | %s |' "$B" "$COUNT" "$MED" "$MIN" "$MAX" "$PEAK" "$RESIDENT" "$SIZE" "$TARGET")$'\n'
    done
    for B in naive-json naive-plist; do
        note "naive save after one change, $B, $COUNT tasks"
        SAVE=$("$BIN" change --backend "$B" --root "$DIR" --changes 3) || die "naive change $B failed"
        NAIVE_ROWS+=$(printf '| %s | %s | %.3f s |' "$B" "$COUNT" "$SAVE")$'\n'
    done
    if (( COUNT == LARGEST )); then
        for B in json plist sqlite; do
            note "$CHANGES changes, $B, $COUNT tasks"
            read -r PROGRESS DURABLE P99 ALL COMPACTION < <("$BIN" change --backend "$B" --root "$DIR" --changes "$CHANGES") || die "change $B failed"
            AMORTIZED=$(awk -v c="$COMPACTION" -v n="$COUNT" 'BEGIN { printf "%.2f", c / n * 1e6 }')
            VERDICT=$(awk -v a="$ALL" -v m="$AMORTIZED" 'BEGIN { print (a + m <= 1000) ? "met" : "missed" }')
            [[ $B == sqlite ]] && VERDICT="— (peer)"
            CHANGE_ROWS+=$(printf '| %s | %s | %.1f µs | %.0f µs | %.0f µs | %.1f µs | %.2f s (%s µs per change) | ≤ 1 ms: %s |' "$B" "$COUNT" "$PROGRESS" "$DURABLE" "$P99" "$ALL" "$COMPACTION" "$AMORTIZED" "$VERDICT")$'\n'
        done
    fi
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

cat <<REPORT
### P4 — task stores at 100 000 and 1 000 000 tasks

- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Machine: ${CPU:-unknown CPU}, $(nproc) cores, ${MEMORY:-? memory}, $(uname -sr), ${FILESYSTEM:-?} (Benchmarks/.work/p4); load average ${LOAD_BEFORE} before, ${LOAD_AFTER} after (shared machine)
- Toolchain: ${SWIFT_VERSION}, release build
- Command: \`${COMMAND}\`
- Load: medians of ${ROUNDS} rounds after a warm-up, each in its own process (open + load every
  task of a compacted store; peak RSS is that process's peak, resident what it holds with every
  task loaded). Tasks: realistic records (URL, file
  name, kind, MIME type, sizes, state; a quarter stopped with a resume record; a tenth with meta
  info and a checksum).

| store | tasks | load (median) | min–max | peak RSS | resident, loaded | files | target |
|---|---|---|---|---|---|---|---|
${LOAD_ROWS}
One change (${CHANGES} changes on random tasks: nine progress updates for each durable state
change, each its own \`record\` call):

| store | tasks | progress update (mean) | durable change (mean) | durable p99 | all changes (mean) | compaction, amortized over the journal that triggers it | target |
|---|---|---|---|---|---|---|---|
${CHANGE_ROWS}
Naive peer: after one change, the whole list encoded with Codable and rewritten atomically
(temporary file, fsync, rename):

| peer | tasks | save after one change (mean of 3) |
|---|---|---|
${NAIVE_ROWS}
REPORT

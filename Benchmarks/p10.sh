#!/usr/bin/env bash
# P10 (issue 20): zero-byte tasks claimed and finished through one shared PostgreSQL queue
# (PostgresClaimingQueue) by 1, 4 and 16 services — Benchmarks/PostgresStoreBenchmark's
# FleetBenchmark, release build. Each service is a queue object with its own connections on a
# thread of its own, claiming batches (--batch, 50) with SKIP LOCKED and finishing each batch in
# one statement. No transfer is made: this is the queue's part of a fleet's throughput.
# PostgreSQL is made by initdb in a temporary directory and reached over its unix socket, with
# its default durability (fsync on, synchronous_commit on). As root, it runs as nobody.
#
# Usage: bash Benchmarks/p10.sh [--tasks 20000] [--services "1 4 16"] [--batch 50] [--no-build]
#            [--origin-limit N]   tasks over 8 origins, each limited to N connections across the
#                                 services (the fleet's limits: claims take turns under a lock)
#            [--bin PATH]   a FleetBenchmark built elsewhere (a debug build, say); implies --no-build
set -euo pipefail
SCRIPT_NAME=p10.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COMMAND="bash Benchmarks/p10.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done
TASKS=20000
SERVICES="1 4 16"
BATCH=50
BUILD=1
BIN=""
LIMIT_ARGS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) TASKS=$2; shift 2 ;;
        --services) SERVICES=$2; shift 2 ;;
        --batch) BATCH=$2; shift 2 ;;
        --origin-limit) LIMIT_ARGS=(--origin-limit "$2"); shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin) BIN=$2; BUILD=0; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done

ensure_packages postgresql
ensure_swift
PACKAGE="$REPO/Benchmarks/PostgresStoreBenchmark"
if (( BUILD )); then
    note "building Benchmarks/PostgresStoreBenchmark (FleetBenchmark) in release"
    forget_build_plan "$PACKAGE"
    swift build -c release --package-path "$PACKAGE" --product FleetBenchmark >&2 || die "the benchmark did not build"
fi
BIN=${BIN:-$PACKAGE/.build/release/FleetBenchmark}
KIND="release build"
[[ $BIN == "$PACKAGE/.build/release/FleetBenchmark" ]] || KIND="binary $BIN"
[[ -x $BIN ]] || die "no benchmark binary at $BIN (run without --no-build)"

PGBIN=${PEREGRINE_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
[[ -x $PGBIN/initdb ]] || die "initdb not found (Debian package postgresql)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-p10.XXXXXX")
RUN_AS=()
if [[ $EUID -eq 0 ]]; then
    chown nobody:nogroup "$WORK"
    RUN_AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
cleanup() {
    "${RUN_AS[@]}" "$PGBIN/pg_ctl" stop -D "$WORK/data" -m fast -w >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
note "initdb in $WORK"
"${RUN_AS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U peregrine --auth=trust -E UTF8 --locale=C >/dev/null \
    || die "initdb failed"
PORT=5432
"${RUN_AS[@]}" "$PGBIN/pg_ctl" start -D "$WORK/data" -w -l "$WORK/server.log" \
    -o "-c listen_addresses='' -c unix_socket_directories=$WORK -p $PORT -c max_connections=100" >/dev/null \
    || { cat "$WORK/server.log" >&2; die "postgres did not start"; }
"${RUN_AS[@]}" "$PGBIN/psql" -X -q -h "$WORK" -p "$PORT" -U peregrine -d postgres -c "CREATE DATABASE bench" \
    || die "CREATE DATABASE failed"
PG_VERSION=$("$PGBIN/postgres" --version)

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=""
for count in $SERVICES; do
    note "running $TASKS tasks through $count services"
    LINE=$("$BIN" --postgres "postgresql://peregrine@/bench?host=$WORK&port=$PORT" --services "$count" \
        --tasks "$TASKS" --batch "$BATCH" --queue "p10-$count" "${LIMIT_ARGS[@]}") || die "the benchmark failed with $count services"
    printf '%s\n' "$LINE" >&2
    read -r _ services _ tasks _ seconds _ rate _ claims <<<"$LINE"
    ROWS+="| $services | $tasks | $seconds s | **$rate** | $claims |"$'\n'
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

cat <<REPORT
### P10: claim-and-finish through one PostgreSQL queue

- Date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD)
- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, $(uname -sr); load average ${LOAD_BEFORE} before, ${LOAD_AFTER} after (shared machine)
- Toolchain: $(swift --version 2>/dev/null | head -n1), ${KIND}; ${PG_VERSION}, default settings, unix socket
- Command: \`${COMMAND}\` (claims of $BATCH, one finishing statement per batch)

| services | tasks | wall | tasks/s | claim calls |
|---|---|---|---|---|
${ROWS}
REPORT

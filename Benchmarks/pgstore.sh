#!/usr/bin/env bash
# Issue 20: the PostgreSQL store (PeregrinePostgresStorage) beside the journal store
# (JSONTaskStore), in one run of Benchmarks/PostgresStoreBenchmark (release build):
#   - put: tasks added one durable record() per task, and all in one call;
#   - progress updates (not durable) and durable state changes, one per call (p99 of the latter);
#   - load of every task into a fresh store object;
#   - a list of 10,000 URLs: written whole once, then one item replaced per putList (mean time
#     per change, and for PostgreSQL the list rows each change wrote).
# PostgreSQL is made by initdb in a temporary directory and reached over its unix socket, with
# its default durability (fsync on, synchronous_commit on); the journal store writes to a
# temporary directory on the same file system. As root, initdb and the server run as nobody.
#
# Usage: bash Benchmarks/pgstore.sh [--tasks 10000] [--progress 20000] [--list 10000] [--no-build]
set -euo pipefail
SCRIPT_NAME=pgstore.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COMMAND="bash Benchmarks/pgstore.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done
TASKS=10000
PROGRESS=20000
LIST=10000
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) TASKS=$2; shift 2 ;;
        --progress) PROGRESS=$2; shift 2 ;;
        --list) LIST=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done

ensure_packages postgresql
ensure_swift
PACKAGE="$REPO/Benchmarks/PostgresStoreBenchmark"
if (( BUILD )); then
    note "building Benchmarks/PostgresStoreBenchmark in release"
    forget_build_plan "$PACKAGE"
    swift build -c release --package-path "$PACKAGE" >&2 || die "the benchmark did not build"
fi
BIN="$PACKAGE/.build/release/PostgresStoreBenchmark"
[[ -x $BIN ]] || die "no benchmark binary at $BIN (run without --no-build)"

PGBIN=${PEREGRINE_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
[[ -x $PGBIN/initdb ]] || die "initdb not found (Debian package postgresql)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-pgstore.XXXXXX")
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
    -o "-c listen_addresses='' -c unix_socket_directories=$WORK -p $PORT" >/dev/null \
    || { cat "$WORK/server.log" >&2; die "postgres did not start"; }
"${RUN_AS[@]}" "$PGBIN/psql" -X -q -h "$WORK" -p "$PORT" -U peregrine -d postgres -c "CREATE DATABASE bench" \
    || die "CREATE DATABASE failed"
mkdir -p "$WORK/journal"
PG_VERSION=$("$PGBIN/postgres" --version)

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
note "running ($TASKS tasks, $PROGRESS progress updates, a list of $LIST)"
OUTPUT=$("$BIN" --postgres "postgresql://peregrine@/bench?host=$WORK&port=$PORT" --root "$WORK/journal" \
    --tasks "$TASKS" --progress "$PROGRESS" --list "$LIST") || die "the benchmark failed"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
printf '%s\n' "$OUTPUT" >&2

value() { awk -v b="$1" -v m="$2" '$1 == b && $2 == m { print $3 " " $4 }' <<<"$OUTPUT"; }
detail() { awk -v b="$1" -v m="$2" '$1 == b && $2 == m { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' <<<"$OUTPUT"; }
row() {
    printf '| %s | %s %s | %s %s |\n' "$1" "$(value journal-json "$2")" "$(detail journal-json "$2")" \
        "$(value postgres "$2")" "$(detail postgres "$2")"
}

cat <<REPORT
### PostgreSQL store (issue 20)

- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, $(uname -sr); load average ${LOAD_BEFORE} before, ${LOAD_AFTER} after (shared machine)
- Toolchain: $(swift --version 2>/dev/null | head -n1), release build; ${PG_VERSION}, default settings, unix socket
- Command: \`${COMMAND}\`

| measure | journal store (JSON) | PostgreSQL store |
|---|---|---|
$(row "put, one durable call per task ($TASKS)" put)
$(row "put, all $TASKS in one call" put-batch)
$(row "progress update, one call each ($PROGRESS)" progress)
$(row "durable state change, one call each" durable)
$(row "load $TASKS tasks" load)
$(row "list of $LIST written whole" list-full)
$(row "list of $LIST, one item replaced (mean per change)" list-one)
REPORT

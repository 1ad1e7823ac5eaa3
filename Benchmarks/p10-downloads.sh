#!/usr/bin/env bash
# P10, downloads (issue 20): FILES × SIZE files from nginx through a fleet of 1 and 4 `peregrined`
# sharing one PostgreSQL queue — to show how the fleet scales on this machine and where it stops.
# Every service runs --fleet-slots SLOTS downloads at once into its own directory; the files are
# added through the first service's RPC (system.multicall, 500 a call), and the clock runs from
# the first addition until the queue has every task finished (polled every 50 ms with psql).
# PostgreSQL (initdb, default durability, unix socket) and nginx are started here. Release
# build of peregrined (--static-swift-stdlib, in .build-bench, as P9 builds it).
#
# Usage: bash Benchmarks/p10-downloads.sh [--files 2000] [--size 16K] [--services "1 4"]
#            [--slots 16] [--rounds 1] [--no-build]
set -euo pipefail
SCRIPT_NAME=p10-downloads.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COMMAND="bash Benchmarks/p10-downloads.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done
FILES=2000
SIZE=16K
SERVICES="1 4"
SLOTS=16
ROUNDS=1
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --files) FILES=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --services) SERVICES=$2; shift 2 ;;
        --slots) SLOTS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done

ensure_packages nginx-light postgresql curl python3
ensure_swift
if (( BUILD )); then
    note "building peregrined in release (.build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrined --scratch-path .build-bench) >&2 \
        || die "peregrined did not build"
fi
PEREGRINED=${PEREGRINED_BIN:-$REPO/.build-bench/release/peregrined}
[[ -x $PEREGRINED ]] || die "no peregrined at $PEREGRINED (run without --no-build)"

PGBIN=${PEREGRINE_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
[[ -x $PGBIN/initdb ]] || die "initdb not found (Debian package postgresql)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-p10d.XXXXXX")
PG=$WORK/pg
mkdir -p "$PG" "$WORK/www/f" "$WORK/logs"
RUN_AS=()
if [[ $EUID -eq 0 ]]; then
    chmod 711 "$WORK"
    chown nobody:nogroup "$PG"
    RUN_AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
SERVICE_PIDS=()
cleanup() {
    for pid in "${SERVICE_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    stop_nginx
    "${RUN_AS[@]}" "$PGBIN/pg_ctl" stop -D "$PG/data" -m fast -w >/dev/null 2>&1 || true
    rm -rf "$WORK" "${NGINX_DIR:-}"
}
trap cleanup EXIT

note "initdb in $PG"
"${RUN_AS[@]}" "$PGBIN/initdb" -D "$PG/data" -U peregrine --auth=trust -E UTF8 --locale=C >/dev/null \
    || die "initdb failed"
PORT=5432
"${RUN_AS[@]}" "$PGBIN/pg_ctl" start -D "$PG/data" -w -l "$PG/server.log" \
    -o "-c listen_addresses='' -c unix_socket_directories=$PG -p $PORT -c max_connections=100" >/dev/null \
    || { cat "$PG/server.log" >&2; die "postgres did not start"; }
psql_bench() { "${RUN_AS[@]}" "$PGBIN/psql" -X -q -A -t -h "$PG" -p "$PORT" -U peregrine -d "$@"; }
psql_bench postgres -c "CREATE DATABASE bench" >/dev/null || die "CREATE DATABASE failed"
STORE="postgresql://peregrine@/bench?host=$PG&port=$PORT"

note "writing $FILES files of $SIZE"
BYTES=$(numfmt --from=iec "$SIZE")
head -c $((FILES * BYTES)) /dev/urandom >"$WORK/all.bin"
(cd "$WORK/www/f" && split -a 5 -d -b "$BYTES" "$WORK/all.bin" "" && rm "$WORK/all.bin")
start_nginx "$WORK/www" f/00000
BASE=http://127.0.0.1:$NGINX_PORT/f

# add_all RPC_URL QUEUE: adds every file through one service, 500 a multicall.
add_all() {
    python3 - "$1" "$BASE" "$FILES" <<'PY'
import json, sys, urllib.request
url, base, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = ["%05d" % i for i in range(count)]
for start in range(0, count, 500):
    calls = [{"methodName": "aria2.addUri", "params": [[f"{base}/{n}"]]} for n in names[start:start + 500]]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "system.multicall", "params": [calls]}).encode()
    answer = json.load(urllib.request.urlopen(urllib.request.Request(url, body, {"Content-Type": "application/json"})))
    bad = [r for r in answer["result"] if not isinstance(r, list)]
    if bad:
        sys.exit(f"addUri failed: {bad[0]}")
PY
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=""
for count in $SERVICES; do
    for round in $(seq 1 "$ROUNDS"); do
        QUEUE="p10d-$count-$round"
        SERVICE_PIDS=()
        RPC=()
        for i in $(seq 1 "$count"); do
            port=$(free_port)
            dir=$WORK/run/$QUEUE/$i
            mkdir -p "$dir/dir" "$dir/state"
            PEREGRINE_STORE=$STORE "$PEREGRINED" --dir "$dir/dir" --state "$dir/state" --rpc-listen-port "$port" \
                --queue "$QUEUE" --fleet-slots "$SLOTS" >"$WORK/logs/$QUEUE-$i.log" 2>&1 &
            SERVICE_PIDS+=($!)
            RPC+=("http://127.0.0.1:$port/jsonrpc")
        done
        for i in "${!RPC[@]}"; do
            for attempt in $(seq 1 200); do
                curl -fsS -o /dev/null -d '{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion"}' "${RPC[$i]}" 2>/dev/null \
                    && break
                kill -0 "${SERVICE_PIDS[$i]}" 2>/dev/null || die "service $i exited: $(cat "$WORK/logs/$QUEUE-$((i + 1)).log")"
                sleep 0.1
            done
        done
        note "$count services, round $round: adding $FILES downloads"
        START=$(date +%s.%N)
        add_all "${RPC[0]}"
        while :; do
            done_count=$(psql_bench bench -c \
                "SELECT count(*) FROM peregrine_tasks WHERE store = '$QUEUE' AND state = 'finished'")
            [[ $done_count -ge $FILES ]] && break
            failed=$(psql_bench bench -c \
                "SELECT count(*) FROM peregrine_tasks WHERE store = '$QUEUE' AND state NOT IN ('finished', 'pending', 'downloading')")
            [[ $failed -eq 0 ]] || die "$failed downloads failed (logs in $WORK/logs)"
            sleep 0.05
        done
        END=$(date +%s.%N)
        SECONDS_TAKEN=$(awk -v a="$START" -v b="$END" 'BEGIN { printf "%.3f", b - a }')
        # Every file arrived once, across the services' directories, with its bytes.
        landed=$(find "$WORK/run/$QUEUE" -path '*/dir/*' -type f | wc -l)
        total=$(find "$WORK/run/$QUEUE" -path '*/dir/*' -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
        [[ $landed -eq $FILES && $total -eq $((FILES * BYTES)) ]] \
            || die "$landed files, $total bytes landed (expected $FILES, $((FILES * BYTES)))"
        per_service=$(for i in $(seq 1 "$count"); do find "$WORK/run/$QUEUE/$i/dir" -type f | wc -l; done | paste -sd/)
        for pid in "${SERVICE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
        for pid in "${SERVICE_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
        SERVICE_PIDS=()
        rate=$(awk -v n="$FILES" -v s="$SECONDS_TAKEN" 'BEGIN { printf "%.0f", n / s }')
        note "$count services: $SECONDS_TAKEN s, $rate files/s ($per_service)"
        ROWS+="| $count | $round | $SECONDS_TAKEN s | **$rate** | $per_service |"$'\n'
        rm -rf "$WORK/run/$QUEUE"
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

cat <<REPORT
### P10, downloads: $FILES × $SIZE from nginx through a fleet of peregrined

- Date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD)
- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, $(uname -sr); load average ${LOAD_BEFORE} before, ${LOAD_AFTER} after (shared machine)
- Toolchain: $(swift --version 2>/dev/null | head -n1), release build; $("$PGBIN/postgres" --version), default settings, unix socket; nginx on 127.0.0.1
- Command: \`${COMMAND}\` (--fleet-slots $SLOTS per service; added through the first service)

| services | round | wall | files/s | files per service |
|---|---|---|---|---|
${ROWS}
REPORT

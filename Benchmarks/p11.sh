#!/usr/bin/env bash
# P11: the dashboard in headless Chromium with 10,000 tasks in the service, 100 of them
# downloading (see shared BENCHMARKS.md): the time to the first full render, and the longest
# main-thread task while the downloads update once a second.
#
# Starts its own nginx on a free port of every loopback address (127.0.0.1 to .7: the daemon
# opens at most 16 connections per host, so 100 downloads need several), serving ACTIVE files
# slowly (limit_rate 16k: they run for the whole measurement), then `peregrine daemon` (release
# build) with TASKS − ACTIVE paused downloads and ACTIVE running ones, then
# Benchmarks/p11_dashboard.py, which opens the page in headless Chromium ROUNDS times (a fresh
# browser each time) and measures; prints a Markdown table of medians and the worst round.
#
# Usage: bash Benchmarks/p11.sh [--tasks 10000] [--active 100] [--seconds 10] [--rounds 3] [--no-build]
# Exit status: 0 when every round measured, 1 otherwise. Work files go to Benchmarks/.work/p11/.
set -euo pipefail
SCRIPT_NAME=p11.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/p11.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

TASKS=10000
ACTIVE=100
SECONDS_WINDOW=10
ROUNDS=3
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) TASKS=$2; shift 2 ;;
        --active) ACTIVE=$2; shift 2 ;;
        --seconds) SECONDS_WINDOW=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $TASKS =~ ^[0-9]+$ && $ACTIVE =~ ^[0-9]+$ && $ACTIVE -le $TASKS ]] || die "--tasks and --active: numbers, active ≤ tasks"
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "--rounds must be a positive integer"

ensure_packages nginx-light curl chromium chromium-driver python3-pip
python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("selenium") != "4.40.0")' 2>/dev/null \
    || python3 -m pip install --quiet "selenium==4.40.0" \
    || python3 -m pip install --quiet --break-system-packages "selenium==4.40.0" \
    || die "cannot install selenium 4.40.0"
WORK=$REPO/Benchmarks/.work/p11
rm -rf "$WORK/state" "$WORK/downloads"
mkdir -p "$WORK/www/a" "$WORK/logs" "$WORK/state" "$WORK/downloads"
if [[ $BUILD -eq 1 ]]; then
    ensure_swift
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench && swift build -c release --static-swift-stdlib --product peregrined --scratch-path .build-bench) >"$WORK/logs/build.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build.log" >&2; die "building peregrine failed"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}
[[ -x $PEREGRINE ]] || die "missing $PEREGRINE (run without --no-build)"

# Sparse files: 1 GiB each costs no disk, and at 16 KiB/s none ends during the measurement.
for i in $(seq 1 "$ACTIVE"); do [[ -f $WORK/www/a/$i.bin ]] || truncate -s 1G "$WORK/www/a/$i.bin"; done
echo probe >"$WORK/www/probe"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
NGINX_DIR=$(mktemp -d "${TMPDIR:-/tmp}/p11-nginx.XXXXXX")
DAEMON_PID=
cleanup() {
    local rc=$?
    [[ -n $DAEMON_PID ]] && kill -TERM "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
    [[ -f $NGINX_DIR/nginx.pid ]] && kill -TERM "$(cat "$NGINX_DIR/nginx.pid")" 2>/dev/null
    rm -rf "$NGINX_DIR" "$WORK/downloads" "$WORK/state"
    exit "$rc"
}
trap cleanup EXIT
user=""
[[ $EUID -eq 0 ]] && user="user $(id -un) $(id -gn);"
for attempt in 1 2 3 4 5 6 7 8; do
    NGINX_PORT=$((20000 + RANDOM % 40000))
    port_in_use "$NGINX_PORT" && continue
    mkdir -p "$NGINX_DIR/tmp"
    cat >"$NGINX_DIR/nginx.conf" <<CONF
$user
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 2048; }
http {
    access_log off;
    sendfile on;
    sendfile_max_chunk 16k;
    client_body_temp_path $NGINX_DIR/tmp/client;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;
    server {
        listen $NGINX_PORT;
        root $WORK/www;
        location /a/ { limit_rate 16k; }
    }
}
CONF
    "$NGINX" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" >"$NGINX_DIR/stdout.log" 2>&1 || continue
    for _ in $(seq 1 50); do
        curl -fsS -o /dev/null "http://127.0.0.1:$NGINX_PORT/probe" 2>/dev/null && break 2
        sleep 0.1
    done
done
curl -fsS -o /dev/null "http://127.0.0.1:$NGINX_PORT/probe" || die "nginx did not start (see $NGINX_DIR/error.log)"
note "nginx on port $NGINX_PORT of every loopback address"

SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
PEREGRINE_RPC_SECRET=$SECRET "$PEREGRINE" daemon --dir "$WORK/downloads" --state "$WORK/state" \
    --rpc-listen-port 0 --max-concurrent-downloads "$ACTIVE" 2>"$WORK/logs/daemon.log" &
DAEMON_PID=$!
PORT=
for _ in $(seq 1 300); do
    PORT=$(sed -n 's/.*peregrine daemon listening on port \([0-9]*\).*/\1/p' "$WORK/logs/daemon.log" | head -n 1)
    [[ -n $PORT ]] && break
    kill -0 "$DAEMON_PID" 2>/dev/null || die "the daemon ended (see $WORK/logs/daemon.log)"
    sleep 0.1
done
[[ -n $PORT ]] || die "the daemon did not listen"

# The tasks: paused ones in batches of 1000 calls (the service's batch bound), then the active ones.
note "adding $((TASKS - ACTIVE)) paused and $ACTIVE running downloads"
python3 "$REPO/Benchmarks/p11_tasks.py" "$PORT" "$SECRET" "$NGINX_PORT" "$TASKS" "$ACTIVE" || die "adding the downloads failed"
sleep 2  # every download has a speed sample

results=()
failed=0
for round in $(seq 1 "$ROUNDS"); do
    if result=$(python3 "$REPO/Benchmarks/p11_dashboard.py" --url "http://127.0.0.1:$PORT/#secret=$SECRET" \
        --seconds "$SECONDS_WINDOW" --rows "$TASKS" 2>"$WORK/logs/round-$round.log"); then
        results+=("$result")
        note "round $round: $result"
    else
        failed=1
        note "round $round FAILED (log: $WORK/logs/round-$round.log)"
    fi
done
[[ ${#results[@]} -gt 0 ]] || exit 1
stat=$(curl -fsS -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.getGlobalStat\",\"params\":[\"token:$SECRET\"]}" \
    "http://127.0.0.1:$PORT/jsonrpc")

printf '%s\n' "${results[@]}" >"$WORK/results.jsonl"
echo
echo "P11: $TASKS tasks ($ACTIVE downloading at 16 KiB/s each, the rest paused), headless Chromium $(chromium --version 2>/dev/null | awk '{print $2}'), ${#results[@]} rounds, ${SECONDS_WINDOW} s windows"
echo "Command: $COMMAND"
echo "Service at the end: $(python3 -c 'import json,sys; s=json.loads(sys.argv[1])["result"]; print(s["numActive"], "active,", s["numWaiting"], "waiting")' "$stat"); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 - "$WORK/results.jsonl" <<'PY'
import json, statistics, sys
rounds = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def row(label, key, unit, target=""):
    values = [r[key] for r in rounds]
    print(f"| {label} | {statistics.median(values):g}{unit} | {max(values):g}{unit} | {target} |")
print("| measure | median | worst | target |")
print("|---|---|---|---|")
row("first full render (navigation start → frame with the first rows, the list at full height), page opened again", "first_render_ms", " ms", "≤ 300 ms")
row("… until the list is asked for (page, styles, modules)", "list_request_ms", " ms")
row(f"… the first rows' answer (peregrine.listView with a row limit, {rounds[0]['first_bytes'] // 1024} KiB)", "list_answer_ms", " ms")
row("… parsing it and building the rows", "dom_ms", " ms")
row(f"every row in (frame after the whole list's answer, {rounds[0]['list_bytes'] // 1024} KiB)", "whole_list_ms", " ms")
row("first full render in a browser just started (cold)", "first_render_cold_ms", " ms")
row("longest main-thread task while updating (trace, wall)", "longest_task_ms", " ms", "≤ 16 ms")
row("… its CPU time (the thread's own, without waiting for a core)", "longest_task_cpu_ms", " ms")
row("tasks over 16 ms in the window (trace)", "tasks_over_16ms", "", "0")
row("longtask entries (PerformanceObserver, > 50 ms)", "longtasks_over_50ms", "", "0")
row("the page's longest update round (its own code)", "longest_update_ms", " ms")
row("update rounds in the window", "updates", "")
PY
exit "$failed"

#!/usr/bin/env bash
# P9: the download service with 10,000 tasks (see shared BENCHMARKS.md): `peregrine daemon`
# beside `aria2c --enable-rpc`, both running at once with the same paused downloads.
#
# Starts its own nginx on 127.0.0.1, both services (each with a secret token), fills each with
# TASKS paused downloads through `system.multicall` of `aria2.addUri` (`pause=true`) and reads
# VmRSS at once and 2 s later (what a burst freed may take a moment to go back), then for
# ROUNDS rounds, order rotating, measures on each:
#   - `aria2.tellActive` and `aria2.tellWaiting(0, 100)`: p50/p99 latency of REQUESTS sequential
#     calls on one keep-alive HTTP connection (Benchmarks/P9/p9client.py, Python http.client);
#   - `aria2.getGlobalStat`: requests/s from 50 keep-alive connections, `wrk -t2 -c50` for
#     WRK_SECONDS seconds (POST body from a Lua script; any non-2xx answer fails the run);
# then resident memory (VmRSS now, VmHWM the peak since start, from /proc), and last, per round,
# CLIENTS WebSocket listeners while DOWNLOADS downloads of FILE_SIZE run from nginx (limit_rate
# RATE per connection, so they overlap): every listener must get every onDownloadStart and
# onDownloadComplete; the figures are the time from the addUri call to each onDownloadStart at
# each listener, and the fan-out spread (a notification's arrival at a listener minus its
# first arrival at any listener).
#
# Usage: bash Benchmarks/p9.sh [--tasks 10000] [--rounds 5] [--requests 2000] [--wrk-seconds 5]
#                              [--clients 200] [--downloads 16] [--ws-rounds 3] [--no-build]
# Exit status: 0 when every measurement ran and every notification arrived, 1 otherwise.
# Work files go to Benchmarks/.work/p9/ (logs in logs/).
set -euo pipefail
SCRIPT_NAME=p9.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/p9.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

TASKS=10000
ROUNDS=5
REQUESTS=2000
WRK_SECONDS=5
CLIENTS=200
DOWNLOADS=16
WS_ROUNDS=3
FILE_SIZE=4M
RATE=2m
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) TASKS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --requests) REQUESTS=$2; shift 2 ;;
        --wrk-seconds) WRK_SECONDS=$2; shift 2 ;;
        --clients) CLIENTS=$2; shift 2 ;;
        --downloads) DOWNLOADS=$2; shift 2 ;;
        --ws-rounds) WS_ROUNDS=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
for number in "$TASKS" "$ROUNDS" "$REQUESTS" "$WRK_SECONDS" "$CLIENTS" "$DOWNLOADS" "$WS_ROUNDS"; do
    [[ $number =~ ^[0-9]+$ && $number -ge 1 ]] || die "every count must be a positive integer, not $number"
done

ensure_packages nginx-light curl aria2 wrk python3 openssl
WORK=$REPO/Benchmarks/.work/p9
CLIENT=$REPO/Benchmarks/P9/p9client.py
rm -rf "$WORK/run"
mkdir -p "$WORK/www/dl" "$WORK/logs" "$WORK/run"
if [[ $BUILD -eq 1 ]]; then
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench && swift build -c release --static-swift-stdlib --product peregrined --scratch-path .build-bench) >"$WORK/logs/build.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build.log" >&2; die "building peregrine failed"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}
[[ -x $PEREGRINE ]] || die "missing $PEREGRINE (run without --no-build)"

bytes=$(numfmt --from=iec "$FILE_SIZE")
for i in $(seq 1 "$DOWNLOADS"); do
    file=$WORK/www/dl/$i.bin
    [[ -f $file && $(stat -c %s "$file") -eq $bytes ]] && continue
    head -c "$bytes" /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv "$(printf '%032x' "$i")" >"$file"
done

SECRET=p9-$RANDOM$RANDOM
PEREGRINE_PID= ARIA2_PID=
cleanup() {
    local rc=$? pid
    for pid in $PEREGRINE_PID $ARIA2_PID; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    stop_nginx
    [[ -n ${NGINX_DIR:-} ]] && rm -rf "$NGINX_DIR"
    rm -rf "$WORK/run"
    exit "$rc"
}
trap cleanup EXIT
NGINX_LOCATION_EXTRA="limit_rate $RATE;" start_nginx "$WORK/www" dl/1.bin
BASE=http://127.0.0.1:$NGINX_PORT

wait_for_rpc() {  # wait_for_rpc NAME PID URL
    local i
    for i in $(seq 1 200); do
        kill -0 "$2" 2>/dev/null || die "$1 exited (log: $WORK/logs/$1.log)"
        curl -fsS -o /dev/null -H 'Content-Type: application/json' \
            -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"aria2.getVersion\",\"params\":[\"token:$SECRET\"]}" \
            "$3" 2>/dev/null && return 0
        sleep 0.1
    done
    die "$1 does not answer on $3"
}

declare -A URL PID
port=$(free_port)
mkdir -p "$WORK/run/peregrine/dir" "$WORK/run/peregrine/state"
"$PEREGRINE" daemon --dir "$WORK/run/peregrine/dir" --state "$WORK/run/peregrine/state" \
    --rpc-listen-port "$port" --rpc-secret "$SECRET" --max-concurrent-downloads "$DOWNLOADS" \
    >"$WORK/logs/peregrine.log" 2>&1 &
PEREGRINE_PID=$!
URL[peregrine]=http://127.0.0.1:$port/jsonrpc PID[peregrine]=$PEREGRINE_PID
wait_for_rpc peregrine "$PEREGRINE_PID" "${URL[peregrine]}"

port=$(free_port)
mkdir -p "$WORK/run/aria2c/dir"
aria2c --enable-rpc --rpc-listen-port="$port" --rpc-secret="$SECRET" --dir="$WORK/run/aria2c/dir" \
    --max-concurrent-downloads="$DOWNLOADS" --file-allocation=none --allow-overwrite=true \
    --auto-file-renaming=false --console-log-level=warn --summary-interval=0 --no-conf \
    >"$WORK/logs/aria2c.log" 2>&1 &
ARIA2_PID=$!
URL[aria2c]=http://127.0.0.1:$port/jsonrpc PID[aria2c]=$ARIA2_PID
wait_for_rpc aria2c "$ARIA2_PID" "${URL[aria2c]}"
note "peregrine $("$PEREGRINE" --version 2>/dev/null || echo '?') and $(aria2c --version | head -1) running"

contenders=(peregrine aria2c)
declare -A FILL RSS_FILLED RSS_SETTLED
for name in "${contenders[@]}"; do
    note "$name: adding $TASKS paused downloads"
    FILL[$name]=$(python3 "$CLIENT" populate "${URL[$name]}" "$SECRET" "$TASKS" "$BASE/t-$name") \
        || die "$name: adding the downloads failed"
    RSS_FILLED[$name]=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$name]}/status")
    # And once the service had two seconds to give back what the burst freed.
    sleep 2
    RSS_SETTLED[$name]=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$name]}/status")
    note "$name: $TASKS added in ${FILL[$name]} s, VmRSS ${RSS_FILLED[$name]} MiB at once, ${RSS_SETTLED[$name]} MiB 2 s later"
done

LUA=$WORK/run/getglobalstat.lua
cat >"$LUA" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"aria2.getGlobalStat","params":["token:$SECRET"]}'
LUA

failed=0
declare -A active_p99 active_p50 waiting_p99 waiting_p50 throughput
for round in $(seq 1 "$ROUNDS"); do
    for i in 0 1; do
        name=${contenders[$(((i + round) % 2))]}
        url=${URL[$name]}
        if read -r p50 p99 < <(python3 "$CLIENT" latency "$url" "$SECRET" tellActive "$REQUESTS" 200); then
            active_p50[$name]="${active_p50[$name]:-} $p50" active_p99[$name]="${active_p99[$name]:-} $p99"
        else failed=1; note "round $round: $name tellActive FAILED"; fi
        if read -r p50w p99w < <(python3 "$CLIENT" latency "$url" "$SECRET" tellWaiting "$REQUESTS" 200); then
            waiting_p50[$name]="${waiting_p50[$name]:-} $p50w" waiting_p99[$name]="${waiting_p99[$name]:-} $p99w"
        else failed=1; note "round $round: $name tellWaiting FAILED"; fi
        out=$WORK/logs/wrk-$name-$round.log
        if wrk -t2 -c50 -d"${WRK_SECONDS}s" -s "$LUA" "$url" >"$out" 2>&1 \
            && ! grep -qE "Non-2xx|Socket errors" "$out"; then
            rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
            throughput[$name]="${throughput[$name]:-} $rps"
        else
            failed=1; rps=FAILED; note "round $round: $name wrk FAILED (log: $out)"
        fi
        note "round $round: $name tellActive p99 ${p99:-?} ms, tellWaiting p99 ${p99w:-?} ms, getGlobalStat $rps req/s"
    done
done

declare -A RSS ANON HWM_LOAD HWM
for name in "${contenders[@]}"; do
    RSS[$name]=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$name]}/status")
    ANON[$name]=$(awk '/^RssAnon/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$name]}/status")
    HWM_LOAD[$name]=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$name]}/status")
done

declare -A ws_line ws_start_p99 ws_fanout_p99 ws_delivered
for round in $(seq 1 "$WS_ROUNDS"); do
    for i in 0 1; do
        name=${contenders[$(((i + round) % 2))]}
        uris=()
        for d in $(seq 1 "$DOWNLOADS"); do uris+=("$BASE/dl/$d.bin?$name-$round"); done
        if line=$(python3 "$CLIENT" notify "${URL[$name]}" "$SECRET" "$CLIENTS" "${uris[@]}" 2>"$WORK/logs/ws-$name-$round.log"); then
            :
        else
            failed=1; note "round $round: $name notifications FAILED (log: $WORK/logs/ws-$name-$round.log)"
        fi
        note "round $round: $name: ${line:-no result}"
        ws_line[$name]="${ws_line[$name]:-}${line:-none}"$'\n'
        ws_start_p99[$name]="${ws_start_p99[$name]:-} $(grep -oE 'start_p99_ms=[0-9.]+' <<<"$line" | cut -d= -f2)"
        ws_fanout_p99[$name]="${ws_fanout_p99[$name]:-} $(grep -oE 'fanout_p99_ms=[0-9.]+' <<<"$line" | cut -d= -f2)"
        ws_delivered[$name]="${ws_delivered[$name]:-} $(grep -oE 'delivered=[0-9]+ expected=[0-9]+' <<<"$line" | tr ' ' '/' | sed 's/delivered=//; s/expected=//')"
    done
done
for name in "${contenders[@]}"; do
    HWM[$name]=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/${PID[$name]}/status")
done

# ratio_better_high A B: A / B; ratio_better_low A B: B / A (≥ 1 means Peregrine is better).
echo
echo "P9: $TASKS paused tasks in each service, $ROUNDS rounds (medians); latency over $REQUESTS calls per round"
echo "Command: $COMMAND"
echo "Adding $TASKS downloads (system.multicall of 500 addUri): peregrine ${FILL[peregrine]} s, aria2c ${FILL[aria2c]} s"
echo
echo "| figure | peregrine daemon | aria2c --enable-rpc | peregrine vs aria2c (≥ 1: better) |"
echo "|---|---|---|---|"
row() {  # row LABEL VALUES_P VALUES_A higher|lower UNIT
    local p a r
    p=$(median "$2") a=$(median "$3")
    if [[ $4 == higher ]]; then r=$(ratio "$p" "$a"); else r=$(ratio "$a" "$p"); fi
    echo "| $1 | ${p:-failed} $5 | ${a:-failed} $5 | $r |"
}
row "tellActive p50" "${active_p50[peregrine]:-}" "${active_p50[aria2c]:-}" lower ms
row "tellActive p99" "${active_p99[peregrine]:-}" "${active_p99[aria2c]:-}" lower ms
row "tellWaiting(0,100) p50" "${waiting_p50[peregrine]:-}" "${waiting_p50[aria2c]:-}" lower ms
row "tellWaiting(0,100) p99" "${waiting_p99[peregrine]:-}" "${waiting_p99[aria2c]:-}" lower ms
row "getGlobalStat, wrk -t2 -c50" "${throughput[peregrine]:-}" "${throughput[aria2c]:-}" higher req/s
echo "| VmRSS with $TASKS tasks, right after adding | ${RSS_FILLED[peregrine]} MiB | ${RSS_FILLED[aria2c]} MiB | $(ratio "${RSS_FILLED[aria2c]}" "${RSS_FILLED[peregrine]}") |"
echo "| VmRSS with $TASKS tasks, 2 s after adding | ${RSS_SETTLED[peregrine]} MiB | ${RSS_SETTLED[aria2c]} MiB | $(ratio "${RSS_SETTLED[aria2c]}" "${RSS_SETTLED[peregrine]}") |"
echo "| VmRSS with $TASKS tasks, after the RPC load | ${RSS[peregrine]} MiB | ${RSS[aria2c]} MiB | $(ratio "${RSS[aria2c]}" "${RSS[peregrine]}") |"
echo "| RssAnon (the heap, without mapped code), after the RPC load | ${ANON[peregrine]} MiB | ${ANON[aria2c]} MiB | $(ratio "${ANON[aria2c]}" "${ANON[peregrine]}") |"
echo "| VmHWM (peak) after adding and the RPC load | ${HWM_LOAD[peregrine]} MiB | ${HWM_LOAD[aria2c]} MiB | $(ratio "${HWM_LOAD[aria2c]}" "${HWM_LOAD[peregrine]}") |"
echo "| VmHWM (peak), end of run (after the downloads) | ${HWM[peregrine]} MiB | ${HWM[aria2c]} MiB | $(ratio "${HWM[aria2c]}" "${HWM[peregrine]}") |"
row "$CLIENTS WebSocket listeners, $DOWNLOADS downloads: addUri → onDownloadStart p99" \
    "${ws_start_p99[peregrine]:-}" "${ws_start_p99[aria2c]:-}" lower ms
row "  same: fan-out spread p99" "${ws_fanout_p99[peregrine]:-}" "${ws_fanout_p99[aria2c]:-}" lower ms
echo "| notifications delivered / expected, per round | ${ws_delivered[peregrine]:-} | ${ws_delivered[aria2c]:-} | |"
echo
echo "WebSocket rounds (raw):"
for name in "${contenders[@]}"; do printf '%s' "${ws_line[$name]:-}" | sed "s/^/  $name: /"; done
exit "$failed"

#!/usr/bin/env bash
# Limit accuracy (issue 15 item 4): how close the average rate over every 10-second window of a
# long download comes to the speed limit, with 1 transfer and with 16 transfers under one overall
# limit (`peregrine get -j N --max-overall-limit RATE`), and curl `--limit-rate RATE` as the peer for
# the single transfer.
#
# Starts its own nginx on 127.0.0.1 (no server-side limit), generates the files once, runs each
# case, checks every output's SHA-256, and prints a Markdown table: per case the number of
# windows (one a second, from 2 s after the first byte until the first download finishes), the
# mean, lowest and highest window average, and the worst deviation from the limit. Rates come
# from peregrine's --json progress events and curl's output file size (Benchmarks/limits_windows.py).
#
# Usage: bash Benchmarks/limits.sh [--rate 8M] [--seconds 30] [--no-build]
#   --rate RATE      the limit (curl's syntax: 8M = 8 MiB/s).
#   --seconds S      how long each case runs at the limit (the files' total size is RATE × S).
# Exit status: 0 when every run succeeded and matched the served bytes, 1 otherwise.
# Work files go to Benchmarks/.work/limits/.
set -euo pipefail
SCRIPT_NAME=limits.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/limits.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

RATE=8M
SECONDS_PER_CASE=30
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rate) RATE=$2; shift 2 ;;
        --seconds) SECONDS_PER_CASE=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $RATE =~ ^[0-9]+[KMkm]?$ ]] || die "--rate takes bytes per second with K or M: 8M, 512K"
[[ $SECONDS_PER_CASE =~ ^[0-9]+$ && $SECONDS_PER_CASE -ge 15 ]] || die "--seconds must be at least 15"
rate_bytes=$(numfmt --from=iec "${RATE^^}")
total=$((rate_bytes * SECONDS_PER_CASE))

ensure_packages nginx-light curl openssl python3
WORK=$REPO/Benchmarks/.work/limits
mkdir -p "$WORK/www" "$WORK/logs"
if [[ $BUILD -eq 1 ]]; then
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench) >"$WORK/logs/build.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build.log" >&2; die "building peregrine failed"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}
[[ -x $PEREGRINE ]] || die "missing $PEREGRINE (run without --no-build, or set PEREGRINE_BIN)"

make_file() {  # make_file NAME BYTES SEED
    local path=$WORK/www/$1
    [[ -f $path && $(stat -c %s "$path") -eq $2 ]] && return 0
    head -c "$2" /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv "$(printf '%032x' "$3")" >"$path"
}
note "generating $((total >> 20)) MiB for one transfer and 16 × $((total / 16 >> 20)) MiB"
make_file one.bin "$total" 1
for i in $(seq 1 16); do make_file "part$i.bin" $((total / 16)) $((i + 1)); done

cleanup() { local rc=$?; stop_nginx; [[ -n ${NGINX_DIR:-} ]] && rm -rf "$NGINX_DIR"; rm -rf "$WORK/out"; exit "$rc"; }
trap cleanup EXIT
start_nginx "$WORK/www" one.bin
BASE="http://127.0.0.1:$NGINX_PORT"

failed=0
declare -A results
check() {  # check OUTPUT_FILE SERVED_FILE
    [[ $(sha256sum "$1" | cut -d' ' -f1) == $(sha256sum "$2" | cut -d' ' -f1) ]] || { note "$1: wrong bytes"; failed=1; }
}
run_case() {  # run_case NAME COMMAND...
    local name=$1; shift
    rm -rf "$WORK/out"; mkdir -p "$WORK/out/d" "$WORK/out/s"
    note "$name"
    if results[$name]=$("$@" 2>"$WORK/logs/$name.log"); then
        note "$name: ${results[$name]}"
    else
        failed=1; results[$name]=""; note "$name FAILED (log: $WORK/logs/$name.log)"
    fi
}
MEASURE=(python3 "$REPO/Benchmarks/limits_windows.py")

run_case curl-1 "${MEASURE[@]}" curl "$WORK/out/d/one.bin" "$RATE" "$BASE/one.bin"
check "$WORK/out/d/one.bin" "$WORK/www/one.bin"
run_case peregrine-1 "${MEASURE[@]}" peregrine "$PEREGRINE" "$WORK/out/d" "$WORK/out/s" "$RATE" "$BASE/one.bin"
check "$WORK/out/d/one.bin" "$WORK/www/one.bin"
urls=(); for i in $(seq 1 16); do urls+=("$BASE/part$i.bin"); done
run_case peregrine-16 "${MEASURE[@]}" peregrine "$PEREGRINE" "$WORK/out/d" "$WORK/out/s" "$RATE" "${urls[@]}"
for i in $(seq 1 16); do check "$WORK/out/d/part$i.bin" "$WORK/www/part$i.bin"; done

field() { sed -n "s/.*$2=\([^ ]*\).*/\1/p" <<<"$1"; }
mibs() { awk -v b="$1" 'BEGIN { if (b != "") printf "%.2f", b / 1048576; else print "n/a" }'; }
echo
echo "Limit accuracy: limit $RATE ($(mibs "$rate_bytes") MiB/s), $SECONDS_PER_CASE s per case, 10-second windows"
echo "Command: $COMMAND"
echo
echo "| case | windows | mean MiB/s | lowest | highest | worst deviation |"
echo "|---|---|---|---|---|---|"
for name in curl-1 peregrine-1 peregrine-16; do
    r=${results[$name]:-}
    case $name in
        curl-1) label="curl --limit-rate $RATE, 1 transfer" ;;
        peregrine-1) label="peregrine get --max-overall-limit $RATE, 1 transfer" ;;
        peregrine-16) label="peregrine get --max-overall-limit $RATE, 16 transfers" ;;
    esac
    echo "| $label | $(field "$r" windows) | $(mibs "$(field "$r" mean)") | $(mibs "$(field "$r" min)") | $(mibs "$(field "$r" max)") | $(field "$r" worst) |"
done
exit "$failed"

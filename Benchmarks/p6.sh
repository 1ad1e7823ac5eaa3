#!/usr/bin/env bash
# P6: one file over several connections from a server that limits each connection (see shared
# BENCHMARKS.md): nginx with `limit_rate R` per connection, `peregrine get --split N` beside
# `aria2c -xN -sN -k1M` in the same run.
#
# Starts its own nginx on 127.0.0.1 (limit_rate R per connection, sendfile_max_chunk 64k so the
# limit is smooth), generates the file once, then runs each contender ROUNDS times (order
# rotating), checks every output's SHA-256 (outside the timing) and prints a Markdown table of
# median MiB/s, the multiple of R, and Peregrine's ratio to aria2c with the same N.
#
# Usage: bash Benchmarks/p6.sh [--size 256M] [--rate 8m] [--rounds 3] [--splits "8 16 32"] [--mirrors M] [--no-build]
#   --rate RATE    nginx's limit_rate per connection (nginx syntax: 8m = 8 MiB/s).
#   --splits LIST  the connection counts; aria2c runs those up to 16 (its maximum).
#   --mirrors M    serve the file under M URLs (/m1/file.bin…, the same server): peregrine gets the
#                  first with --mirror for the others, aria2c all of them as one download's URIs.
# Exit status: 0 when every run succeeded and matched the served bytes, 1 otherwise.
# Work files go to Benchmarks/.work/p6/.
set -euo pipefail
SCRIPT_NAME=p6.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/p6.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

SIZE=256M
RATE=8m
ROUNDS=3
SPLITS="8 16 32"
MIRRORS=1
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) SIZE=$2; shift 2 ;;
        --rate) RATE=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --splits) SPLITS=$2; shift 2 ;;
        --mirrors) MIRRORS=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "--rounds must be a positive integer"
[[ $MIRRORS =~ ^[0-9]+$ && $MIRRORS -ge 1 ]] || die "--mirrors must be a positive integer"
[[ $RATE =~ ^[0-9]+[km]?$ ]] || die "--rate takes nginx's syntax: 8m, 512k or bytes"
bytes=$(numfmt --from=iec "$SIZE") || die "--size takes bytes or K/M/G"
rate_bytes=$(numfmt --from=iec "${RATE^^}")

ensure_packages nginx-light curl aria2 openssl
WORK=$REPO/Benchmarks/.work/p6
mkdir -p "$WORK/www" "$WORK/logs"
if [[ $BUILD -eq 1 ]]; then
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench) >"$WORK/logs/build.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build.log" >&2; die "building peregrine failed"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}
[[ -x $PEREGRINE ]] || die "missing $PEREGRINE (run without --no-build)"

if [[ ! -f $WORK/www/file.bin || $(stat -c %s "$WORK/www/file.bin") -ne $bytes ]]; then
    note "generating $SIZE of random bytes"
    head -c "$bytes" /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000006 \
            >"$WORK/www/file.bin"
fi
EXPECTED=$(sha256sum "$WORK/www/file.bin" | cut -d' ' -f1)

cleanup() { local rc=$?; stop_nginx; [[ -n ${NGINX_DIR:-} ]] && rm -rf "$NGINX_DIR"; rm -rf "$WORK/out"; exit "$rc"; }
trap cleanup EXIT
NGINX_HTTP_EXTRA="sendfile_max_chunk 64k;" NGINX_LOCATION_EXTRA="limit_rate $RATE;" start_nginx "$WORK/www" file.bin
URL="http://127.0.0.1:$NGINX_PORT/file.bin"
URLS=("$URL")
MIRROR_FLAGS=()
if ((MIRRORS > 1)); then
    URLS=()
    for m in $(seq 1 "$MIRRORS"); do
        mkdir -p "$WORK/www/m$m"
        ln -sf ../file.bin "$WORK/www/m$m/file.bin"
        URLS+=("http://127.0.0.1:$NGINX_PORT/m$m/file.bin")
        ((m > 1)) && MIRROR_FLAGS+=(--mirror "http://127.0.0.1:$NGINX_PORT/m$m/file.bin")
    done
    URL=${URLS[0]}
fi

contenders=()
for n in $SPLITS; do
    contenders+=("peregrine:$n")
    ((n <= 16)) && contenders+=("aria2c:$n")
done

failed=0
declare -A times
run_one() {  # run_one NAME N -> seconds on stdout, or nothing on failure
    local name=$1 n=$2 out=$WORK/out start end
    rm -rf "$out"; mkdir -p "$out/d" "$out/s"
    start=$(date +%s.%N)
    case $name in
        peregrine)
            "$PEREGRINE" get -q -d "$out/d" --state-dir "$out/s" --split "$n" --min-split-size 1M "$URL" "${MIRROR_FLAGS[@]}" \
                >"$WORK/logs/$name-$n.log" 2>&1 || return 1 ;;
        aria2c)
            aria2c -q -x"$n" -s"$n" -k1M --file-allocation=none --allow-overwrite=true -d "$out/d" -o file.bin "${URLS[@]}" \
                >"$WORK/logs/$name-$n.log" 2>&1 || return 1 ;;
    esac
    end=$(date +%s.%N)
    [[ $(sha256sum "$out/d/file.bin" | cut -d' ' -f1) == "$EXPECTED" ]] || { note "$name -s$n: wrong bytes"; return 1; }
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

for round in $(seq 1 "$ROUNDS"); do
    count=${#contenders[@]}
    for i in $(seq 0 $((count - 1))); do
        entry=${contenders[$(((i + round) % count))]}
        name=${entry%%:*} n=${entry##*:}
        if seconds=$(run_one "$name" "$n"); then
            times[$entry]="${times[$entry]:-} $seconds"
            note "round $round: $name N=$n: ${seconds} s"
        else
            failed=1
            note "round $round: $name N=$n FAILED (log: $WORK/logs/$name-$n.log)"
        fi
    done
done

mib=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }')
echo
((MIRRORS > 1)) && echo "(the file under $MIRRORS URLs: peregrine --mirror, aria2c several URIs)"
echo "P6: $mib MiB, nginx limit_rate $RATE per connection (R = $(awk -v r="$rate_bytes" 'BEGIN { printf "%.1f", r / 1048576 }') MiB/s), $ROUNDS rounds, medians"
echo "Command: $COMMAND"
echo
echo "| N | peregrine --split N | × R | aria2c -xN -sN -k1M | × R | peregrine / aria2c |"
echo "|---|---|---|---|---|---|"
for n in $SPLITS; do
    p=$(median "${times[peregrine:$n]:-}")
    a=$(median "${times[aria2c:$n]:-}")
    prate=$(awk -v b="$bytes" -v t="$p" 'BEGIN { if (t > 0) printf "%.1f", b / 1048576 / t; else print "" }')
    arate=$(awk -v b="$bytes" -v t="$a" 'BEGIN { if (t > 0) printf "%.1f", b / 1048576 / t; else print "" }')
    pr=$(awk -v x="$prate" -v r="$rate_bytes" 'BEGIN { if (x != "") printf "%.2f", x * 1048576 / r; else print "n/a" }')
    ar=$(awk -v x="$arate" -v r="$rate_bytes" 'BEGIN { if (x != "") printf "%.2f", x * 1048576 / r; else print "n/a" }')
    echo "| $n | ${prate:-failed} MiB/s | $pr | ${arate:-n/a (aria2c stops at 16)} ${arate:+MiB/s} | $ar | $(ratio "$prate" "$arate") |"
done
exit "$failed"

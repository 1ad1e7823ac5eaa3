#!/usr/bin/env bash
# P2: 2000 files of 16 KiB from a local nginx, 16 at a time (see shared BENCHMARKS.md).
#
# Contenders, each run under `/usr/bin/time -f '%e %M'` after one warm-up run, the order rotated
# every round:
#   peregrine        Benchmarks/EngineBenchmark's `p2-download`: the DownloadManager facade on
#                    libcurl with its JSON store (every state change journaled) and an event
#                    consumer on — what an application gets (the target applies to this row)
#   peregrine-get    `peregrine get --parallel 16`: the command line on the same facade, engine
#                    and store (a fresh state directory every run), with its progress and
#                    result output
#   curl             curl --parallel --parallel-max 16 --remote-name-all (one process)
#   ahc-download     async-http-client, 16 requests at a time (Benchmarks/Peers)
# Targets: peregrine ≤ 0.8 × async-http-client and ≤ 0.7 × curl --parallel (median wall).
#
# It starts its own nginx on 127.0.0.1 (sendfile on, access_log off, keep-alive for every
# request), generates the files once (AES-128-CTR keystream), checks after every run (outside the
# timing) that all 2000 files arrived with the served bytes, and prints a Markdown table.
#
# Usage: bash Benchmarks/p2.sh [--files 2000] [--size 16384] [--parallel 16] [--rounds 5]
#                              [--directory DIR] [--no-build] [--timeout SECONDS]
#   --directory DIR  where the downloaded files go (default Benchmarks/.work/p2/out, the
#                    repository's disk). /dev/shm/p2 (tmpfs) takes the file system out of the
#                    comparison: ext4 creating and deleting thousands of files dominates curl's
#                    time here. Peregrine's store stays on the repository's disk either way.
# Exit status: 0 when every run succeeded, 1 otherwise (the table is printed anyway).
# Work files go to Benchmarks/.work/p2/.
set -euo pipefail
SCRIPT_NAME=p2.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/p2.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

FILES=2000
SIZE=16384
PARALLEL=16
ROUNDS=5
BUILD=1
RUN_TIMEOUT=300
OUT=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --files) FILES=${2:?}; shift 2 ;;
        --size) SIZE=${2:?}; shift 2 ;;
        --parallel) PARALLEL=${2:?}; shift 2 ;;
        --rounds) ROUNDS=${2:?}; shift 2 ;;
        --timeout) RUN_TIMEOUT=${2:?}; shift 2 ;;
        --directory) OUT=${2:?}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
for v in FILES SIZE PARALLEL ROUNDS RUN_TIMEOUT; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -ge 1 ]] || die "--${v,,} must be a positive integer, got '${!v}'"
done

ensure_packages nginx-light curl time openssl
ensure_swift

WORK=$REPO/Benchmarks/.work/p2
mkdir -p "$WORK/www" "$WORK/out" "$WORK/logs"
OUT=${OUT:-$WORK/out/run}
BENCH_DIR=$REPO/Benchmarks/EngineBenchmark
PEERS_DIR=$REPO/Benchmarks/Peers
if [[ $BUILD -eq 1 ]]; then
    note "building p2-download (Benchmarks/EngineBenchmark, release)"
    forget_build_plan "$BENCH_DIR"
    (cd "$BENCH_DIR" && swift build -c release --product p2-download) >"$WORK/logs/build-p2.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build-p2.log" >&2; die "building p2-download failed"; }
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench) \
        >"$WORK/logs/build-peregrine.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build-peregrine.log" >&2; die "building peregrine failed"; }
    note "building ahc-download (Benchmarks/Peers, release)"
    (cd "$PEERS_DIR" && swift build -c release --product ahc-download) >"$WORK/logs/build-peers.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build-peers.log" >&2; die "building the peers failed"; }
fi
P2BIN=$BENCH_DIR/.build/release/p2-download
PEREGRINE=$REPO/.build-bench/release/peregrine
AHC=$PEERS_DIR/.build/release/ahc-download
for b in "$P2BIN" "$PEREGRINE" "$AHC"; do [[ -x $b ]] || die "missing binary $b (run without --no-build)"; done

# ---------------------------------------------------------------- the served files
SET=$WORK/www/set-$FILES-$SIZE
if [[ ! -f $SET/.complete ]]; then
    note "generating $FILES files of $SIZE bytes"
    rm -rf "$SET"; mkdir -p "$SET"
    head -c $((FILES * SIZE)) /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
        | (cd "$SET" && split -b "$SIZE" -a 5 -d --additional-suffix=.bin - f)
    [[ $(find "$SET" -name 'f*.bin' | wc -l) -eq $FILES ]] || die "generated the wrong number of files"
    touch "$SET/.complete"
fi
EXPECTED=$(cd "$SET" && cat f*.bin | sha256sum | cut -d' ' -f1)
NAMES=()
while IFS= read -r name; do NAMES+=("$name"); done < <(cd "$SET" && ls f*.bin)

cleanup() {
    local rc=$?
    stop_nginx
    [[ -n $NGINX_DIR ]] && rm -rf "$NGINX_DIR"
    rm -rf "$OUT"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_nginx "$SET" "${NAMES[0]}"
URLS=()
for name in "${NAMES[@]}"; do URLS+=("http://127.0.0.1:$NGINX_PORT/$name"); done

# ---------------------------------------------------------------- contenders
CONTENDERS=(peregrine peregrine-get curl ahc-download)
contender_cmd() {
    local dir=$2
    case "$1" in
        peregrine) CMD=("$P2BIN" --parallel "$PARALLEL" --state "$WORK/out/state" "$dir" "${URLS[@]}") ;;
        peregrine-get) CMD=("$PEREGRINE" get --quiet --parallel "$PARALLEL" -d "$dir" --state-dir "$WORK/out/state" "${URLS[@]}") ;;
        curl) CMD=(curl -sS --fail --parallel --parallel-max "$PARALLEL" --output-dir "$dir" --remote-name-all "${URLS[@]}") ;;
        ahc-download) CMD=("$AHC" --parallel "$PARALLEL" "$dir" "${URLS[@]}") ;;
        *) die "unknown contender $1" ;;
    esac
}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW=$WORK/raw-$STAMP.tsv
printf 'round\tcontender\tstatus\twall_s\tmaxrss_kib\n' >"$RAW"
declare -A OK_COUNT FAIL_COUNT WALLS RSSES LAST_ERROR
for c in "${CONTENDERS[@]}"; do OK_COUNT[$c]=0; FAIL_COUNT[$c]=0; WALLS[$c]=""; RSSES[$c]=""; LAST_ERROR[$c]=""; done

run() {
    local round=$1 c=$2 dir="$OUT" log tf status rc=0 wall="" rss="" got
    rm -rf "$dir" "$WORK/out/state"; mkdir -p "$dir"
    sync
    log=$WORK/logs/$STAMP-$round-$c.log
    tf=$WORK/logs/$STAMP-$round-$c.time
    contender_cmd "$c" "$dir"
    /usr/bin/time -f '%e %M' -o "$tf" timeout "$RUN_TIMEOUT" "${CMD[@]}" >"$log" 2>&1 </dev/null || rc=$?
    read -r wall rss < <(tail -n 1 "$tf") || true
    if [[ $rc -ne 0 ]]; then
        status="exit $rc"; [[ $rc -eq 124 ]] && status="timeout ${RUN_TIMEOUT}s"
    elif [[ $(find "$dir" -maxdepth 1 -name 'f*.bin' | wc -l) -ne $FILES ]]; then
        status="$(find "$dir" -maxdepth 1 -name 'f*.bin' | wc -l) of $FILES files"
    else
        got=$(cd "$dir" && cat f*.bin | sha256sum | cut -d' ' -f1)
        if [[ $got == "$EXPECTED" ]]; then status=ok; else status="content differs"; fi
    fi
    rm -rf "$dir"
    if [[ $status == ok ]]; then
        printf '  %-8s %-14s %6ss %8s KiB\n' "$round" "$c" "$wall" "$rss" >&2
    else
        printf '  %-8s %-14s FAILED (%s) %s\n' "$round" "$c" "$status" "$(tail -n 3 "$log" | tr '\n' ' ')" >&2
    fi
    [[ $round == warmup ]] && return 0
    printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$c" "$status" "$wall" "$rss" >>"$RAW"
    if [[ $status == ok ]]; then
        OK_COUNT[$c]=$((${OK_COUNT[$c]} + 1)); WALLS[$c]+="$wall "; RSSES[$c]+="$rss "
    else
        FAIL_COUNT[$c]=$((${FAIL_COUNT[$c]} + 1)); LAST_ERROR[$c]=$status
    fi
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
note "warm-up: one run of each contender"
for c in "${CONTENDERS[@]}"; do run warmup "$c"; done
n=${#CONTENDERS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
    note "round $r/$ROUNDS"
    for ((k = 0; k < n; k++)); do run "$r" "${CONTENDERS[$(((r - 1 + k) % n))]}"; done
done

# ---------------------------------------------------------------- report
REVISION=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "unknown revision")
[[ -n $(git -C "$REPO" status --porcelain -- Modules Package.swift 2>/dev/null) ]] && REVISION+=" + uncommitted changes"
pw=$(median "${WALLS[peregrine]}")
{
    echo "### P2: $FILES files of $SIZE bytes from nginx, $PARALLEL at a time"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(uname -srm), nproc $(nproc); load average $LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after"
    echo "- command: \`$COMMAND\`"
    echo "- peregrine: $REVISION"
    echo "- files written to $OUT ($(df --output=fstype "$(dirname "$OUT")" 2>/dev/null | tail -n 1 || echo unknown)); Peregrine's store in $WORK/out/state"
    echo "- $ROUNDS rounds after one warm-up run each, order rotated every round; medians of the successful runs"
    echo
    echo "| contender | median wall (s) | files/s | median peak RSS (MiB) | ok runs | peregrine ratio |"
    echo "|---|---:|---:|---:|---:|---:|"
    for c in "${CONTENDERS[@]}"; do
        w=$(median "${WALLS[$c]}")
        if [[ -z $w ]]; then echo "| $c | failed (${LAST_ERROR[$c]}) | | | 0/$ROUNDS | n/a |"; continue; fi
        rss=$(awk -v k="$(median "${RSSES[$c]}")" 'BEGIN { printf "%.1f", k / 1024 }')
        rate=$(awk -v f="$FILES" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", f / w; else print "∞" }')
        if [[ $c == peregrine ]]; then r="1.00 (itself)"; else r=$(ratio "$pw" "$w"); fi
        echo "| $c | $(awk -v w="$w" 'BEGIN { printf "%.2f", w }') | $rate | $rss | ${OK_COUNT[$c]}/$ROUNDS | $r |"
    done
    echo
    echo "Ratio = peregrine's median wall / the row's. Targets: ≤ 0.8 × ahc-download, ≤ 0.7 × curl."
} | tee "$WORK/table-$STAMP.md"
note "raw timings: $RAW"
for c in "${CONTENDERS[@]}"; do [[ ${FAIL_COUNT[$c]} -eq 0 ]] || exit 1; done

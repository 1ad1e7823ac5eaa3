#!/usr/bin/env bash
# P1: one 1 GiB file -> disk over loopback (see shared BENCHMARKS.md).
#
# Starts its own nginx on 127.0.0.1 (sendfile on, access_log off), generates the file once,
# then runs a warm-up and N rounds of every contender (the order rotates each round), each
# under `/usr/bin/time -f '%e %M'`, checks every output has exactly the expected size and
# bytes (cmp, outside the timed part), and
# prints a Markdown table of medians with Peregrine's wall-time ratio to each peer.
#
# Usage: bash Benchmarks/p1.sh [--size 1G] [--rounds 5] [--with-slow-peers] [--no-build]
#                              [--timeout SECONDS]
#   --size SIZE         file size: bytes, or with K/M/G (binary: 256M = 256 MiB). Default 1G.
#   --rounds N          timed rounds after the warm-up (at least 1; 5 or more for real figures).
#   --with-slow-peers   also run wget and aria2c.
#   --no-build          reuse the binaries built before (peregrine in .build-bench, peers in
#                       Benchmarks/Peers/.build).
#   --timeout SECONDS   kill a single run after this long and count it as failed (default 600).
# Environment: PEREGRINE_BIN=/path/to/peregrine measures that binary instead of .build-bench's.
#
# Exit status: 0 when every run succeeded, 1 when any run failed (the table is printed anyway).
# Work files (the served file, outputs, raw timings, logs) go to Benchmarks/.work/p1/, on the
# same disk as the repository; each output is deleted after its run.
set -euo pipefail

SCRIPT_NAME=p1.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/p1.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

SIZE_ARG=1G
ROUNDS=5
SLOW=0
BUILD=1
RUN_TIMEOUT=600

while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) [[ $# -ge 2 ]] || die "--size needs a value (e.g. 256M)"; SIZE_ARG=$2; shift 2 ;;
        --size=*) SIZE_ARG=${1#*=}; shift ;;
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --rounds=*) ROUNDS=${1#*=}; shift ;;
        --timeout) [[ $# -ge 2 ]] || die "--timeout needs a value"; RUN_TIMEOUT=$2; shift 2 ;;
        --timeout=*) RUN_TIMEOUT=${1#*=}; shift ;;
        --with-slow-peers) SLOW=1; shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done

[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "--rounds must be a positive integer, got '$ROUNDS'"
[[ $RUN_TIMEOUT =~ ^[0-9]+$ && $RUN_TIMEOUT -ge 1 ]] || die "--timeout must be a positive integer, got '$RUN_TIMEOUT'"

parse_size() {
    local s=${1^^}
    s=${s%IB}; s=${s%B}
    if [[ $s =~ ^([0-9]+)([KMG]?)$ ]]; then
        local n=${BASH_REMATCH[1]}
        case "${BASH_REMATCH[2]}" in
            K) echo $((n * 1024)) ;;
            M) echo $((n * 1024 * 1024)) ;;
            G) echo $((n * 1024 * 1024 * 1024)) ;;
            *) echo "$n" ;;
        esac
    else
        return 1
    fi
}
SIZE=$(parse_size "$SIZE_ARG") || die "--size: cannot read '$SIZE_ARG' (use e.g. 1G, 256M, 1048576)"
[[ $SIZE -ge 1 ]] || die "--size must be at least 1 byte"
SIZE_LABEL=${SIZE_ARG^^}; SIZE_LABEL=${SIZE_LABEL%IB}; SIZE_LABEL=${SIZE_LABEL%B}
if (( SIZE % (1 << 30) == 0 )); then SIZE_HUMAN="$((SIZE >> 30)) GiB"
elif (( SIZE % (1 << 20) == 0 )); then SIZE_HUMAN="$((SIZE >> 20)) MiB"
else SIZE_HUMAN="$SIZE-byte"; fi

# ---------------------------------------------------------------- system packages
ensure_packages nginx-light curl wget aria2 time openssl
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian package 'time')"
for tool in curl openssl timeout; do command -v "$tool" >/dev/null || die "$tool not found"; done

# ---------------------------------------------------------------- builds
ensure_swift

WORK=$REPO/Benchmarks/.work/p1
mkdir -p "$WORK/www" "$WORK/out" "$WORK/logs"
PEERS_DIR=$REPO/Benchmarks/Peers

if [[ $BUILD -eq 1 ]]; then
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench) \
        >"$WORK/logs/build-peregrine.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build-peregrine.log" >&2; die "building peregrine failed (log: $WORK/logs/build-peregrine.log)"; }
    note "building the peers in Benchmarks/Peers (release)"
    (cd "$PEERS_DIR" && swift build -c release) >"$WORK/logs/build-peers.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build-peers.log" >&2; die "building the peers failed (log: $WORK/logs/build-peers.log)"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}   # PEREGRINE_BIN: try another build
PEERS_BIN=$PEERS_DIR/.build/release
AHC=$PEERS_BIN/ahc-download
URLS=$PEERS_BIN/urlsession-download
for b in "$PEREGRINE" "$AHC" "$URLS"; do
    [[ -x $b ]] || die "missing binary $b (run without --no-build)"
done

# ---------------------------------------------------------------- the served file
NAME=p1-$SIZE_LABEL.bin
FILE=$WORK/www/$NAME
if [[ ! -f $FILE || $(stat -c %s "$FILE") -ne $SIZE ]]; then
    note "generating $NAME ($SIZE bytes, AES-128-CTR keystream: incompressible, reproducible)"
    rm -f "$FILE"
    head -c "$SIZE" /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
            -out "$FILE.tmp" || die "generating $FILE failed"
    [[ $(stat -c %s "$FILE.tmp") -eq $SIZE ]] || die "generated file has the wrong size"
    mv "$FILE.tmp" "$FILE"
fi

# ---------------------------------------------------------------- nginx
cleanup() {
    local rc=$?
    stop_nginx
    [[ -n $NGINX_DIR ]] && rm -rf "$NGINX_DIR"
    rm -rf "$WORK/out/run"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_nginx "$WORK/www" "$NAME"
URL=http://127.0.0.1:$NGINX_PORT/$NAME
note "serving $URL"

# ---------------------------------------------------------------- contenders
command -v cmp >/dev/null || die "cmp not found (Debian package diffutils)"
CONTENDERS=(peregrine curl ahc-download urlsession-download)
[[ $SLOW -eq 1 ]] && CONTENDERS+=(wget aria2c)
if [[ $SLOW -eq 1 ]]; then
    command -v wget >/dev/null || die "wget not found"
    command -v aria2c >/dev/null || die "aria2c not found"
fi

# run_one CONTENDER DIR: download $URL so that the file lands at DIR/$NAME
contender_cmd() {
    local dir=$2
    case "$1" in
        # A state directory of its own for every run: each round is a first download, not a rerun.
        peregrine) CMD=("$PEREGRINE" get "$URL" -d "$dir" --state-dir "$WORK/out/state" --quiet) ;;
        curl) CMD=(curl -sS --fail -o "$dir/$NAME" "$URL") ;;
        ahc-download) CMD=("$AHC" "$URL" "$dir/$NAME") ;;
        urlsession-download) CMD=("$URLS" "$URL" "$dir/$NAME") ;;
        wget) CMD=(wget -q -O "$dir/$NAME" "$URL") ;;
        aria2c) CMD=(aria2c -q --allow-overwrite=true --auto-file-renaming=false -d "$dir" -o "$NAME" "$URL") ;;
        *) die "unknown contender $1" ;;
    esac
}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW=$WORK/raw-$STAMP-$SIZE_LABEL.tsv
printf 'round\tcontender\tstatus\twall_s\tmaxrss_kib\n' >"$RAW"
declare -A OK_COUNT FAIL_COUNT WALLS RSSES LAST_ERROR
for c in "${CONTENDERS[@]}"; do OK_COUNT[$c]=0; FAIL_COUNT[$c]=0; WALLS[$c]=""; RSSES[$c]=""; LAST_ERROR[$c]=""; done

# run ROUND CONTENDER: one timed run; records it unless ROUND is "warmup"
run() {
    local round=$1 c=$2 dir="$WORK/out/run" log tf status rc=0 wall rss size
    rm -rf "$dir" "$WORK/out/state"; mkdir -p "$dir"
    sync
    log=$WORK/logs/$STAMP-$round-$c.log
    tf=$WORK/logs/$STAMP-$round-$c.time
    contender_cmd "$c" "$dir"
    /usr/bin/time -f '%e %M' -o "$tf" timeout "$RUN_TIMEOUT" "${CMD[@]}" >"$log" 2>&1 </dev/null || rc=$?
    read -r wall rss < <(tail -n 1 "$tf") || true
    size=$(stat -c %s "$dir/$NAME" 2>/dev/null || echo missing)
    if [[ $rc -ne 0 ]]; then
        status="exit $rc"; [[ $rc -eq 124 ]] && status="timeout ${RUN_TIMEOUT}s"
    elif [[ $size != "$SIZE" ]]; then
        status="size $size != $SIZE"
    elif ! cmp -s "$FILE" "$dir/$NAME"; then   # outside the timed part
        status="content differs from the served file"
    else
        status=ok
    fi
    rm -rf "$dir"
    if [[ $status == ok ]]; then
        printf '  %-8s %-20s %6ss %8s KiB\n' "$round" "$c" "$wall" "$rss" >&2
    else
        local why
        why=$(tail -n 3 "$log" | tr '\n' ' ' || true)
        printf '  %-8s %-20s FAILED (%s) %s\n' "$round" "$c" "$status" "$why" >&2
    fi
    [[ $round == warmup ]] && return 0
    printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$c" "$status" "${wall:-}" "${rss:-}" >>"$RAW"
    if [[ $status == ok ]]; then
        OK_COUNT[$c]=$((${OK_COUNT[$c]} + 1))
        WALLS[$c]+="$wall "
        RSSES[$c]+="$rss "
    else
        FAIL_COUNT[$c]=$((${FAIL_COUNT[$c]} + 1))
        LAST_ERROR[$c]=$status
    fi
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
note "warm-up: one run of each contender"
for c in "${CONTENDERS[@]}"; do run warmup "$c"; done
n=${#CONTENDERS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
    note "round $r/$ROUNDS"
    for ((k = 0; k < n; k++)); do
        run "$r" "${CONTENDERS[$(((r - 1 + k) % n))]}"
    done
done

# ---------------------------------------------------------------- report
declare -A MED_WALL MED_RSS
for c in "${CONTENDERS[@]}"; do
    MED_WALL[$c]=$(median "${WALLS[$c]}")
    MED_RSS[$c]=$(median "${RSSES[$c]}")
done

REVISION=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "unknown revision")
if [[ -n $(git -C "$REPO" status --porcelain -- Modules Examples/peregrine Package.swift 2>/dev/null) ]]; then
    REVISION+=" + uncommitted changes"
fi
REPORT=$WORK/table-$STAMP-$SIZE_LABEL.md
{
    echo "### P1: one $SIZE_HUMAN file ($SIZE bytes) → disk over loopback"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(uname -srm), nproc $(nproc); load average $LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after"
    echo "- command: \`$COMMAND\`"
    echo "- peregrine: $REVISION"
    echo "- server: nginx $("$NGINX" -v 2>&1 | sed 's/^nginx version: nginx\///'), sendfile on, 127.0.0.1; output on the repository's disk ($(df -P "$WORK" | awk 'NR==2{print $1}'))"
    echo "- $ROUNDS rounds after one warm-up run each, order rotated every round; medians of the successful runs"
    echo
    echo "| contender | median wall (s) | MiB/s | median peak RSS (MiB) | ok runs | Peregrine wall ratio |"
    echo "|---|---:|---:|---:|---:|---:|"
    pw=${MED_WALL[peregrine]:-}
    for c in "${CONTENDERS[@]}"; do
        w=${MED_WALL[$c]}
        if [[ -z $w ]]; then
            echo "| $c | failed (${LAST_ERROR[$c]}) | | | 0/$ROUNDS | n/a |"
            continue
        fi
        rss=$(awk -v k="${MED_RSS[$c]}" 'BEGIN { printf "%.1f", k / 1024 }')
        speed=$(awk -v s="$SIZE" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", s / 1048576 / w; else print "∞" }')
        if [[ $c == peregrine ]]; then
            ratio="1.00 (itself)"
        elif [[ -n $pw ]]; then
            ratio=$(awk -v p="$pw" -v q="$w" 'BEGIN { if (q > 0) printf "%.2f", p / q; else print "n/a" }')
        else
            ratio="n/a"
        fi
        w2=$(awk -v w="$w" 'BEGIN { printf "%.2f", w }')
        echo "| $c | $w2 | $speed | $rss | ${OK_COUNT[$c]}/$ROUNDS | $ratio |"
    done
    echo
    echo "Ratio = Peregrine's median wall / the peer's (below 1 means Peregrine is faster)."
    echo "Targets: ≤ 0.9 × async-http-client, ≤ 0.6 × curl CLI, peak RSS ≤ 32 MiB."
    failed=()
    for c in "${CONTENDERS[@]}"; do [[ ${FAIL_COUNT[$c]} -gt 0 ]] && failed+=("$c: ${FAIL_COUNT[$c]} failed (${LAST_ERROR[$c]})"); done
    if [[ ${#failed[@]} -gt 0 ]]; then
        echo
        echo "Failed runs (not timed): ${failed[*]}. Logs: Benchmarks/.work/p1/logs/$STAMP-*."
    fi
} | tee "$REPORT"
note "raw timings: $RAW; table: $REPORT"
for c in "${CONTENDERS[@]}"; do
    [[ ${FAIL_COUNT[$c]} -eq 0 ]] || { note "some runs failed: exit status 1"; exit 1; }
done

#!/usr/bin/env bash
# P3: P1 (one 1 GiB file -> disk over loopback) with SHA-256 verification, and the raw SHA-256
# throughput of PeregrineVerification (see shared BENCHMARKS.md).
#
# Two pairs of contenders, each run A B A B (the order alternates every round) after one warm-up
# run of each, under `/usr/bin/time -f '%e %M'`:
#
#   download   peregrine get URL -d DIR                         (P1, no verification)
#              peregrine get URL -d DIR --checksum sha256=HEX   (hashed while downloading)
#              target: median wall ratio ≤ 1.15
#   hashing    peregrine verify FILE --checksum sha256=HEX       (FileVerifier, hot page cache)
#              openssl dgst -sha256 FILE
#              target: Peregrine's throughput ≥ 0.95 × openssl's (wall ratio openssl/peregrine)
#
# It starts its own nginx on 127.0.0.1 (sendfile on, access_log off), generates the file once
# (AES-128-CTR keystream, as p1.sh does), computes the expected SHA-256 once with openssl
# (outside every timing), checks every download's size and bytes outside the timed part, and
# prints a Markdown table of medians with the date, the machine and the command.
#
# Usage: bash Benchmarks/p3.sh [--size 1G] [--rounds 5] [--split N] [--no-build] [--timeout SECONDS]
#   --size SIZE         file size: bytes, or with K/M/G (binary: 256M = 256 MiB). Default 1G.
#   --split N           both downloads over N connections (`peregrine get --split N`): a verified
#                       segmented download is hashed in file order while its chunks arrive.
#   --rounds N          timed rounds after the warm-up (at least 1; 5 or more for real figures).
#   --no-build          reuse the peregrine binary built before in .build-bench.
#   --timeout SECONDS   kill a single run after this long and count it as failed (default 600).
# Environment: PEREGRINE_BIN=/path/to/peregrine measures that binary instead of .build-bench's.
#
# Exit status: 0 when every run succeeded, 1 when any run failed (the table is printed anyway).
# Work files (the served file, outputs, raw timings, logs) go to Benchmarks/.work/p3/, on the
# same disk as the repository; each output is deleted after its run.
set -euo pipefail

SCRIPT_NAME=p3.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/p3.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

SIZE_ARG=1G
ROUNDS=5
BUILD=1
RUN_TIMEOUT=600
SPLIT=1

while [[ $# -gt 0 ]]; do
    case "$1" in
        --size) [[ $# -ge 2 ]] || die "--size needs a value (e.g. 256M)"; SIZE_ARG=$2; shift 2 ;;
        --size=*) SIZE_ARG=${1#*=}; shift ;;
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
        --rounds=*) ROUNDS=${1#*=}; shift ;;
        --timeout) [[ $# -ge 2 ]] || die "--timeout needs a value"; RUN_TIMEOUT=$2; shift 2 ;;
        --timeout=*) RUN_TIMEOUT=${1#*=}; shift ;;
        --split) [[ $# -ge 2 ]] || die "--split needs a value"; SPLIT=$2; shift 2 ;;
        --split=*) SPLIT=${1#*=}; shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done

[[ $SPLIT =~ ^[0-9]+$ && $SPLIT -ge 1 && $SPLIT -le 64 ]] || die "--split must be 1 to 64, got '$SPLIT'"
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
ensure_packages nginx-light curl time openssl diffutils
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian package 'time')"
for tool in curl openssl timeout cmp; do command -v "$tool" >/dev/null || die "$tool not found"; done

# ---------------------------------------------------------------- build
if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then
    export PATH=/opt/swift/usr/bin:$PATH
fi

WORK=$REPO/Benchmarks/.work/p3
mkdir -p "$WORK/www" "$WORK/out" "$WORK/logs"

if [[ $BUILD -eq 1 && -z ${PEREGRINE_BIN:-} ]]; then
    command -v swift >/dev/null || die "swift not found (expected on PATH or at /opt/swift/usr/bin)"
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench) \
        >"$WORK/logs/build-peregrine.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build-peregrine.log" >&2; die "building peregrine failed (log: $WORK/logs/build-peregrine.log)"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}
[[ -x $PEREGRINE ]] || die "missing binary $PEREGRINE (run without --no-build)"

# ---------------------------------------------------------------- the served file and its digest
NAME=p3-$SIZE_LABEL.bin
FILE=$WORK/www/$NAME
if [[ ! -f $FILE || $(stat -c %s "$FILE") -ne $SIZE ]]; then
    note "generating $NAME ($SIZE bytes, AES-128-CTR keystream: incompressible, reproducible)"
    rm -f "$FILE" "$FILE.sha256"
    head -c "$SIZE" /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
            -out "$FILE.tmp" || die "generating $FILE failed"
    [[ $(stat -c %s "$FILE.tmp") -eq $SIZE ]] || die "generated file has the wrong size"
    mv "$FILE.tmp" "$FILE"
fi
# The expected digest, computed once and kept beside the file (stale when the file is newer).
if [[ ! -s $FILE.sha256 || $FILE -nt $FILE.sha256 ]]; then
    note "computing the expected SHA-256 with openssl (not timed)"
    openssl dgst -sha256 -r "$FILE" | cut -d' ' -f1 >"$FILE.sha256.tmp" && mv "$FILE.sha256.tmp" "$FILE.sha256"
fi
EXPECTED=$(cat "$FILE.sha256")
[[ $EXPECTED =~ ^[0-9a-f]{64}$ ]] || die "bad expected digest in $FILE.sha256"
# A digest that cannot match, to check once that a mismatch is caught (not timed).
WRONG=$(printf '%s' "$EXPECTED" | tr '0123456789abcdef' '123456789abcdef0')

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
DOWNLOADS=(get get-sha256)
HASHERS=(peregrine-verify openssl-dgst)

# contender_cmd CONTENDER DIR: sets CMD (downloads land at DIR/$NAME)
contender_cmd() {
    local dir=$2
    case "$1" in
        get) CMD=("$PEREGRINE" get "$URL" -d "$dir" --quiet --split "$SPLIT") ;;
        get-sha256) CMD=("$PEREGRINE" get "$URL" -d "$dir" --quiet --split "$SPLIT" --checksum "sha256=$EXPECTED") ;;
        peregrine-verify) CMD=("$PEREGRINE" verify "$FILE" --quiet --checksum "sha256=$EXPECTED") ;;
        openssl-dgst) CMD=(openssl dgst -sha256 "$FILE") ;;
        *) die "unknown contender $1" ;;
    esac
}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW=$WORK/raw-$STAMP-$SIZE_LABEL.tsv
printf 'round\tcontender\tstatus\twall_s\tmaxrss_kib\n' >"$RAW"
declare -A OK_COUNT FAIL_COUNT WALLS RSSES LAST_ERROR
for c in "${DOWNLOADS[@]}" "${HASHERS[@]}"; do
    OK_COUNT[$c]=0; FAIL_COUNT[$c]=0; WALLS[$c]=""; RSSES[$c]=""; LAST_ERROR[$c]=""
done

# run ROUND CONTENDER: one timed run; records it unless ROUND is "warmup"
run() {
    local round=$1 c=$2 dir="$WORK/out/run" log tf status rc=0 wall rss size
    rm -rf "$dir"; mkdir -p "$dir"
    sync
    log=$WORK/logs/$STAMP-$round-$c.log
    tf=$WORK/logs/$STAMP-$round-$c.time
    contender_cmd "$c" "$dir"
    /usr/bin/time -f '%e %M' -o "$tf" timeout "$RUN_TIMEOUT" "${CMD[@]}" >"$log" 2>&1 </dev/null || rc=$?
    read -r wall rss < <(tail -n 1 "$tf") || true
    if [[ $rc -ne 0 ]]; then
        status="exit $rc"; [[ $rc -eq 124 ]] && status="timeout ${RUN_TIMEOUT}s"
    else
        case "$c" in
            get|get-sha256)   # outside the timed part
                size=$(stat -c %s "$dir/$NAME" 2>/dev/null || echo missing)
                if [[ $size != "$SIZE" ]]; then status="size $size != $SIZE"
                elif ! cmp -s "$FILE" "$dir/$NAME"; then status="content differs from the served file"
                else status=ok; fi ;;
            openssl-dgst)
                if grep -q "$EXPECTED" "$log"; then status=ok; else status="wrong digest"; fi ;;
            *) status=ok ;;
        esac
    fi
    rm -rf "$dir"
    if [[ $status == ok ]]; then
        printf '  %-8s %-18s %6ss %8s KiB\n' "$round" "$c" "$wall" "$rss" >&2
    else
        local why
        why=$(tail -n 3 "$log" | tr '\n' ' ' || true)
        printf '  %-8s %-18s FAILED (%s) %s\n' "$round" "$c" "$status" "$why" >&2
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

# A mismatch must be caught: once, untimed, with a digest that cannot match.
note "checking that a wrong checksum fails the download (not timed)"
MISMATCH_DIR=$WORK/out/run
rm -rf "$MISMATCH_DIR"; mkdir -p "$MISMATCH_DIR"
if "$PEREGRINE" get "$URL" -d "$MISMATCH_DIR" --quiet --delete-mismatched --checksum "sha256=$WRONG" \
    >"$WORK/logs/$STAMP-mismatch.log" 2>&1; then
    die "peregrine get accepted a wrong checksum (log: $WORK/logs/$STAMP-mismatch.log)"
fi
grep -q "mismatch" "$WORK/logs/$STAMP-mismatch.log" || die "no mismatch message (log: $WORK/logs/$STAMP-mismatch.log)"
[[ ! -e $MISMATCH_DIR/$NAME ]] || die "a mismatched download reached its destination"
rm -rf "$MISMATCH_DIR"

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# The hashing pair reads the served file: one read first so that every run finds it in the page cache.
cat "$FILE" >/dev/null
note "warm-up: one run of each contender"
for c in "${DOWNLOADS[@]}" "${HASHERS[@]}"; do run warmup "$c"; done
for ((r = 1; r <= ROUNDS; r++)); do
    note "round $r/$ROUNDS"
    # A B in odd rounds, B A in even ones, for both pairs.
    if (( r % 2 )); then order=(0 1); else order=(1 0); fi
    for k in "${order[@]}"; do run "$r" "${DOWNLOADS[$k]}"; done
    for k in "${order[@]}"; do run "$r" "${HASHERS[$k]}"; done
done

# ---------------------------------------------------------------- report
declare -A MED_WALL MED_RSS
for c in "${DOWNLOADS[@]}" "${HASHERS[@]}"; do
    MED_WALL[$c]=$(median "${WALLS[$c]}")
    MED_RSS[$c]=$(median "${RSSES[$c]}")
done
ratio() {  # ratio A B: A / B with two decimals, or n/a
    awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b; else print "n/a" }'
}
verdict() {  # verdict VALUE OP LIMIT
    awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
        if (v == "n/a") { print "n/a"; exit }
        ok = (op == "<=") ? (v <= l) : (v >= l); print ok ? "met" : "missed" }'
}
DOWNLOAD_RATIO=$(ratio "${MED_WALL[get-sha256]}" "${MED_WALL[get]}")
HASH_RATIO=$(ratio "${MED_WALL[openssl-dgst]}" "${MED_WALL[peregrine-verify]}")
OVERLAP_RATIO=$(ratio "${MED_WALL[get-sha256]}" "${MED_WALL[peregrine-verify]}")
SHA_SPEED=$(openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | awk '$1 == "sha256" { sub(/k$/, "", $2); printf "%.0f", $2 * 1000 / 1048576 }' || true)
SHA_EXT=$(grep -qw sha_ni /proc/cpuinfo && echo "with" || echo "without")

REVISION=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "unknown revision")
if [[ -n $(git -C "$REPO" status --porcelain -- Modules Examples/peregrine Package.swift 2>/dev/null) ]]; then
    REVISION+=" + uncommitted changes"
fi
REPORT=$WORK/table-$STAMP-$SIZE_LABEL.md
{
    echo "### P3: one $SIZE_HUMAN file ($SIZE bytes) → disk over loopback, with SHA-256 verification"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(uname -srm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($SHA_EXT SHA extensions; \`openssl speed -evp sha256\` after the runs, 1 MiB blocks: ${SHA_SPEED:-?} MiB/s on one core); load average $LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after"
    echo "- command: \`$COMMAND\`"
    echo "- peregrine: $REVISION"
    echo "- server: nginx $("$NGINX" -v 2>&1 | sed 's/^nginx version: nginx\///'), sendfile on, 127.0.0.1; output on the repository's disk ($(df -P "$WORK" | awk 'NR==2{print $1}')); hashing reads the served file from the page cache"
    echo "- $ROUNDS rounds after one warm-up run each, A B / B A alternating; medians of the successful runs"
    echo
    echo "| workload | contender | median wall (s) | MiB/s | median peak RSS (MiB) | ok runs |"
    echo "|---|---|---:|---:|---:|---:|"
    for c in "${DOWNLOADS[@]}" "${HASHERS[@]}"; do
        case "$c" in
            get) what="download"; label="\`peregrine get\`" ;;
            get-sha256) what="download"; label="\`peregrine get --checksum sha256=…\`" ;;
            peregrine-verify) what="SHA-256 of the file"; label="\`peregrine verify --checksum sha256=…\`" ;;
            openssl-dgst) what="SHA-256 of the file"; label="\`openssl dgst -sha256\`" ;;
        esac
        w=${MED_WALL[$c]}
        if [[ -z $w ]]; then
            echo "| $what | $label | failed (${LAST_ERROR[$c]}) | | | 0/$ROUNDS |"
            continue
        fi
        rss=$(awk -v k="${MED_RSS[$c]}" 'BEGIN { printf "%.1f", k / 1024 }')
        speed=$(awk -v s="$SIZE" -v w="$w" 'BEGIN { if (w > 0) printf "%.0f", s / 1048576 / w; else print "∞" }')
        w2=$(awk -v w="$w" 'BEGIN { printf "%.2f", w }')
        echo "| $what | $label | $w2 | $speed | $rss | ${OK_COUNT[$c]}/$ROUNDS |"
    done
    echo
    echo "| figure | value | target | |"
    echo "|---|---:|---:|---|"
    echo "| download wall with SHA-256 / without | $DOWNLOAD_RATIO | ≤ 1.15 | $(verdict "$DOWNLOAD_RATIO" "<=" 1.15) |"
    echo "| SHA-256 throughput, Peregrine / openssl (= openssl wall / Peregrine wall) | $HASH_RATIO | ≥ 0.95 | $(verdict "$HASH_RATIO" ">=" 0.95) |"
    echo "| download wall with SHA-256 / hashing the same bytes alone (\`peregrine verify\`) | $OVERLAP_RATIO | ≈ 1.0: no second pass | |"
    echo
    echo "Hashing while downloading (HashingSink on its own queue) hides the download behind the hashing, not the"
    echo "other way round: the verified download cannot end before one core has hashed $SIZE_HUMAN. The ≤ 1.15 target"
    echo "needs SHA-256 at least as fast as the download ($(awk -v s="$SIZE" -v w="${MED_WALL[get]:-0}" 'BEGIN { if (w > 0) printf "%.0f", s / 1048576 / w; else print "?" }') MiB/s here); this CPU ($SHA_EXT SHA extensions) hashed at"
    echo "$(awk -v s="$SIZE" -v w="${MED_WALL[peregrine-verify]:-0}" 'BEGIN { if (w > 0) printf "%.0f", s / 1048576 / w; else print "?" }') MiB/s during the runs (\`openssl speed\` after the runs: ${SHA_SPEED:-?} MiB/s)."
    failed=()
    for c in "${DOWNLOADS[@]}" "${HASHERS[@]}"; do [[ ${FAIL_COUNT[$c]} -gt 0 ]] && failed+=("$c: ${FAIL_COUNT[$c]} failed (${LAST_ERROR[$c]})"); done
    if [[ ${#failed[@]} -gt 0 ]]; then
        echo
        echo "Failed runs (not timed): ${failed[*]}. Logs: Benchmarks/.work/p3/logs/$STAMP-*."
    fi
} | tee "$REPORT"
note "raw timings: $RAW; table: $REPORT"
for c in "${DOWNLOADS[@]}" "${HASHERS[@]}"; do
    [[ ${FAIL_COUNT[$c]} -eq 0 ]] || { note "some runs failed: exit status 1"; exit 1; }
done

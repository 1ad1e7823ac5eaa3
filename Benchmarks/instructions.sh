#!/usr/bin/env bash
# Instructions per unit of work for issue 19's benchmarks (P2, P3, P4, P7) and issue 17's RPC
# calls (P9), beside their peers.
#
# The machines here are shared virtual machines: wall-clock figures move with the neighbours,
# and `perf stat` finds no hardware counters. An instruction count does not move, so it is the
# steady figure kept beside the wall-clock ratios in Docs/Benchmarks.md. Counts come from
# valgrind's cachegrind (`--cache-sim=no`): every instruction the process executes in user
# space, in every thread. Not counted: the kernel (system calls, the page cache, the file
# system, loopback TCP) and the server (nginx) — what the wall-clock figures add to these.
# Under valgrind the CPU has no SHA extensions (its CPUID hides them), so OpenSSL hashes with
# its AVX2 or SSE code, and P3's hashing counts are those of a CPU without SHA-NI.
#
# Every figure is a difference of two runs of the same program at two sizes, divided by the
# difference in work, so that start-up (loading, the Swift runtime, opening a store, the first
# connection) cancels and what is left is the marginal cost of one more unit:
#
#   P7  per task   EngineBenchmark (mock transport, tmpfs, 16 slots), --tasks SMALL and LARGE
#                  (each run does a warm-up and one round, so twice the tasks)
#   P2  per file   16 KiB files from a local nginx, 16 at a time: `peregrine get --parallel 16`
#                  (the DownloadManager facade, its engine and JSON store) and curl --parallel;
#                  a quarter of the files and all of them. p2.sh's `p2-download` and
#                  `ahc-download` are not counted: linked against the Swift runtime's shared
#                  libraries, an asynchronous main crashes valgrind 3.19 (an internal SIGSEGV
#                  while libdispatch's main thread waits in sigsuspend), and ahc-download's
#                  DWARF 5 is more than its reader takes; `peregrine` links the runtime in.
#   P3  per MiB    one file from nginx: `peregrine get` without and with --checksum sha256=…,
#                  curl -o, and `openssl dgst -sha256` of the file; SIZE/4 and SIZE
#   P4  per task   StorageBenchmark load of the JSON, plist and SQLite stores; COUNT/10 and COUNT
#   P9  per call   `peregrined` and `aria2c --enable-rpc`, each holding 200 paused downloads,
#                  answering CALLS/5 and CALLS sequential getGlobalStat, tellActive or
#                  tellWaiting(0, 100) calls on one keep-alive connection (Benchmarks/P9's
#                  client); a service of its own per run, stopped by aria2.forceShutdown
#
# Usage: bash Benchmarks/instructions.sh [--only p7,p2,p3,p4,p9] [--p2-files 2000] [--p3-size 256M]
#                                        [--p4-count 100000] [--p7-tasks 4000] [--p9-calls 1000]
#                                        [--no-build]
#   --only LIST     which benchmarks (default all five).
#   --no-build      reuse the release binaries built before (.build-bench's peregrine and
#                   peregrined, Benchmarks/EngineBenchmark's and StorageBenchmark's).
# Valgrind runs programs 20–60 times slower: the defaults take about 20 minutes on 2 cores.
# Output: a Markdown table per benchmark with the date, the machine and the command.
# Work files go to Benchmarks/.work/instructions/.
set -euo pipefail
SCRIPT_NAME=instructions.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND="bash Benchmarks/instructions.sh"
for arg in "$@"; do COMMAND+=" $(printf '%q' "$arg")"; done

ONLY=p7,p2,p3,p4,p9
P9_CALLS=1000
P2_FILES=2000
P3_SIZE_ARG=256M
P4_COUNT=100000
P7_TASKS=4000
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --only) ONLY=${2:?--only needs a list}; shift 2 ;;
        --p2-files) P2_FILES=${2:?}; shift 2 ;;
        --p3-size) P3_SIZE_ARG=${2:?}; shift 2 ;;
        --p4-count) P4_COUNT=${2:?}; shift 2 ;;
        --p7-tasks) P7_TASKS=${2:?}; shift 2 ;;
        --p9-calls) P9_CALLS=${2:?}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $ONLY =~ ^(p2|p3|p4|p7|p9)(,(p2|p3|p4|p7|p9))*$ ]] \
    || die "--only takes a comma-separated list of p2, p3, p4, p7, p9; got '$ONLY'"
for v in P2_FILES P4_COUNT P7_TASKS P9_CALLS; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -ge 40 ]] || die "${v,,} must be an integer ≥ 40, got '${!v}'"
done
P3_BYTES=$(numfmt --from=iec "$P3_SIZE_ARG" 2>/dev/null) || die "--p3-size: not a size: $P3_SIZE_ARG"
(( P3_BYTES >= 4 * 1048576 && P3_BYTES % (4 * 1048576) == 0 )) || die "--p3-size must be a multiple of 4 MiB"
wanted() { [[ ,$ONLY, == *,$1,* ]]; }

ensure_packages valgrind nginx-light curl openssl python3
wanted p9 && ensure_packages aria2 binutils
ensure_swift
WORK=$REPO/Benchmarks/.work/instructions
mkdir -p "$WORK/logs"

# ---------------------------------------------------------------- binaries
ENGINE_DIR=$REPO/Benchmarks/EngineBenchmark
STORAGE_DIR=$REPO/Benchmarks/StorageBenchmark
build() {  # build LOG DIR ARGS...
    local log=$WORK/logs/$1 dir=$2; shift 2
    note "building in ${dir#"$REPO"/}: swift build $*"
    [[ $dir == "$REPO" ]] || forget_build_plan "$dir"
    (cd "$dir" && swift build "$@") >"$log" 2>&1 || { tail -n 40 "$log" >&2; die "build failed (log: $log)"; }
}
if [[ $BUILD -eq 1 ]]; then
    if wanted p7; then build engine.log "$ENGINE_DIR" -c release --product EngineBenchmark; fi
    if wanted p2 || wanted p3; then
        build peregrine.log "$REPO" -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench
    fi
    if wanted p9; then
        build peregrined.log "$REPO" -c release --static-swift-stdlib --product peregrined --scratch-path .build-bench
    fi
    if wanted p4; then build storage.log "$STORAGE_DIR" -c release; fi
fi
ENGINE_BIN=$ENGINE_DIR/.build/release/EngineBenchmark
PEREGRINE=$REPO/.build-bench/release/peregrine
PEREGRINED=$REPO/.build-bench/release/peregrined
STORAGE_BIN=$STORAGE_DIR/.build/release/StorageBenchmark
need() { local b; for b in "$@"; do [[ -x $b ]] || die "missing binary $b (run without --no-build)"; done; }
wanted p7 && need "$ENGINE_BIN"
wanted p2 && need "$PEREGRINE"
wanted p3 && need "$PEREGRINE"
wanted p4 && need "$STORAGE_BIN"
wanted p9 && need "$PEREGRINED"
if wanted p9; then
    # Valgrind 3.19 cannot read the DWARF 5 of `peregrined` (178 MB, static): it runs a copy
    # without debug information, which counting instructions does not need.
    mkdir -p "$WORK/bin"
    objcopy --strip-debug "$PEREGRINED" "$WORK/bin/peregrined" || die "cannot copy $PEREGRINED without debug information"
    PEREGRINED=$WORK/bin/peregrined
fi

# ---------------------------------------------------------------- counting
# count_instructions LABEL COMMAND...: runs COMMAND under cachegrind and prints its I refs.
# The program's own output goes to a log; a failing program fails the script.
count_instructions() {
    local label=$1 log=$WORK/logs/$1 refs; shift
    if ! valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        --log-file="$log.valgrind" "$@" >"$log.out" 2>"$log.err"; then
        tail -n 20 "$log.err" "$log.valgrind" >&2
        die "$label failed under valgrind: $1 … (log: $log.valgrind)"
    fi
    refs=$(awk '/I[[:space:]]+refs:/ { v = $NF; gsub(",", "", v); print v }' "$log.valgrind" | tail -n1)
    [[ $refs =~ ^[0-9]+$ ]] || die "no instruction count for $label in $log.valgrind"
    note "$label: $refs instructions"
    echo "$refs"
}
# per SMALL_REFS LARGE_REFS UNITS: instructions per unit of the difference, as an integer
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", (b - a) / n }'; }
# grouped N: 1234567 → 1,234,567
grouped() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); r = ""; while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } print s r }'; }

cleanup() {
    local rc=$?
    stop_nginx
    [[ -n $NGINX_DIR ]] && rm -rf "$NGINX_DIR"
    [[ -n ${SERVICE_PID:-} ]] && kill -KILL "$SERVICE_PID" 2>/dev/null
    rm -rf "$WORK/out" /dev/shm/peregrine-instructions.$$
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

CPU=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
VALGRIND_VERSION=$(valgrind --version 2>/dev/null)
REPORT=$WORK/report-$(date -u +%Y%m%dT%H%M%SZ).md
{
    echo "Instructions (user space, cachegrind) — $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- Machine: ${CPU:-unknown CPU}, $(nproc) cores, $(uname -sr), $VALGRIND_VERSION"
    echo "- Command: \`$COMMAND\`"
    echo
} >"$REPORT"

# ---------------------------------------------------------------- P7
if wanted p7; then
    SHM=/dev/shm/peregrine-instructions.$$
    SMALL=$((P7_TASKS / 4))
    p7_run() {
        rm -rf "$SHM"; mkdir -p "$SHM"
        count_instructions "p7-$1" "$ENGINE_BIN" --tasks "$1" --rounds 1 --limits 16 --directory "$SHM/d"
    }
    A=$(p7_run "$SMALL")
    B=$(p7_run "$P7_TASKS")
    PER=$(per "$A" "$B" $(( 2 * (P7_TASKS - SMALL) )))
    {
        echo "P7, zero-byte tasks on the mock transport (tmpfs, 16 slots), tasks $SMALL → $P7_TASKS:"
        echo
        echo "| contender | instructions per task |"
        echo "|---|---|"
        echo "| EngineBenchmark | $(grouped "$PER") |"
        echo
    } >>"$REPORT"
fi

# ---------------------------------------------------------------- P2
if wanted p2 || wanted p3; then
    SERVE=$WORK/www
    mkdir -p "$SERVE"
fi
if wanted p2; then
    SET=$REPO/Benchmarks/.work/p2/www/set-$P2_FILES-16384
    if [[ ! -f $SET/.complete ]]; then
        note "generating $P2_FILES files of 16 KiB"
        rm -rf "$SET"; mkdir -p "$SET"
        head -c $((P2_FILES * 16384)) /dev/zero \
            | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
            | (cd "$SET" && split -b 16384 -a 5 -d --additional-suffix=.bin - f)
        touch "$SET/.complete"
    fi
    NAMES=()
    while IFS= read -r name; do NAMES+=("$name"); done < <(cd "$SET" && ls f*.bin)
    [[ ${#NAMES[@]} -eq $P2_FILES ]] || die "expected $P2_FILES files in $SET, found ${#NAMES[@]}"
    start_nginx "$SET" "${NAMES[0]}"
    ALL_URLS=()
    for name in "${NAMES[@]}"; do ALL_URLS+=("http://127.0.0.1:$NGINX_PORT/$name"); done
    SMALL=$((P2_FILES / 4))
    p2_run() {  # p2_run CONTENDER FILES
        local c=$1 n=$2 out=$WORK/out/$1-$2 refs got
        rm -rf "$WORK/out"; mkdir -p "$out"
        local urls=("${ALL_URLS[@]:0:$n}")
        case "$c" in
            peregrine-get) refs=$(count_instructions "p2-$c-$n" "$PEREGRINE" get --quiet --parallel 16 -d "$out" --state-dir "$WORK/out/state" "${urls[@]}") ;;
            curl) refs=$(count_instructions "p2-$c-$n" curl -sS --fail --parallel --parallel-max 16 --output-dir "$out" --remote-name-all "${urls[@]}") ;;
        esac
        got=$(find "$out" -maxdepth 1 -name 'f*.bin' -size 16384c | wc -l)
        [[ $got -eq $n ]] || die "$c downloaded $got of $n files"
        echo "$refs"
    }
    declare -A P2_PER
    for c in peregrine-get curl; do
        A=$(p2_run "$c" "$SMALL")
        B=$(p2_run "$c" "$P2_FILES")
        P2_PER[$c]=$(per "$A" "$B" $((P2_FILES - SMALL)))
    done
    stop_nginx
    {
        echo "P2, 16 KiB files from nginx, 16 at a time, files $SMALL → $P2_FILES:"
        echo
        echo "| contender | instructions per file | this / curl |"
        echo "|---|---|---|"
        for c in peregrine-get curl; do
            echo "| $c | $(grouped "${P2_PER[$c]}") | $(ratio "${P2_PER[$c]}" "${P2_PER[curl]}") |"
        done
        echo
    } >>"$REPORT"
fi

# ---------------------------------------------------------------- P3
if wanted p3; then
    P3_SMALL=$((P3_BYTES / 4))
    FILE=$SERVE/p3-$P3_BYTES.bin
    if [[ ! -f $FILE ]]; then
        note "generating $P3_SIZE_ARG to serve"
        head -c "$P3_BYTES" /dev/zero \
            | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
            >"$FILE.part"
        mv "$FILE.part" "$FILE"
    fi
    SMALL_FILE=$SERVE/p3-$P3_SMALL.bin
    [[ -f $SMALL_FILE ]] || { head -c "$P3_SMALL" "$FILE" >"$SMALL_FILE.part" && mv "$SMALL_FILE.part" "$SMALL_FILE"; }
    declare -A SUMS
    SUMS[$P3_BYTES]=$(sha256sum "$FILE" | cut -d' ' -f1)
    SUMS[$P3_SMALL]=$(sha256sum "$SMALL_FILE" | cut -d' ' -f1)
    start_nginx "$SERVE" "$(basename "$FILE")"
    p3_run() {  # p3_run CONTENDER BYTES
        local c=$1 n=$2 out=$WORK/out name=p3-$2.bin refs
        rm -rf "$out"; mkdir -p "$out"
        local url=http://127.0.0.1:$NGINX_PORT/$name
        case "$c" in
            peregrine-get) refs=$(count_instructions "p3-$c-$n" "$PEREGRINE" get --quiet -d "$out" --state-dir "$out/state" "$url") ;;
            peregrine-get-sha256) refs=$(count_instructions "p3-$c-$n" "$PEREGRINE" get --quiet -d "$out" --state-dir "$out/state" --checksum "sha256=${SUMS[$n]}" "$url") ;;
            curl) refs=$(count_instructions "p3-$c-$n" curl -sS --fail -o "$out/$name" "$url") ;;
            openssl-dgst) refs=$(count_instructions "p3-$c-$n" openssl dgst -sha256 "$SERVE/$name") ;;
        esac
        if [[ $c != openssl-dgst ]]; then
            [[ $(sha256sum "$out/$name" | cut -d' ' -f1) == "${SUMS[$n]}" ]] || die "$c: wrong bytes in $out/$name"
        fi
        echo "$refs"
    }
    declare -A P3_PER
    MIB=$(( (P3_BYTES - P3_SMALL) / 1048576 ))
    for c in peregrine-get peregrine-get-sha256 curl openssl-dgst; do
        A=$(p3_run "$c" "$P3_SMALL")
        B=$(p3_run "$c" "$P3_BYTES")
        P3_PER[$c]=$(per "$A" "$B" "$MIB")
    done
    stop_nginx
    {
        echo "P3, one file from nginx, $((P3_SMALL / 1048576)) → $((P3_BYTES / 1048576)) MiB:"
        echo
        echo "| contender | instructions per MiB | this / peregrine get (unverified) |"
        echo "|---|---|---|"
        for c in peregrine-get peregrine-get-sha256 curl openssl-dgst; do
            echo "| $c | $(grouped "${P3_PER[$c]}") | $(ratio "${P3_PER[$c]}" "${P3_PER[peregrine-get]}") |"
        done
        echo
    } >>"$REPORT"
fi

# ---------------------------------------------------------------- P4
if wanted p4; then
    P4_SMALL=$((P4_COUNT / 10))
    declare -A P4_PER
    for n in "$P4_SMALL" "$P4_COUNT"; do
        rm -rf "$WORK/p4/$n"; mkdir -p "$WORK/p4/$n"
        for b in json plist sqlite; do
            note "preparing $b with $n tasks"
            "$STORAGE_BIN" prepare --backend "$b" --count "$n" --root "$WORK/p4/$n" >"$WORK/logs/p4-prepare.log" 2>&1 \
                || { cat "$WORK/logs/p4-prepare.log" >&2; die "prepare $b $n failed"; }
        done
    done
    for b in json plist sqlite; do
        A=$(count_instructions "p4-$b-$P4_SMALL" "$STORAGE_BIN" load --backend "$b" --count "$P4_SMALL" --root "$WORK/p4/$P4_SMALL")
        B=$(count_instructions "p4-$b-$P4_COUNT" "$STORAGE_BIN" load --backend "$b" --count "$P4_COUNT" --root "$WORK/p4/$P4_COUNT")
        P4_PER[$b]=$(per "$A" "$B" $((P4_COUNT - P4_SMALL)))
    done
    rm -rf "$WORK/p4"
    {
        echo "P4, loading a store (open + every task into \`StoredTask\`s), tasks $P4_SMALL → $P4_COUNT:"
        echo
        echo "| store | instructions per task | this / SQLite |"
        echo "|---|---|---|"
        for b in json plist sqlite; do
            echo "| $b | $(grouped "${P4_PER[$b]}") | $(ratio "${P4_PER[$b]}" "${P4_PER[sqlite]}") |"
        done
        echo
    } >>"$REPORT"
fi

# ---------------------------------------------------------------- P9
if wanted p9; then
    P9_SMALL=$((P9_CALLS / 5))
    SECRET=instructions-secret
    CLIENT=$REPO/Benchmarks/P9/p9client.py
    rpc() {  # rpc URL METHOD: one call with the token; its answer
        curl -fsS -H 'Content-Type: application/json' \
            -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":[\"token:$SECRET\"]}" "$1"
    }
    # p9_run runs in a command substitution, whose EXIT trap is not the script's: it stops its
    # own service before failing.
    p9_fail() { [[ -n ${SERVICE_PID:-} ]] && kill -KILL "$SERVICE_PID" 2>/dev/null; die "$@"; }
    p9_run() {  # p9_run CONTENDER METHOD CALLS: the service's instructions over its whole life
        local c=$1 method=$2 n=$3 label=p9-$1-$2-$3 port url i refs
        local log=$WORK/logs/$label
        rm -rf "$WORK/out"; mkdir -p "$WORK/out/dir" "$WORK/out/state"
        port=$(free_port)
        url=http://127.0.0.1:$port/jsonrpc
        case "$c" in
            peregrine)
                valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file="$log.valgrind" \
                    "$PEREGRINED" --dir "$WORK/out/dir" --state "$WORK/out/state" --rpc-listen-port "$port" \
                    --rpc-secret "$SECRET" >"$log.out" 2>&1 &
                ;;
            aria2c)
                valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file="$log.valgrind" \
                    aria2c --enable-rpc --rpc-listen-port="$port" --rpc-secret="$SECRET" --dir="$WORK/out/dir" \
                    --file-allocation=none --console-log-level=warn --summary-interval=0 --no-conf >"$log.out" 2>&1 &
                ;;
        esac
        SERVICE_PID=$!
        for i in $(seq 1 600); do
            kill -0 "$SERVICE_PID" 2>/dev/null || { cat "$log.out" >&2; p9_fail "$c exited under valgrind"; }
            rpc "$url" aria2.getVersion >/dev/null 2>&1 && break
            sleep 0.1
        done
        rpc "$url" aria2.getVersion >/dev/null || p9_fail "$c does not answer on $url"
        python3 "$CLIENT" populate "$url" "$SECRET" 200 http://127.0.0.1:9/p9 >/dev/null || p9_fail "$c: populate failed"
        python3 "$CLIENT" latency "$url" "$SECRET" "$method" "$n" 0 >/dev/null || p9_fail "$c: $method calls failed"
        rpc "$url" aria2.forceShutdown >/dev/null || p9_fail "$c: forceShutdown failed"
        wait "$SERVICE_PID" || true
        SERVICE_PID=
        refs=$(awk '/I[[:space:]]+refs:/ { v = $NF; gsub(",", "", v); print v }' "$log.valgrind" | tail -n1)
        [[ $refs =~ ^[0-9]+$ ]] || p9_fail "no instruction count for $label in $log.valgrind"
        note "$label: $refs instructions"
        echo "$refs"
    }
    declare -A P9_PER
    for method in getGlobalStat tellActive tellWaiting; do
        for c in peregrine aria2c; do
            A=$(p9_run "$c" "$method" "$P9_SMALL")
            B=$(p9_run "$c" "$method" "$P9_CALLS")
            P9_PER[$c-$method]=$(per "$A" "$B" $((P9_CALLS - P9_SMALL)))
        done
    done
    {
        echo "P9, sequential calls on one keep-alive connection, 200 paused downloads held, calls $P9_SMALL → $P9_CALLS:"
        echo
        echo "| call | peregrined, instructions per call | aria2c --enable-rpc | aria2c / peregrined (≥ 1: fewer here) |"
        echo "|---|---|---|---|"
        for method in getGlobalStat tellActive tellWaiting; do
            label=$method; [[ $method == tellWaiting ]] && label="tellWaiting(0, 100)"
            echo "| $label | $(grouped "${P9_PER[peregrine-$method]}") | $(grouped "${P9_PER[aria2c-$method]}") | $(ratio "${P9_PER[aria2c-$method]}" "${P9_PER[peregrine-$method]}") |"
        done
        echo
    } >>"$REPORT"
fi

cat "$REPORT"
note "report: ${REPORT#"$REPO"/}"

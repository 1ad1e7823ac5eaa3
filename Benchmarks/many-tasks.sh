#!/usr/bin/env bash
# Reliability figure: 10,000 queued downloads at concurrency 64 through `peregrine get -i`.
#
# Serves N small files (4 KiB by default) from its own nginx on 127.0.0.1, writes an input file
# with one URL per line, runs `peregrine get -i LIST -j 64` under `/usr/bin/time -f '%e %M'`,
# checks that every file arrived with the served bytes (outside the timing), and prints the wall
# time, files per second and peak RSS — then runs the same command again, which must fetch
# nothing (every file reported complete from the store).
#
# Usage: bash Benchmarks/many-tasks.sh [--files 10000] [--size 4096] [--parallel 64] [--no-build]
# Work files go to Benchmarks/.work/many-tasks/.
set -euo pipefail
SCRIPT_NAME=many-tasks.sh
# shellcheck source=Benchmarks/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FILES=10000
SIZE=4096
PARALLEL=64
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --files) FILES=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --parallel) PARALLEL=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[[ $FILES =~ ^[0-9]+$ && $FILES -ge 1 ]] || die "--files must be a positive integer"
[[ $SIZE =~ ^[0-9]+$ && $SIZE -ge 1 ]] || die "--size must be a positive integer"
[[ $PARALLEL =~ ^[0-9]+$ && $PARALLEL -ge 1 ]] || die "--parallel must be a positive integer"

ensure_packages nginx-light curl time openssl
WORK=$REPO/Benchmarks/.work/many-tasks
mkdir -p "$WORK/www" "$WORK/logs"
if [[ $BUILD -eq 1 ]]; then
    note "building peregrine (release, --scratch-path .build-bench)"
    (cd "$REPO" && swift build -c release --static-swift-stdlib --product peregrine --scratch-path .build-bench) >"$WORK/logs/build.log" 2>&1 \
        || { tail -n 40 "$WORK/logs/build.log" >&2; die "building peregrine failed"; }
fi
PEREGRINE=${PEREGRINE_BIN:-$REPO/.build-bench/release/peregrine}
[[ -x $PEREGRINE ]] || die "missing $PEREGRINE (run without --no-build)"

if [[ ! -f $WORK/www/f$((FILES - 1)).bin || $(stat -c %s "$WORK/www/f0.bin") -ne $SIZE ]]; then
    note "generating $FILES files of $SIZE bytes"
    rm -f "$WORK"/www/f*.bin
    head -c $((FILES * SIZE)) /dev/zero \
        | openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000001 \
        | split -b "$SIZE" -a 6 -d - "$WORK/www/chunk."
    i=0
    for chunk in "$WORK"/www/chunk.*; do mv "$chunk" "$WORK/www/f$i.bin"; i=$((i + 1)); done
fi
EXPECTED=$(cd "$WORK/www" && for i in $(seq 0 $((FILES - 1))); do cat "f$i.bin"; done | sha256sum | cut -d' ' -f1)

cleanup() { local rc=$?; stop_nginx; [[ -n ${NGINX_DIR:-} ]] && rm -rf "$NGINX_DIR"; exit "$rc"; }
trap cleanup EXIT
start_nginx "$WORK/www" f0.bin
LIST=$WORK/urls.txt
for i in $(seq 0 $((FILES - 1))); do echo "http://127.0.0.1:$NGINX_PORT/f$i.bin"; done >"$LIST"

OUT=$WORK/out
rm -rf "$OUT" "$WORK/state"
sync
run() {
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$PEREGRINE" get -i "$LIST" -j "$PARALLEL" -d "$OUT" \
        --state-dir "$WORK/state" --quiet >"$WORK/logs/stdout" 2>"$WORK/logs/stderr" || {
        tail -n 5 "$WORK/logs/stderr" >&2
        die "peregrine get failed"
    }
    read -r WALL RSS <"$WORK/time"
}
run
FIRST_WALL=$WALL FIRST_RSS=$RSS
GOT=$(cd "$OUT" && for i in $(seq 0 $((FILES - 1))); do cat "f$i.bin"; done | sha256sum | cut -d' ' -f1)
[[ $GOT == "$EXPECTED" ]] || die "the downloaded files differ from the served ones"
COUNT=$(find "$OUT" -maxdepth 1 -type f | wc -l)
[[ $COUNT -eq $FILES ]] || die "$COUNT files in the output directory, expected $FILES (duplicates or leftovers)"
run
LINES=$(wc -l <"$WORK/logs/stdout")
[[ $LINES -eq $FILES ]] || die "the rerun reported $LINES files, expected $FILES"

cat <<TABLE
### $FILES downloads of $SIZE bytes at concurrency $PARALLEL (\`peregrine get -i\`)

- date: $(date -u '+%Y-%m-%d %H:%M') UTC; machine: $(uname -sr), nproc $(nproc)
- command: \`bash Benchmarks/many-tasks.sh --files $FILES --size $SIZE --parallel $PARALLEL\`

| run | wall (s) | files/s | peak RSS (MiB) |
|---|---:|---:|---:|
| first (downloads) | $FIRST_WALL | $(awk -v n="$FILES" -v w="$FIRST_WALL" 'BEGIN { printf "%.0f", n / w }') | $(awk -v k="$FIRST_RSS" 'BEGIN { printf "%.1f", k / 1024 }') |
| again (all complete, nothing fetched) | $WALL | $(awk -v n="$FILES" -v w="$WALL" 'BEGIN { printf "%.0f", n / w }') | $(awk -v k="$RSS" 'BEGIN { printf "%.1f", k / 1024 }') |

Every file checked against the served bytes; $COUNT files, no duplicate, nothing left behind.
TABLE

#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ and runs each one for a fixed number of executions,
# from a scratch copy of its seed corpus (Fuzz/Corpus/<harness>/ is never written to), then
# checks that a planted control bug IS found, which proves that the setup can find bugs.
#
# Usage: Scripts/fuzz.sh [--runs N] [--seed S] [--control-runs N] [--no-control] [HARNESS...]
#   --runs N          executions per harness (default: $PEREGRINE_FUZZ_RUNS, else 60000)
#   --seed S          libFuzzer's -seed (default: $PEREGRINE_FUZZ_SEED, else 20261125); printed,
#                     so a run can be replayed with PEREGRINE_FUZZ_SEED=S
#   --control-runs N  the most executions the control may take to find its bug (default 200000)
#   --no-control      skip the control run
#   HARNESS...        only these harnesses (default: every Fuzz/Sources/Fuzz* target except FuzzSupport)
#
# Exits non-zero when a harness crashes (the input is saved under
# Fuzz/.build-fuzz/crashes/<harness>/ and its path printed) or when the control finds nothing.
# Replay a crash: Fuzz/.build-fuzz/debug/<harness> <crash file>
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

runs=${PEREGRINE_FUZZ_RUNS:-60000}
seed=${PEREGRINE_FUZZ_SEED:-20261125}
control_runs=200000
control=1
harnesses=()
while (($#)); do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --control-runs) control_runs=$2; shift 2 ;;
        --no-control) control=0; shift ;;
        -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) harnesses+=("$1"); shift ;;
    esac
done
for number in "$runs" "$seed" "$control_runs"; do
    [[ $number =~ ^[0-9]+$ ]] || { echo "fuzz.sh: not a number: $number" >&2; exit 2; }
done
if ((${#harnesses[@]} == 0)); then
    for dir in Fuzz/Sources/Fuzz*; do
        name=$(basename "$dir")
        [[ $name == FuzzSupport ]] || harnesses+=("$name")
    done
fi

scratch=Fuzz/.build-fuzz
bin=$scratch/debug
crashes=$root/$scratch/crashes

# The Fuzz package resolves swift-log and swift-argument-parser through the main package; pin
# them to the main package's versions (Fuzz/Package.resolved is ignored, never committed).
if [[ ! -f Fuzz/Package.resolved && -f Package.resolved ]]; then cp Package.resolved Fuzz/Package.resolved; fi

echo "== building the harnesses (debug, libFuzzer + AddressSanitizer) into $scratch"
log=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$log" "$work"' EXIT
# `--sanitize fuzzer` makes SwiftPM link the executables for libFuzzer (its own main); the
# -Xswiftc flag comes last on every compile and link line, so every module — Peregrine's
# included — gets coverage instrumentation and AddressSanitizer (swiftc keeps only the last
# -sanitize= flag, so both must be in one).
if ! nice -n 19 swift build --package-path Fuzz --scratch-path "$scratch" \
    --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address >"$log" 2>&1; then
    grep -v "Cannot export local symbol" "$log" >&2
    echo "error: the fuzz harnesses do not build" >&2
    exit 1
fi
if grep -E "^/.*/Fuzz/Sources/.*: warning:" "$log" | sort -u | grep .; then
    echo "error: the fuzz harnesses have compiler warnings (above)" >&2
    exit 1
fi

# Swift's own crash backtracer fights AddressSanitizer's signal handling (it can hang); libFuzzer
# and ASan print the stack instead.
export SWIFT_BACKTRACE=enable=no
# Swift seeds its hashing per process, so a Set or Dictionary walks in another order each run and
# libFuzzer sees other coverage: the same -seed took another path in CI than here. Fixed hashing
# makes a seed replay the same run.
export SWIFT_DETERMINISTIC_HASHING=1

# run_harness NAME RUNS LOGFILE: fuzzes from a scratch copy of the corpus; returns libFuzzer's status.
run_harness() {
    local name=$1 count=$2 output=$3
    local corpus=$work/$name-corpus artifacts=$crashes/$name
    rm -rf "$corpus"
    mkdir -p "$corpus" "$artifacts"
    if [[ -d Fuzz/Corpus/$name ]]; then cp -R "Fuzz/Corpus/$name/." "$corpus/"; fi
    local extra=() asan=${ASAN_OPTIONS:-}
    # FuzzRPCRequest keeps one DownloadManager for the whole run (a new one per input would cost
    # more than the input); what it holds between inputs sits behind Swift references that
    # LeakSanitizer cannot follow (spare bits in enum payloads), so it reports them as leaks,
    # per input and at exit. Memory growth is still bounded by -rss_limit_mb.
    if [[ $name == FuzzRPCRequest ]]; then
        extra+=(-detect_leaks=0)
        asan="${asan:+$asan:}detect_leaks=0"
    fi
    ASAN_OPTIONS=$asan nice -n 19 "$bin/$name" "$corpus" -runs="$count" -seed="$seed" -rss_limit_mb=2048 \
        -max_len=4096 -timeout=30 -max_total_time=600 -print_final_stats=1 -artifact_prefix="$artifacts/" \
        "${extra[@]}" >"$output" 2>&1
}

echo "== fuzzing: ${#harnesses[@]} harnesses, -runs=$runs -seed=$seed (replay: PEREGRINE_FUZZ_SEED=$seed)"
failed=()
for name in "${harnesses[@]}"; do
    if [[ ! -x $bin/$name ]]; then
        echo "error: no harness named $name" >&2
        failed+=("$name")
        continue
    fi
    output=$work/$name.log
    start=$SECONDS
    if run_harness "$name" "$runs" "$output"; then
        stats=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$output" | tail -1 | sed -E 's/^#[0-9]+[[:space:]]+DONE[[:space:]]+//')
        echo "ok    $name ($((SECONDS - start)) s): $stats"
    else
        status=$?
        failed+=("$name")
        echo "FAIL  $name (exit status $status, $((SECONDS - start)) s); the end of its log:"
        grep -v -E "^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|RELOAD)" "$output" | tail -60 | sed 's/^/      /'
        saved=$(grep -oE "(Test unit|artifact) written to [^ ]+" "$output" | sed -E 's/.* written to //' || true)
        echo "      crashing input saved to: ${saved:-(none written; see the log above)}"
        echo "      replay: $bin/$name ${saved:-<input>}"
    fi
done

if ((control)); then
    echo "== control: FuzzChecksum with PEREGRINE_FUZZ_CONTROL=1 must crash on inputs starting with \"PFZ!\""
    output=$work/control.log
    start=$SECONDS
    if PEREGRINE_FUZZ_CONTROL=1 crashes=$work/control-crashes run_harness FuzzChecksum "$control_runs" "$output"; then
        echo "FAIL  control: no crash in $control_runs executions; the harnesses may not be instrumented"
        failed+=(control)
    elif grep -q "the planted bug was reached" "$output" \
        && find "$work/control-crashes/FuzzChecksum" -name 'crash-*' -exec head -c 4 {} \; | grep -q "PFZ!"; then
        execs=$(grep -oE "^stat::number_of_executed_units:[[:space:]]*[0-9]+" "$output" | grep -oE "[0-9]+$" || true)
        echo "ok    control: the planted bug was found after ${execs:-?} executions ($((SECONDS - start)) s)"
    else
        echo "FAIL  control: the run failed, but not on the planted bug; the end of its log:"
        tail -40 "$output" | sed 's/^/      /'
        failed+=(control)
    fi
fi

if ((${#failed[@]})); then
    echo "fuzz.sh: FAILED: ${failed[*]} (seed $seed; crashing inputs under $scratch/crashes/)" >&2
    exit 1
fi
echo "fuzz.sh: all harnesses passed (seed $seed, $runs runs each)"

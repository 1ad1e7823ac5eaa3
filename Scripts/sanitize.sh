#!/usr/bin/env bash
# Runs Peregrine's tests under the sanitizers, from the Sanitizers/ package (the suites below,
# built against the main package by path, without SwiftNIO, Hummingbird or PostgresNIO):
#
#   --thread   ThreadSanitizer (-sanitize=thread, -DPEREGRINE_TSAN, so every module locks with
#              SanitizerMutex, a pthread mutex TSan sees): the engine, the facade, the curl
#              transport and the store suites, then the stress test once per seed. First the
#              controls: a planted data race must be reported, and a planted lock-order
#              inversion on SanitizerMutex must be reported (by its lock-order check: the TSan
#              runtime of this toolchain reports none, see Docs/Reliability.md).
#   --address  AddressSanitizer in a debug build, which traps on integer
#              overflow and out-of-bounds access by itself (swiftc has no -sanitize=undefined on
#              Linux): the parsers' suites (file naming and Content-Disposition, authentication
#              challenges and Digest, checksums and checksum lists, the JSON and binary-plist
#              record formats, image headers).
#
# Usage: Scripts/sanitize.sh [--thread] [--address] [--seeds "1 2 3"] [--suites "A B"] [--no-control]
#   (neither mode given: both)
#   --seeds S     the stress test's seeds, one run each (default: $PEREGRINE_SANITIZE_SEEDS, else
#                 "1 2 3 4 5 6 7 8"); replay one with PEREGRINE_STRESS_SEED=S
#   --suites S    the thread run's suites (default: PeregrineEngineTests PeregrineTests
#                 PeregrineCurlTransportTests PeregrineStorageTests; the stress test is separate)
#   --no-control  skip the controls
#
# A suite fails when its tests fail or when the sanitizer prints a report ("WARNING:
# ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:"); the first report is printed.
# Builds go to .build-tsan and .build-asan, never .build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

thread=0
address=0
seeds=${PEREGRINE_SANITIZE_SEEDS:-1 2 3 4 5 6 7 8}
suites="PeregrineEngineTests PeregrineTests PeregrineCurlTransportTests PeregrineStorageTests"
control=1
while (($#)); do
    case $1 in
        --thread) thread=1; shift ;;
        --address) address=1; shift ;;
        --seeds) seeds=$2; shift 2 ;;
        --suites) suites=$2; shift 2 ;;
        --no-control) control=0; shift ;;
        -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "sanitize.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if ((!thread && !address)); then thread=1; address=1; fi
for seed in $seeds; do
    [[ $seed =~ ^[0-9]+$ ]] || { echo "sanitize.sh: not a seed: $seed" >&2; exit 2; }
done

# The Sanitizers package resolves the main package's dependencies; pin them to the main package's
# versions (Sanitizers/Package.resolved is ignored, never committed).
if [[ ! -f Sanitizers/Package.resolved && -f Package.resolved ]]; then
    cp Package.resolved Sanitizers/Package.resolved
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()

# The sanitizer's report, not Swift's crash backtracer, says what went wrong (the backtracer can
# hang under the sanitizers).
export SWIFT_BACKTRACE=enable=no

# build MODE SCRATCH FLAGS...: builds the Sanitizers package's tests; prints the time it took.
build() {
    local mode=$1 scratch=$2
    shift 2
    local log=$work/build-$mode.log start=$SECONDS
    echo "== building (swift build --package-path Sanitizers --build-tests --scratch-path $scratch $*)"
    if ! swift build --package-path Sanitizers --build-tests --scratch-path "$scratch" "$@" >"$log" 2>&1; then
        grep -E "error:" "$log" | sort -u | head -40 >&2
        echo "error: the $mode build failed (the whole log: rerun the command above)" >&2
        exit 1
    fi
    if grep -E "^/.*/(Modules|Tests|Sanitizers)/.*: warning:" "$log" | sort -u | grep .; then
        echo "error: the $mode build has warnings in Peregrine's own code (above)" >&2
        exit 1
    fi
    echo "   built in $((SECONDS - start)) s"
}

# run NAME LOG COMMAND...: runs a test command; fails it when it fails or a sanitizer reported.
run() {
    local name=$1 log=$2
    shift 2
    local start=$SECONDS status=0
    "$@" >"$log" 2>&1 || status=$?
    local reports
    reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:|lock-order-inversion" "$log" || true)
    if ((status == 0 && reports == 0)); then
        echo "ok    $name ($((SECONDS - start)) s): $(grep -E "Test run with" "$log" | tail -1 | sed -E 's/^[^T]*//')"
    else
        failed+=("$name")
        echo "FAIL  $name (exit status $status, $reports sanitizer reports, $((SECONDS - start)) s); the first report or the end of the log:"
        if ((reports)); then
            grep -m1 -A40 -E "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:|lock-order-inversion" "$log" | sed 's/^/      /'
        else
            # -m, not head: head's early exit would kill grep with SIGPIPE, and pipefail with
            # set -e would end the whole script there, before the other suites.
            grep -m40 -E "✘|error|Fatal" "$log" | sed 's/^/      /' || true
            tail -20 "$log" | sed 's/^/      /'
        fi
    fi
}

if ((thread)); then
    scratch=$root/.build-tsan
    tsan=(--sanitize=thread -Xswiftc -DPEREGRINE_TSAN)
    build thread "$scratch" "${tsan[@]}"
    # halt_on_error: the first report ends the run, so a suite cannot pass with a report in it.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    test=(swift test --package-path Sanitizers --skip-build --scratch-path "$scratch" "${tsan[@]}")
    echo "== ThreadSanitizer (TSAN_OPTIONS=$TSAN_OPTIONS)"

    if ((control)); then
        # control NAME EXPECTED: the planted bug runs alone and must be reported as EXPECTED.
        control() {
            local name=$1 expected=$2 log=$work/control-$1.log status=0
            PEREGRINE_SANITIZER_CONTROL=$name "${test[@]}" --filter SanitizerControlTests >"$log" 2>&1 || status=$?
            if ((status != 0)) && grep -q "$expected" "$log"; then
                echo "ok    control $name: reported ($(grep -m1 -oE "$expected[^(]*" "$log" | sed 's/ *$//'))"
            else
                failed+=("control-$name")
                echo "FAIL  control $name: not reported as \"$expected\" (exit status $status); the end of its log:"
                tail -30 "$log" | sed 's/^/      /'
            fi
        }
        control race "WARNING: ThreadSanitizer: data race"
        control lock-order "lock-order-inversion"
    fi

    for suite in $suites; do
        echo "   swift test --package-path Sanitizers --skip-build --sanitize=thread -Xswiftc -DPEREGRINE_TSAN --filter $suite.  --skip ManagerStressTests"
        run "thread $suite" "$work/thread-$suite.log" "${test[@]}" --filter "$suite\." --skip ManagerStressTests
    done
    for seed in $seeds; do
        echo "   PEREGRINE_STRESS_SEED=$seed swift test --package-path Sanitizers --skip-build --sanitize=thread -Xswiftc -DPEREGRINE_TSAN --filter ManagerStressTests"
        PEREGRINE_STRESS_SEED=$seed run "thread ManagerStressTests seed $seed" "$work/stress-$seed.log" \
            "${test[@]}" --filter ManagerStressTests
    done
fi

if ((address)); then
    scratch=$root/.build-asan
    # Only address: swiftc rejects -sanitize=undefined on Linux ("unsupported option"), and what
    # UndefinedBehaviorSanitizer checks in C (overflow, out-of-bounds, bad casts) a debug Swift
    # build traps on by itself; Peregrine's C is header-only shims over system libraries.
    asan=(--sanitize=address)
    build address "$scratch" "${asan[@]}"
    # LeakSanitizer off: at exit it reports the suites' lazily made globals (StoreFixtures,
    # held behind Swift references it cannot follow, spare bits in enum payloads) as leaks, 46
    # of them; Scripts/fuzz.sh turns it off for the same reason where a harness keeps state.
    export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    echo "== AddressSanitizer (ASAN_OPTIONS=$ASAN_OPTIONS), in a debug build, which traps on overflow"
    parsers=(
        "PeregrineEngineTests.FileNamingTests" "PeregrineEngineTests.EngineNamingTests"
        "PeregrineAuthTests.ChallengeParserTests" "PeregrineAuthTests.ChallengeParserFuzzTests"
        "PeregrineAuthTests.DigestChallengeTests" "PeregrineAuthTests.DigestRFCExampleTests"
        "PeregrineVerificationTests.ChecksumParsingTests" "PeregrineVerificationTests.ChecksumParsingErrorTests"
        "PeregrineVerificationTests.ChecksumListParsingTests" "PeregrineVerificationTests.ChecksumListLookupTests"
        "PeregrineVerificationTests.ChecksumCodingTests"
        "PeregrineStorageTests.StoreFormatTests"
        "PeregrineThumbnailsTests.BadInputTests" "PeregrineThumbnailsTests.FuzzTests"
        "PeregrineThumbnailsTests.ImageThumbnailTests"
    )
    filters=()
    for suite in "${parsers[@]}"; do filters+=(--filter "$suite\b"); done
    echo "   swift test --package-path Sanitizers --skip-build --sanitize=address ${filters[*]}"
    run "address parsers" "$work/address.log" \
        swift test --package-path Sanitizers --skip-build --scratch-path "$scratch" "${asan[@]}" "${filters[@]}"
fi

if ((${#failed[@]})); then
    echo "sanitize.sh: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "sanitize.sh: all passed"

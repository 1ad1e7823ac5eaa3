#!/usr/bin/env bash
# Builds Peregrine, fails on any compiler warning in its own code, and runs every test:
# unit tests, the Transport conformance suite on both backends, and the integration tests
# against real nginx servers that the tests start on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

bash Scripts/install-dependencies.sh
# aria2p, pinned, drives the download service and aria2c in Tests/RPC/aria2p_compat.py.
if ! python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("aria2p") != "0.12.3")' 2>/dev/null; then
    python3 -m pip install --quiet "aria2p==0.12.3" \
        || python3 -m pip install --quiet --break-system-packages "aria2p==0.12.3"
fi
# prometheus-client, pinned, parses the service's /metrics in MetricsTests.
if ! python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("prometheus-client") != "0.26.0")' 2>/dev/null; then
    python3 -m pip install --quiet "prometheus-client==0.26.0" \
        || python3 -m pip install --quiet --break-system-packages "prometheus-client==0.26.0"
fi
# Selenium, pinned, drives headless Chromium in Tests/Dashboard/dashboard_test.py (the dashboard).
if ! python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("selenium") != "4.40.0")' 2>/dev/null; then
    python3 -m pip install --quiet "selenium==4.40.0" \
        || python3 -m pip install --quiet --break-system-packages "selenium==4.40.0"
fi
# The video thumbnail tests skip themselves without ffmpeg; here a missing ffmpeg is a failure.
export PEREGRINE_REQUIRE_FFMPEG=1

# Docs/Architecture.md's target graph is the manifest's, and no target declares a dependency it
# never imports.
python3 Scripts/package-graph.py --check
# Every Swift snippet of README.md and Docs/*.md is in Tests/DocSnippets, which the build compiles.
python3 Scripts/doc-snippets.py --check
python3 Scripts/embed-icons.py --check
# The service's catalogue of aria2's options is what the aria2c installed here says.
python3 Scripts/aria2-options.py --check

log=$(mktemp)
# SwiftPM leaves a TemporaryDirectory.* folder in $TMPDIR at every build or test command, and a
# test killed half-way leaves its own: the run gets a temporary directory of its own, removed at
# the end. (The tests remove what they make.)
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/peregrine-run.XXXXXX")
chmod 1777 "$run_tmp"   # as /tmp: the PostgreSQL the tests start runs as nobody
trap 'rm -f "$log"; rm -rf "$run_tmp"' EXIT
export TMPDIR="$run_tmp"
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^/.*/(Modules|Tests|Examples)/.*: warning:" "$log" | sort -u | grep .; then
    echo "error: the build has warnings in Peregrine's own code (above); the project allows none." >&2
    exit 1
fi
# The suite passes whatever the machine's load: three runs in a row, each beside a busy loop on
# every core (no test may depend on how fast a thread is scheduled).
hogs=()
stop_hogs() { for hog in "${hogs[@]}"; do kill "$hog" 2>/dev/null || true; done; hogs=(); }
trap 'stop_hogs; rm -f "$log"; rm -rf "$run_tmp"' EXIT
for _ in $(seq "$(nproc)"); do (while :; do :; done) & hogs+=($!); done
for run in 1 2 3; do
    echo "== the test suite, run $run of 3, beside $(nproc) busy loops"
    swift test --skip-build
done
stop_hogs
bash Scripts/docs.sh   # the API reference: every library target's DocC catalog, without a warning

# The pick-and-mix example: the engine, persistence, the JSON store and the in-memory transport
# as a package of its own, run twice, its binary free of libcurl, OpenSSL and the image codecs.
bash Examples/PickAndMix/check.sh

# The libFuzzer harnesses (Fuzz/), a bounded run with a fixed, printed seed, plus the control
# that proves a planted bug is found. Longer runs: PEREGRINE_FUZZ_RUNS=1000000 bash Scripts/fuzz.sh
bash Scripts/fuzz.sh --runs "${PEREGRINE_FUZZ_RUNS:-30000}"

# ThreadSanitizer (Sanitizers/, a package of the thread-using suites only): the engine, facade,
# curl transport and store suites and the stress test on eight seeds, every lock one TSan sees,
# after the controls that prove a planted race and a planted lock-order inversion are reported.
# The parsers under AddressSanitizer: bash Scripts/sanitize.sh --address
bash Scripts/sanitize.sh --thread

# The Debian packages (Docs/Packaging.md): built for release, checked by lintian, installed on
# this machine, used (a download, man pages, completions, peregrined as the packaged user driven
# by aria2p), removed and purged. Needs root, as the dependency installation above.
bash Scripts/package-test.sh

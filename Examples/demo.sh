#!/usr/bin/env bash
# Peregrine's main job, end to end, on a fresh machine with no internet:
#
#   1. installs the Debian packages it needs when absent (Scripts/install-dependencies.sh:
#      libcurl4-openssl-dev, libssl-dev, nginx-light, …),
#   2. builds the `peregrine` CLI in release mode,
#   3. starts a private nginx on 127.0.0.1 at a free port serving generated files
#      (16, 64 and 256 MiB of random bytes),
#   4. downloads them with `peregrine get` (progress line visible) and compares every file's
#      SHA-256 with the served file's,
#   5. shows one failure: a URL that answers 404 must give a clear message, a non-zero exit and
#      no file,
#   6. stops nginx and exits non-zero if any check failed.
#
# Usage: bash Examples/demo.sh
# Environment: SCRATCH_PATH (build folder, default .build), KEEP=1 keeps the temp folder.
set -euo pipefail

die() { printf 'demo.sh: error: %s\n' "$*" >&2; exit 2; }
if [[ -t 1 ]]; then BOLD=$'\033[1m' GREEN=$'\033[32m' RED=$'\033[31m' PLAIN=$'\033[0m'
else BOLD= GREEN= RED= PLAIN=; fi
step() { printf '\n%s== %s%s\n' "$BOLD" "$*" "$PLAIN"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRATCH_PATH=${SCRATCH_PATH:-.build}

# ------------------------------------------------------------------ packages
step "Debian packages"
# The same installer as the test command: installs whatever of Peregrine's packages is missing.
bash "$REPO/Scripts/install-dependencies.sh" || die "installing Debian packages failed"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $NGINX ]] || die "nginx not found after installing nginx-light"

# ------------------------------------------------------------------ build
step "Building the peregrine CLI (release)"
if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then
    export PATH=/opt/swift/usr/bin:$PATH
fi
command -v swift >/dev/null || die "swift not found (expected on PATH or at /opt/swift/usr/bin)"
(cd "$REPO" && swift build -c release --product peregrine --scratch-path "$SCRATCH_PATH") \
    || die "swift build failed"
BIN_DIR=$(cd "$REPO" && swift build -c release --scratch-path "$SCRATCH_PATH" --show-bin-path)
PEREGRINE=$BIN_DIR/peregrine
[[ -x $PEREGRINE ]] || die "no binary at $PEREGRINE"
echo "built $PEREGRINE"

# ------------------------------------------------------------------ files and nginx
TMP=$(mktemp -d "${TMPDIR:-/tmp}/peregrine-demo.XXXXXX")
WWW=$TMP/www
OUT=$TMP/downloads
mkdir -p "$WWW" "$OUT" "$TMP/nginx/tmp"
NGINX_PID=
cleanup() {
    local rc=$?
    if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    if [[ ${KEEP:-0} == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "Generating files to serve"
FILES=(demo-16M.bin demo-64M.bin demo-256M.bin)
SIZES_MIB=(16 64 256)
declare -A EXPECTED
for i in "${!FILES[@]}"; do
    head -c "$((SIZES_MIB[i] * 1024 * 1024))" /dev/urandom >"$WWW/${FILES[i]}"
    EXPECTED[${FILES[i]}]=$(sha256sum "$WWW/${FILES[i]}" | cut -d' ' -f1)
    printf '  %-14s %4d MiB  sha256 %s\n' "${FILES[i]}" "${SIZES_MIB[i]}" "${EXPECTED[${FILES[i]}]}"
done

port_in_use() {
    local hex
    hex=$(printf '%04X' "$1")
    awk -v h="$hex" '$4 == "0A" { n = split($2, a, ":"); if (a[n] == h) found = 1 } END { exit !found }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

step "Starting nginx on 127.0.0.1"
# Run as root, nginx's workers would switch to "nobody", who may not reach the files: keep our user.
NGINX_USER=
[[ $EUID -eq 0 ]] && NGINX_USER="user $(id -un) $(id -gn);"
PORT=
for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 40000))
    port_in_use "$port" && continue
    cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
$NGINX_USER
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    sendfile on;
    default_type application/octet-stream;
    client_body_temp_path $TMP/nginx/tmp/client;
    proxy_temp_path $TMP/nginx/tmp/proxy;
    fastcgi_temp_path $TMP/nginx/tmp/fastcgi;
    uwsgi_temp_path $TMP/nginx/tmp/uwsgi;
    scgi_temp_path $TMP/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
        root $WWW;
        location / { }
    }
}
EOF
    : >"$TMP/nginx/error.log"
    "$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" >>"$TMP/nginx/error.log" 2>&1 &
    NGINX_PID=$!
    for _ in $(seq 1 50); do
        kill -0 "$NGINX_PID" 2>/dev/null || break
        if port_open "$port"; then PORT=$port; break; fi
        sleep 0.1
    done
    [[ -n $PORT ]] && break
    kill -TERM "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
    NGINX_PID=
    grep -q "in use" "$TMP/nginx/error.log" && continue   # lost a race for the port: try another
    cat "$TMP/nginx/error.log" >&2
    die "nginx failed to start"
done
[[ -n $PORT ]] || die "found no free port for nginx"
BASE=http://127.0.0.1:$PORT
echo "serving $WWW at $BASE"

FAILED=0
check() {  # check DESCRIPTION CONDITION-COMMAND...
    local what=$1; shift
    if "$@"; then printf '  %sOK%s    %s\n' "$GREEN" "$PLAIN" "$what"
    else printf '  %sFAIL%s  %s\n' "$RED" "$PLAIN" "$what"; FAILED=$((FAILED + 1)); fi
}

# ------------------------------------------------------------------ the main job
step "peregrine get (${#FILES[@]} files → $OUT)"
URLS=()
for f in "${FILES[@]}"; do URLS+=("$BASE/$f"); done
echo "\$ peregrine get ${URLS[*]} -o $OUT"
rc=0
"$PEREGRINE" get "${URLS[@]}" -o "$OUT" || rc=$?
echo "(exit status $rc)"

step "Checks"
check "peregrine get exited 0" test "$rc" -eq 0
for f in "${FILES[@]}"; do
    got=$( [[ -f $OUT/$f ]] && sha256sum "$OUT/$f" | cut -d' ' -f1 || echo "missing")
    check "$f sha256 matches the served file ($got)" test "$got" == "${EXPECTED[$f]}"
done

# ------------------------------------------------------------------ a failure
step "A URL that answers 404"
echo "\$ peregrine get $BASE/no-such-file.bin -o $OUT"
rc=0
"$PEREGRINE" get "$BASE/no-such-file.bin" -o "$OUT" 2>"$TMP/404.err" || rc=$?
sed 's/^/  stderr: /' "$TMP/404.err"
echo "(exit status $rc)"
check "exit status is non-zero" test "$rc" -ne 0
check "the error message names the HTTP status 404" grep -q 404 "$TMP/404.err"
no_leftovers() { ! compgen -G "$OUT/*no-such-file*" >/dev/null && ! compgen -G "$OUT/.*no-such-file*" >/dev/null; }
check "no file (not even a partial one) was left for the failed download" no_leftovers

# ------------------------------------------------------------------ verdict
step "Result"
if [[ $FAILED -eq 0 ]]; then
    echo "all checks passed"
    exit 0
fi
echo "$FAILED check(s) failed"
exit 1

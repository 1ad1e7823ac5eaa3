# Shared parts of the benchmark scripts: messages, packages, nginx on a free loopback port,
# medians. Source it after setting SCRIPT_NAME; it defines REPO and helper functions.
#
#   die MESSAGE...            print "SCRIPT_NAME: error: …" and exit 1
#   note MESSAGE...           print "==> …" to stderr
#   ensure_packages PKG...    apt-get install the Debian packages that are missing
#   ensure_swift              put the toolchain on PATH or die
#   start_nginx ROOT PROBE    serve ROOT on 127.0.0.1 at a free port (sendfile on, access_log
#                             off); waits until PROBE (a path) answers; sets NGINX_PORT; the
#                             server is stopped by stop_nginx (call it from your EXIT trap)
#   median "N N N"            the median of numbers, with three decimals
#   ratio A B                 A / B with two decimals, or n/a
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# A package that depends on this repository by path keeps its build plan, and with it the list
# of the library's files: a file added or renamed since would be missing (an unresolved name, or
# "error opening input file"). Call before building such a package: SwiftPM plans it again.
forget_build_plan() { rm -f "$1"/.build/*.yaml; }
die() { printf '%s: error: %s\n' "${SCRIPT_NAME:-benchmark}" "$*" >&2; exit 1; }
note() { printf '==> %s\n' "$*" >&2; }

as_root() {
    if [[ $EUID -eq 0 ]]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "need root to run: $* (or install the packages yourself)"; fi
}

ensure_packages() {
    local missing=() p
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    note "installing missing Debian packages: ${missing[*]}"
    as_root apt-get update -qq || die "apt-get update failed"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        || die "apt-get install ${missing[*]} failed"
}

ensure_swift() {
    if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then
        export PATH=/opt/swift/usr/bin:$PATH
    fi
    command -v swift >/dev/null || die "swift not found (expected on PATH or at /opt/swift/usr/bin)"
}

port_in_use() {  # is a socket listening on TCP port $1 (any address)?
    local hex
    hex=$(printf '%04X' "$1")
    awk -v h="$hex" '$4 == "0A" { n = split($2, a, ":"); if (a[n] == h) found = 1 } END { exit !found }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

NGINX_PID=
NGINX_DIR=
NGINX_PORT=

free_port() {  # prints a TCP port nothing listens on
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        port_in_use "$port" || { echo "$port"; return; }
    done
}

start_nginx() {
    local root=$1 probe=$2 nginx port attempt user="" i
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [[ -x $nginx ]] || die "nginx not found (Debian package nginx-light)"
    # Run as root, nginx's workers would switch to "nobody", who may not reach the files.
    [[ $EUID -eq 0 ]] && user="user $(id -un) $(id -gn);"
    NGINX_DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench-nginx.XXXXXX")
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 40000))
        port_in_use "$port" && continue
        mkdir -p "$NGINX_DIR/tmp"
        cat >"$NGINX_DIR/nginx.conf" <<CONF
daemon off;
$user
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    default_type application/octet-stream;
    client_body_temp_path $NGINX_DIR/tmp/client;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;
    ${NGINX_HTTP_EXTRA:-}
    server {
        listen 127.0.0.1:$port;
        root $root;
        location / { ${NGINX_LOCATION_EXTRA:-} }
    }
}
CONF
        "$nginx" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" >"$NGINX_DIR/stdout.log" 2>&1 &
        NGINX_PID=$!
        for i in $(seq 1 100); do
            kill -0 "$NGINX_PID" 2>/dev/null || break
            if curl -fsS -o /dev/null -r 0-0 "http://127.0.0.1:$port/$probe" 2>/dev/null; then
                NGINX_PORT=$port
                note "nginx $("$nginx" -v 2>&1 | sed 's/^nginx version: //') on 127.0.0.1:$port"
                return 0
            fi
            sleep 0.1
        done
        stop_nginx
        if grep -q "in use" "$NGINX_DIR/error.log" "$NGINX_DIR/stdout.log" 2>/dev/null; then
            : >"$NGINX_DIR/error.log"; continue   # lost a race for the port: try another
        fi
        cat "$NGINX_DIR/error.log" "$NGINX_DIR/stdout.log" >&2 2>/dev/null || true
        die "nginx failed to start or to serve /$probe (config: $NGINX_DIR/nginx.conf)"
    done
    die "found no free port for nginx"
}

stop_nginx() {
    if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    NGINX_PID=
}

median() {
    tr ' ' '\n' <<<"$1" | awk 'NF' | sort -g | awk '{a[NR]=$1} END {
        if (NR == 0) { print ""; exit }
        if (NR % 2) printf "%.3f\n", a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2] + a[NR/2+1]) / 2 }'
}

ratio() { awk -v p="$1" -v q="$2" 'BEGIN { if (p != "" && q > 0) printf "%.2f", p / q; else print "n/a" }'; }

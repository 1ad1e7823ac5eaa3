#!/usr/bin/env bash
# Builds the Debian packages (Scripts/package.sh, with lintian), installs them on this machine
# with apt-get, and checks them as a user would: the programs on PATH at their version, a
# download from a local server, every man page, the bash completion, peregrined started as the
# packaged user with the packaged configuration and driven by aria2p, systemd-analyze on the
# installed units; then removes them (state, downloads and configuration stay), purges them
# (the configuration and the generated secret go, the downloads stay), and cleans up what it
# made. Needs root (apt-get, the system user). Refuses to run where the packages are installed
# already: it would remove them.
#
# Usage: bash Scripts/package-test.sh [--no-build]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "package-test.sh: error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }
[[ $EUID -eq 0 ]] || die "run as root: it installs and removes packages"
for package in peregrine peregrined; do
    # Installed, or removed with its configuration kept: either way the test would purge it.
    if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -qv "not-installed"; then
        die "$package is installed (or its configuration is) on this machine; the test would purge it"
    fi
done
[[ -e /var/lib/peregrine || -e /etc/peregrine ]] && die "/var/lib/peregrine or /etc/peregrine exists; the test would remove it"
had_user=0
getent passwd peregrine >/dev/null && had_user=1

OUT=$(mktemp -d)
SERVED=$(mktemp -d)
SERVER_PID=
DAEMON_PID=
cleanup() {
    [[ -n $DAEMON_PID ]] && kill "$DAEMON_PID" 2>/dev/null || true
    [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null || true
    # One by one: apt-get refuses the whole call when it no longer knows one of them.
    for package in peregrined peregrine; do
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$package" >/dev/null 2>&1 || true
    done
    rm -rf "$OUT" "$SERVED" /var/lib/peregrine /etc/peregrine
    [[ $had_user == 0 ]] && getent passwd peregrine >/dev/null && deluser --quiet --system peregrine >/dev/null 2>&1 || true
    getent group peregrine >/dev/null && [[ $had_user == 0 ]] && delgroup --quiet --system peregrine >/dev/null 2>&1 || true
}
trap cleanup EXIT

build=()
[[ ${1:-} == --no-build ]] && build=(--no-build)
mapfile -t debs < <(bash "$REPO/Scripts/package.sh" --lintian --out "$OUT" "${build[@]}" | grep '\.deb$')
[[ ${#debs[@]} -eq 2 ]] || die "package.sh made ${#debs[@]} packages, not 2"
for deb in "${debs[@]}"; do
    note "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, installed $(dpkg-deb -f "$deb" Installed-Size) KiB, Depends: $(dpkg-deb -f "$deb" Depends)"
done
VERSION=$(dpkg-deb -f "${debs[0]}" Version)

note "installing the packages"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" >/dev/null || die "apt-get install failed"
[[ $(command -v peregrine) == /usr/bin/peregrine ]] || die "peregrine is not /usr/bin/peregrine"
[[ $(peregrine --version) == "$VERSION" ]] || die "peregrine --version is not $VERSION"
[[ $(peregrined --version) == "$VERSION" ]] || die "peregrined --version is not $VERSION"
peregrine-queue --help >/dev/null || die "peregrine-queue does not run"

note "a download from a local server"
head -c 300000 /dev/urandom > "$SERVED/payload.bin"
for index in 1 2 3; do head -c $((index * 5000)) /dev/urandom > "$SERVED/s$index.bin"; done
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$SERVED" && exec python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) &
SERVER_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/payload.bin" -o /dev/null && break; sleep 0.1; done
mkdir -p "$OUT/get"
peregrine get -q -d "$OUT/get" "http://127.0.0.1:$port/payload.bin" >/dev/null || die "peregrine get failed"
cmp -s "$SERVED/payload.bin" "$OUT/get/payload.bin" || die "the downloaded file differs"

note "man pages and completions"
pages=$(dpkg -L peregrine peregrined | grep '/man1/.*\.1\.gz$')
[[ $(echo "$pages" | wc -l) -ge 3 ]] || die "too few man pages: $pages"
for page in $pages; do
    text=$(MANWIDTH=80 man -l "$page" 2>/dev/null) || die "man -l $page failed"
    grep -q "SYNOPSIS\|USAGE\|NAME" <<<"$text" || die "$page shows no manual"
done
for program in peregrine peregrine-queue peregrined; do
    bash -c "source /usr/share/bash-completion/completions/$program && complete -p $program" >/dev/null \
        || die "the bash completion of $program does not load"
    [[ -s /usr/share/zsh/vendor-completions/_$program && -s /usr/share/fish/vendor_completions.d/$program.fish ]] \
        || die "no zsh or fish completion for $program"
done

note "the installed units"
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify /lib/systemd/system/peregrined.service || die "peregrined.service does not verify"
fi

note "peregrined as the user peregrine, with the packaged configuration, driven by aria2p"
[[ -s /etc/peregrine/rpc-secret && $(stat -c '%U %a' /etc/peregrine/rpc-secret) == "peregrine 600" ]] \
    || die "the generated secret is missing or readable by others"
rpc_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
setpriv --reuid=peregrine --regid=peregrine --init-groups -- /usr/bin/peregrined --conf-path /etc/peregrine/peregrined.conf --rpc-listen-port "$rpc_port" \
    > "$OUT/peregrined.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 100); do grep -q "listening on port" "$OUT/peregrined.log" && break; sleep 0.1; done
grep -q "listening on port" "$OUT/peregrined.log" || { cat "$OUT/peregrined.log" >&2; die "peregrined did not start"; }
files=()
for index in 1 2 3; do files+=(--file "s$index.bin=$(sha256sum "$SERVED/s$index.bin" | cut -d' ' -f1)"); done
python3 "$REPO/Tests/RPC/aria2p_compat.py" --port "$rpc_port" --secret "$(cat /etc/peregrine/rpc-secret)" \
    --base-url "http://127.0.0.1:$port" --big payload.bin --scenario dir "${files[@]}" \
    || { cat "$OUT/peregrined.log" >&2; die "aria2p against the packaged peregrined failed"; }
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || die "peregrined did not stop cleanly"
DAEMON_PID=
placed=$(find /var/lib/peregrine/downloads -name 's1.bin' -type f)
[[ -n $placed && $(stat -c %U "$placed") == peregrine ]] || die "no download owned by peregrine under /var/lib/peregrine"

note "remove keeps state, downloads and configuration; purge removes the configuration only"
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq peregrine peregrined >/dev/null || die "apt-get remove failed"
[[ ! -e /usr/bin/peregrined && -f $placed && -f /etc/peregrine/peregrined.conf ]] || die "remove lost something"
[[ -n $(ls -A /var/lib/peregrine/state) ]] || die "remove lost the service's state"
# peregrine has no configuration: removed, it is gone; peregrined's configuration waits for a purge.
[[ $(dpkg-query -W -f='${Status}' peregrined 2>/dev/null) == *config-files ]] || die "peregrined left no configuration"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq peregrined >/dev/null || die "apt-get purge failed"
[[ ! -e /etc/peregrine && -f $placed ]] || die "purge kept the configuration or lost the downloads"
dpkg-query -W peregrined >/dev/null 2>&1 && die "peregrined is still known to dpkg after its purge"
note "the packages install, run, drive with aria2p, remove and purge as Debian policy says"

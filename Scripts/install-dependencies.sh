#!/usr/bin/env bash
# Installs the Debian packages Peregrine builds, tests and demonstrates with, when missing.
# Usage: Scripts/install-dependencies.sh [extra packages...]
set -euo pipefail

packages=(
    libcurl4-openssl-dev # the libcurl transport (CCurl)
    libssl-dev           # OpenSSL's libcrypto (COpenSSL, hashes)
    libturbojpeg0-dev    # JPEG thumbnails (CTurboJPEG)
    libpng-dev           # PNG thumbnails and icons (CPNG)
    ffmpeg               # video thumbnails (found at run time; their tests need it)
    pkg-config           # how SwiftPM finds both
    nginx-light          # the real server of the integration tests, demo and benchmarks
    lighttpd             # Digest authentication tests
    apache2-utils        # htdigest / htpasswd for lighttpd
    openssl              # certificates made during the TLS tests
    curl                 # the peer in benchmarks
    aria2                # aria2c --enable-rpc: the reference the service's compatibility test runs against
    python3-pip          # installs aria2p, the RPC client of that test (Scripts/test.sh)
    chromium             # the browser of the dashboard's tests and benchmark (headless)
    chromium-driver      # chromedriver, which Selenium drives it through
    wrk                  # the HTTP load generator of Benchmarks/p9.sh (getGlobalStat throughput)
    postgresql           # PeregrinePostgresStorage's tests and Benchmarks/pgstore.sh: initdb, pg_ctl, postgres
                         # (run as nobody through util-linux's setpriv when the tests run as root)
    bsdutils             # script(1): the pseudo-terminal of the progress-line test
    ca-certificates
    dpkg-dev             # dpkg-deb and dpkg-shlibdeps: the Debian packages (Scripts/package.sh)
    fakeroot             # root-owned files in those packages without root
    lintian              # their check
    man-db               # man -l of the packaged pages (Scripts/package-test.sh)
    bash-completion      # the packaged completions, loaded in bash
    adduser              # the packaged service's user
    "$@"
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing Debian packages: ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

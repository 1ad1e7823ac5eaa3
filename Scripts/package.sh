#!/usr/bin/env bash
# Builds Peregrine's programs for release (static Swift runtime) and makes two Debian packages,
# without network:
#
#   peregrine_VERSION_ARCH.deb   the command line: peregrine, peregrine-queue
#   peregrined_VERSION_ARCH.deb  the download service: peregrined, its systemd units, the
#                                default configuration /etc/peregrine/peregrined.conf, the system
#                                user `peregrine` (made at installation), state and downloads
#                                under /var/lib/peregrine
#
# Each has its man pages and bash, zsh and fish completions, generated from the argument parser,
# and `Depends:` computed by dpkg-shlibdeps from what the binaries link. The packaging files
# (control templates, maintainer scripts, units, configuration) are in Packaging/
# (Docs/Packaging.md says where every installed file comes from).
#
# Usage: bash Scripts/package.sh [--out DIR] [--scratch-path PATH] [--no-build] [--lintian]
#   --out DIR           where the .deb files go (default: .build-packages/)
#   --scratch-path P    the release build's directory (default: .build-bench, shared with the
#                       benchmarks, which build the same way)
#   --no-build          package the binaries built before
#   --lintian           run lintian on the packages (fails on an error; warnings are printed)
# Prints the paths of the packages on its last lines.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$REPO/.build-packages
SCRATCH=$REPO/.build-bench
BUILD=1
LINTIAN=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) OUT=$(realpath -m "$2"); shift 2 ;;
        --scratch-path) SCRATCH=$(realpath -m "$2"); shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --lintian) LINTIAN=1; shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "package.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done

die() { echo "package.sh: error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }
for tool in dpkg-deb dpkg-shlibdeps fakeroot gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing (apt-get install dpkg-dev fakeroot)"
done
if ! command -v swift >/dev/null && [[ -x /opt/swift/usr/bin/swift ]]; then export PATH=/opt/swift/usr/bin:$PATH; fi

PRODUCTS=(peregrine peregrine-queue peregrined)
BIN=$SCRATCH/release
rm -rf "$OUT"
mkdir -p "$OUT/logs"
if [[ $BUILD == 1 ]]; then
    for product in "${PRODUCTS[@]}"; do
        note "building $product (release, static Swift runtime)"
        (cd "$REPO" && swift build -c release --static-swift-stdlib --product "$product" --scratch-path "$SCRATCH") \
            > "$OUT/logs/$product.log" 2>&1 || { tail -30 "$OUT/logs/$product.log" >&2; die "building $product failed"; }
    done
    # The manual page generator of swift-argument-parser (its GenerateManual plugin's tool).
    (cd "$REPO" && swift build --product generate-manual --scratch-path "$SCRATCH") \
        > "$OUT/logs/generate-manual.log" 2>&1 || die "building generate-manual failed"
fi
for product in "${PRODUCTS[@]}"; do [[ -x $BIN/$product ]] || die "no $BIN/$product: build first"; done
MANUAL=$SCRATCH/debug/generate-manual
[[ -x $MANUAL ]] || die "no $MANUAL: build first"

# The version the programs report (`peregrine --version`), as Debian writes it.
VERSION=$("$BIN/peregrine" --version)
[[ $VERSION =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "'$VERSION' is no Debian version"
ARCH=$(dpkg --print-architecture)
DATE=$(date -u -R -d "@$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)")
PACKAGING=$REPO/Packaging

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# stage PACKAGE: the tree every package has (documentation, copyright, changelog).
stage() {
    local root=$WORK/$1
    install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/doc/$1" "$root/usr/share/man/man1" \
        "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
        "$root/usr/share/fish/vendor_completions.d"
    install -m 0644 "$PACKAGING/debian/copyright" "$root/usr/share/doc/$1/copyright"
    # A native package (no Debian revision): its changelog is changelog.gz.
    sed -e "s/@PACKAGE@/$1/g" -e "s/@VERSION@/$VERSION/g" -e "s/@DATE@/$DATE/g" \
        "$PACKAGING/debian/changelog.in" | gzip -9n > "$root/usr/share/doc/$1/changelog.gz"
    chmod 0644 "$root/usr/share/doc/$1/changelog.gz"
}

# program PACKAGE PROGRAM: the binary, its man pages and its completions.
program() {
    local root=$WORK/$1 name=$2 pages
    install -m 0755 "$BIN/$name" "$root/usr/bin/$name"
    # No symbol table: the Swift runtime needs its metadata sections, not the symbols.
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$name"
    pages=$WORK/man-$name
    mkdir -p "$pages"
    "$MANUAL" "$BIN/$name" --multi-page --date "$(date -u -d "$DATE" +%Y-%m-%d)" --output-directory "$pages" \
        || die "no manual for $name"
    python3 "$PACKAGING/debian/fix-manual.py" "$pages"/*.1
    for page in "$pages"/*.1; do gzip -9n < "$page" > "$root/usr/share/man/man1/$(basename "$page").gz"; done
    chmod 0644 "$root"/usr/share/man/man1/*.gz
    # bash-completion sources the file: no interpreter line.
    "$BIN/$name" --generate-completion-script bash | sed '1{/^#!/d}' > "$root/usr/share/bash-completion/completions/$name"
    "$BIN/$name" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_$name"
    "$BIN/$name" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/$name.fish"
    chmod 0644 "$root/usr/share/bash-completion/completions/$name" "$root/usr/share/zsh/vendor-completions/_$name" \
        "$root/usr/share/fish/vendor_completions.d/$name.fish"
}

# control PACKAGE: DEBIAN/control from its template, with Depends from the binaries' libraries.
control() {
    local root=$WORK/$1 depends extra size
    mkdir -p "$WORK/shlibs/debian"
    touch "$WORK/shlibs/debian/control"
    depends=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O "$root"/usr/bin/* 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
    [[ -n $depends ]] || die "dpkg-shlibdeps found no libraries for $1"
    extra=$(sed -n 's/^Extra-Depends: //p' "$PACKAGING/debian/$1.control.in")
    [[ -n $extra ]] && depends="$depends, $extra"
    size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
    sed -e "/^Extra-Depends: /d" -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@DEPENDS@/$depends/" \
        -e "s/@SIZE@/$size/" "$PACKAGING/debian/$1.control.in" > "$root/DEBIAN/control"
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | sort | xargs md5sum) \
        > "$root/DEBIAN/md5sums"
}

note "packaging peregrine $VERSION ($ARCH)"
stage peregrine
program peregrine peregrine
program peregrine peregrine-queue
control peregrine

note "packaging peregrined $VERSION ($ARCH)"
stage peregrined
program peregrined peregrined
root=$WORK/peregrined
install -d -m 0755 "$root/lib/systemd/system" "$root/etc/peregrine" "$root/usr/share/doc/peregrined/examples"
install -m 0644 "$PACKAGING/systemd/peregrined.service" "$PACKAGING/systemd/peregrine-fleet@.service" \
    "$root/lib/systemd/system/"
install -m 0644 "$PACKAGING/etc/peregrined.conf" "$root/etc/peregrine/peregrined.conf"
install -m 0644 "$PACKAGING/systemd/fleet.env.example" "$root/usr/share/doc/peregrined/examples/fleet.env.example"
for script in postinst postrm; do install -m 0755 "$PACKAGING/debian/peregrined.$script" "$root/DEBIAN/$script"; done
install -m 0644 "$PACKAGING/debian/peregrined.conffiles" "$root/DEBIAN/conffiles"
control peregrined

for package in peregrine peregrined; do
    fakeroot dpkg-deb --build -Zxz "$WORK/$package" "$OUT/${package}_${VERSION}_${ARCH}.deb" >/dev/null \
        || die "dpkg-deb failed for $package"
done
if [[ $LINTIAN == 1 ]]; then
    command -v lintian >/dev/null || die "lintian is missing (apt-get install lintian)"
    # Each tag suppressed is explained in Docs/Packaging.md.
    lintian --fail-on error --suppress-tags-from-file "$PACKAGING/debian/lintian-suppressed" \
        "$OUT"/*.deb >&2 || die "lintian found errors"
fi
ls -1 "$OUT"/*.deb

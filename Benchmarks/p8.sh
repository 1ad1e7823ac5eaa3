#!/usr/bin/env bash
# P8 (shared/BENCHMARKS.md): 100 JPEGs of 4000 × 3000 to 128-pixel-high thumbnails.
#
# Contenders, run in turn in every round (A B C, A B C, …) after one warm-up round:
#   A  Peregrine: Benchmarks/ThumbnailBenchmark (release), ImageThumbnailProcessor one image after
#      another — read, TurboJPEG DCT-scaled decode, area averaging, PNG, write. Timed per image.
#   B  vipsthumbnail (libvips-tools) over all images in one process: --size x128, PNG output.
#   C  ImageMagick `convert IN -thumbnail x128 OUT.png`, one process per image, on the first
#      MAGICK_COUNT images (it is slow; its per-image figure is comparable all the same).
# Then the memory-cache hit latency of Thumbnailer.requestThumbnail.
#
# Prints a Markdown table with the date, the machine and the command, and a verdict per target:
# A's median per image ≤ 1.5 × B's per-image time, A faster than C, a cache hit ≤ 10 µs.
#
# Usage: Benchmarks/p8.sh            (ROUNDS=5 COUNT=100 MAGICK_COUNT=20 HEIGHT=128 by default)
# Needs: swift, libturbojpeg0-dev, libpng-dev, libvips-tools; imagemagick (optional, column C).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-100}
MAGICK_COUNT=${MAGICK_COUNT:-20}
HEIGHT=${HEIGHT:-128}
WORK=Benchmarks/.work/p8
IMAGES=$WORK/images
PACKAGE=Benchmarks/ThumbnailBenchmark

command -v vipsthumbnail >/dev/null || {
    echo "p8: vipsthumbnail is missing: apt-get install libvips-tools" >&2
    exit 1
}
MAGICK=""
if command -v convert >/dev/null && convert -version 2>/dev/null | grep -q ImageMagick; then MAGICK=convert; fi

echo "p8: building $PACKAGE (release)…" >&2
swift build -c release --package-path "$PACKAGE" >&2
BIN="$(swift build -c release --package-path "$PACKAGE" --show-bin-path)/thumbnail-benchmark"

if [ ! -f "$IMAGES/.complete-$COUNT" ]; then
    echo "p8: generating $COUNT JPEGs of 4000 × 3000…" >&2
    rm -rf "$IMAGES"
    "$BIN" generate "$IMAGES" "$COUNT" 4000 3000 >&2
    touch "$IMAGES/.complete-$COUNT"
fi
mapfile -t FILES < <(find "$IMAGES" -name '*.jpg' | sort)
MAGICK_FILES=("${FILES[@]:0:$MAGICK_COUNT}")

now() { date +%s%N; }

run_peregrine() { # prints "median_ms mean_ms"
    rm -rf "$WORK/out-a" && mkdir -p "$WORK/out-a"
    "$BIN" run "$IMAGES" "$WORK/out-a" "$HEIGHT" | sed -E 's/median_ms=([0-9.]+) mean_ms=([0-9.]+).*/\1 \2/'
}

run_vips() { # prints ms per image
    rm -rf "$WORK/out-b" && mkdir -p "$WORK/out-b"
    local start end
    start=$(now)
    vipsthumbnail --size "x$HEIGHT" -o "$PWD/$WORK/out-b/%s.png" "${FILES[@]}"
    end=$(now)
    awk -v ns=$((end - start)) -v n=${#FILES[@]} 'BEGIN { printf "%.3f\n", ns / 1e6 / n }'
}

run_magick() { # prints ms per image
    rm -rf "$WORK/out-c" && mkdir -p "$WORK/out-c"
    local start end file
    start=$(now)
    for file in "${MAGICK_FILES[@]}"; do
        "$MAGICK" "$file" -thumbnail "x$HEIGHT" "$WORK/out-c/$(basename "$file" .jpg).png"
    done
    end=$(now)
    awk -v ns=$((end - start)) -v n=${#MAGICK_FILES[@]} 'BEGIN { printf "%.3f\n", ns / 1e6 / n }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "p8: warm-up round…" >&2
run_peregrine >/dev/null
run_vips >/dev/null
if [ -n "$MAGICK" ]; then run_magick >/dev/null; fi

A_MEDIAN=() A_MEAN=() B=() C=()
for round in $(seq 1 "$ROUNDS"); do
    read -r median mean < <(run_peregrine)
    A_MEDIAN+=("$median")
    A_MEAN+=("$mean")
    B+=("$(run_vips)")
    if [ -n "$MAGICK" ]; then C+=("$(run_magick)"); fi
    echo "p8: round $round: peregrine median ${median} ms (mean ${mean} ms), vipsthumbnail ${B[-1]} ms${MAGICK:+, convert ${C[-1]} ms}" >&2
done
HIT_NS=$("$BIN" cache-hit "$IMAGES" "$HEIGHT" | sed -E 's/hit_ns=//')

a_median=$(printf '%s\n' "${A_MEDIAN[@]}" | median)
a_mean=$(printf '%s\n' "${A_MEAN[@]}" | median)
b=$(printf '%s\n' "${B[@]}" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
echo
echo "### P8 — $COUNT JPEGs 4000 × 3000 → thumbnails $HEIGHT px high"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($cpu), $(uname -sr), $(vipsthumbnail --version)${MAGICK:+, $($MAGICK -version | head -1 | sed 's/Version: //; s/ https.*//')}."
echo "Command: \`ROUNDS=$ROUNDS COUNT=$COUNT MAGICK_COUNT=$MAGICK_COUNT Benchmarks/p8.sh\` — medians of $ROUNDS rounds after a warm-up, contenders alternating in each round."
echo
echo "| contender | time per image | ratio to vipsthumbnail |"
echo "|---|---|---|"
echo "| Peregrine \`ImageThumbnailProcessor\` (median per image) | ${a_median} ms | $(ratio "$a_median" "$b") |"
echo "| Peregrine (mean per image over the batch) | ${a_mean} ms | $(ratio "$a_mean" "$b") |"
echo "| \`vipsthumbnail --size x$HEIGHT\` (one process, mean per image) | ${b} ms | 1.00 |"
if [ -n "$MAGICK" ]; then
    c=$(printf '%s\n' "${C[@]}" | median)
    echo "| ImageMagick \`convert -thumbnail x$HEIGHT\` (per image, first $MAGICK_COUNT images) | ${c} ms | $(ratio "$c" "$b") |"
fi
echo "| Peregrine memory-cache hit (\`requestThumbnail\`) | ${HIT_NS} ns | |"
echo
verdict=$(awk -v a="$a_median" -v b="$b" 'BEGIN { print (a <= 1.5 * b) ? "met" : "missed" }')
echo "Target (median per image ≤ 1.5 × vipsthumbnail): **$verdict**."
if [ -n "$MAGICK" ]; then
    verdict=$(awk -v a="$a_median" -v c="$c" 'BEGIN { print (a < c) ? "met" : "missed" }')
    echo "Target (faster than ImageMagick \`convert -thumbnail\`): **$verdict**."
fi
verdict=$(awk -v h="$HIT_NS" 'BEGIN { print (h <= 10000) ? "met" : "missed" }')
echo "Target (memory-cache hit ≤ 10 µs): **$verdict**."

#!/usr/bin/env bash
# Builds the pick-and-mix example, runs it twice on one state directory (the second run must find
# every task finished and add none), and checks with ldd that the binary links none of the C
# libraries of the targets it did not pick; the same for the manager's lists from PeregrineQueue
# (listed-queue), and for the facade built without the Thumbnails trait (no libjpeg-turbo, no
# libpng).
set -euo pipefail
cd "$(dirname "$0")"

swift build --product pick-and-mix 2>&1 | tail -1
binary="$(swift build --show-bin-path)/pick-and-mix"
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT

first=$("$binary" "$state")
echo "$first"
grep -qx "added 3 task(s)" <<<"$first" || { echo "error: the first run did not add 3 tasks" >&2; exit 1; }
[ "$(grep -c ' finished$' <<<"$first")" = 3 ] || { echo "error: the first run did not finish 3 tasks" >&2; exit 1; }

second=$("$binary" "$state")
echo "$second"
grep -qx "restored 3 task(s)" <<<"$second" || { echo "error: the second run did not restore 3 tasks" >&2; exit 1; }
grep -qx "added 0 task(s)" <<<"$second" || { echo "error: the second run downloaded again" >&2; exit 1; }
[ "$(grep -c ' finished$' <<<"$second")" = 3 ] || { echo "error: the second run lost a finished task" >&2; exit 1; }
for file in a.bin:300000 b.bin:70000 c.bin:1048576; do
    size=$(stat -c %s "$state/downloads/${file%%:*}")
    [ "$size" = "${file##*:}" ] || { echo "error: ${file%%:*} has $size bytes, not ${file##*:}" >&2; exit 1; }
done

libraries=$(ldd "$binary")
if grep -Ei "libcurl|libcrypto|libssl|libturbojpeg|libjpeg|libpng" <<<"$libraries"; then
    echo "error: pick-and-mix links a C library of a target it did not pick (above)" >&2
    exit 1
fi
echo "pick-and-mix: links $(grep -c '=>' <<<"$libraries") shared libraries, none of libcurl, OpenSSL, libjpeg-turbo, libpng"

# The download manager's lists from PeregrineQueue on the same parts: the second run finds the
# sorted list and the trash in the store, downloads nothing, and the binary links no C library
# of a target it did not pick.
swift build --product listed-queue 2>&1 | tail -1
listed="$(swift build --show-bin-path)/listed-queue"
listed_state=$(mktemp -d)
trap 'rm -rf "$state" "$listed_state"' EXIT
first=$("$listed" "$listed_state")
echo "$first"
grep -qx "downloaded 3 file(s)" <<<"$first" || { echo "error: listed-queue did not download 3 files" >&2; exit 1; }
expected=$'section Sorted by File Size: small large\ntrash: medium'
[ "$(grep -E '^(section|trash)' <<<"$first")" = "$expected" ] || { echo "error: listed-queue's list is not the sorted one with medium in the trash" >&2; exit 1; }
second=$("$listed" "$listed_state")
echo "$second"
grep -qx "restored 3 task(s)" <<<"$second" || { echo "error: listed-queue's second run did not restore 3 tasks" >&2; exit 1; }
grep -q "^downloaded" <<<"$second" && { echo "error: listed-queue's second run downloaded again" >&2; exit 1; }
[ "$(grep -E '^(section|trash)' <<<"$second")" = "$expected" ] || { echo "error: listed-queue's second run lost its list or trash" >&2; exit 1; }
libraries=$(ldd "$listed")
if grep -Ei "libcurl|libcrypto|libssl|libturbojpeg|libjpeg|libpng" <<<"$libraries"; then
    echo "error: listed-queue links a C library of a target it did not pick (above)" >&2
    exit 1
fi
echo "listed-queue: links $(grep -c '=>' <<<"$libraries") shared libraries, none of libcurl, OpenSSL, libjpeg-turbo, libpng"

# The facade without the Thumbnails trait: it downloads, a second run fetches nothing, and the
# binary links no libjpeg-turbo or libpng.
swift build --product facade-without-thumbnails 2>&1 | tail -1
facade="$(swift build --show-bin-path)/facade-without-thumbnails"
facade_state=$(mktemp -d)
trap 'rm -rf "$state" "$listed_state" "$facade_state"' EXIT
first=$("$facade" "$facade_state")
echo "$first"
grep -qx "requests 2" <<<"$first" || { echo "error: the facade's first run did not fetch 2 files" >&2; exit 1; }
grep -q "photo.jpg at photo.jpg, kind Image" <<<"$first" || { echo "error: the facade did not classify photo.jpg" >&2; exit 1; }
second=$("$facade" "$facade_state")
grep -qx "requests 0" <<<"$second" || { echo "error: the facade's second run fetched again" >&2; exit 1; }
grep -c " at " <<<"$second" | grep -qx 2 || { echo "error: the facade's second run lost a file" >&2; exit 1; }
libraries=$(ldd "$facade")
if grep -Ei "libturbojpeg|libjpeg|libpng" <<<"$libraries"; then
    echo "error: the facade without the Thumbnails trait links libjpeg-turbo or libpng (above)" >&2
    exit 1
fi
echo "facade-without-thumbnails: links $(grep -c '=>' <<<"$libraries") shared libraries, neither libjpeg-turbo nor libpng"

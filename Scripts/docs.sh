#!/usr/bin/env bash
# Builds the DocC documentation of every library product (swift-docc-plugin's
# `generate-documentation`, one archive per target) and fails when DocC or the build prints a
# warning: a link that does not resolve, a parameter documented under the wrong name, an
# ambiguous overload. The archives go to a temporary directory, removed on exit; nothing is
# written into the repository but SwiftPM's own `.build`.
#
#   bash Scripts/docs.sh                 check every library target
#   bash Scripts/docs.sh PeregrineCore   check some targets only
#   PEREGRINE_DOCS_OUTPUT=DIR bash Scripts/docs.sh   keep the archives in DIR
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    # The targets of the library products, read from the manifest.
    mapfile -t targets < <(swift package dump-package | python3 -c '
import json, sys
package = json.load(sys.stdin)
seen = []
for product in package["products"]:
    if "library" in product["type"]:
        for target in product["targets"]:
            if target not in seen:
                seen.append(target)
print("\n".join(seen))
')
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
output=${PEREGRINE_DOCS_OUTPUT:-$work/archives}
log=$work/docc.log

arguments=()
for target in "${targets[@]}"; do arguments+=(--target "$target"); done

echo "Generating documentation for ${#targets[@]} targets: ${targets[*]}"
start=$SECONDS
# Indexing data is for Xcode's navigator; nobody reads it here, and it costs time.
if ! swift package --allow-writing-to-directory "$output" generate-documentation "${arguments[@]}" \
    --output-path "$output" --disable-indexing >"$log" 2>&1; then
    cat "$log" >&2
    echo "error: generate-documentation failed (above)." >&2
    exit 1
fi

# Every warning but SwiftPM's notes about other packages' files (`warning: 'swift-…': found 1
# file(s) which are unhandled`), which are theirs to fix, not ours.
if grep -E "warning:" "$log" | grep -vE "warning: '[^']+': found [0-9]+ file\(s\) which are unhandled" | grep -q .; then
    grep -E -A8 "warning:" "$log" | grep -vE "found [0-9]+ file\(s\) which are unhandled|/\.build/checkouts/" >&2
    count=$(grep -E "warning:" "$log" | grep -vcE "which are unhandled" || true)
    echo "error: the documentation has $count warning(s) (above); the project allows none." >&2
    exit 1
fi
echo "Documentation of ${#targets[@]} targets built without warnings in $((SECONDS - start)) s."

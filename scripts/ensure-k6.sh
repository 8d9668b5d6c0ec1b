#!/usr/bin/env bash
# Makes sure a suitable k6 exists and prints its path on the last line of stdout.
# Order: $K6_BINARY, then `k6` on PATH when it is v1.x or v2.x, then the pinned build in the cache,
# built here through the Go toolchain from tools/k6/go.mod when it is missing.
# (`go install go.k6.io/k6/v2@v2.2.0` fails, see DESIGN.md; a tools module with a require builds.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(sed -n 's/^require go.k6.io\/k6\/v2 \(v[0-9.]*\)$/\1/p' "$here/tools/k6/go.mod")"
cache="${K6D_CACHE_DIR:-$HOME/.cache/k6-distributed}/k6-$version"

suitable() { "$1" version 2>/dev/null | grep -Eq '^k6 v(1|2)\.'; }

if [ -n "${K6_BINARY:-}" ]; then
  suitable "$K6_BINARY" || { echo "K6_BINARY=$K6_BINARY is not a k6 v1.x or v2.x binary" >&2; exit 1; }
  echo "$K6_BINARY"; exit 0
fi
if command -v k6 >/dev/null 2>&1 && suitable "$(command -v k6)"; then
  command -v k6; exit 0
fi
if [ -x "$cache/k6" ] && suitable "$cache/k6"; then
  echo "$cache/k6"; exit 0
fi
command -v go >/dev/null 2>&1 || { echo "k6 is not installed and there is no Go toolchain to build k6 $version; install k6 or Go" >&2; exit 1; }
echo "building k6 $version with $(go version | cut -d' ' -f3) into $cache (about a minute, once)" >&2
mkdir -p "$cache"
(cd "$here/tools/k6" && go build -trimpath -o "$cache/k6.partial" go.k6.io/k6/v2) >&2
mv "$cache/k6.partial" "$cache/k6"
"$cache/k6" version >&2
echo "$cache/k6"

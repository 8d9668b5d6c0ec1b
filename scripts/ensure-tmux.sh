#!/usr/bin/env bash
# Makes sure tmux exists for the terminal test (test/e2e/terminal-report.test.ts runs the CLI in a
# real terminal: a tmux pane) and prints its path on the last line of stdout. Installs Debian's
# package with apt-get when it is missing and this is root; otherwise says why on stderr and exits 1.
set -euo pipefail
if ! command -v tmux >/dev/null 2>&1; then
  [[ $(id -u) -eq 0 ]] || { echo "tmux is missing and installing it needs root: apt-get install tmux" >&2; exit 1; }
  command -v apt-get >/dev/null 2>&1 || { echo "tmux is missing and there is no apt-get to install it" >&2; exit 1; }
  echo "installing tmux with apt-get (once)" >&2
  apt-get update -qq >/dev/null || { echo "apt-get update failed" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null || { echo "apt-get install tmux failed" >&2; exit 1; }
fi
command -v tmux

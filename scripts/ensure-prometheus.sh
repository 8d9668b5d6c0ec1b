#!/usr/bin/env bash
# Makes sure a Prometheus server exists for the dashboard test (test/examples/grafana-dashboard.test.ts)
# and prints `prometheus=<path>` on the last line of stdout.
#   Debian's `prometheus` package (2.42 on bookworm: remote-write receiver, native histograms
#   behind --enable-feature=native-histograms), installed with apt-get when missing (as root, or
#   through password-less sudo as on GitHub's runners).
#   The package enables a system service on :9090; the test starts its own server on a free port
#   with its own data directory, so the service is stopped and disabled where systemd runs.
# PROMETHEUS=<path> uses that binary instead.
set -euo pipefail
die() { printf '[ensure-prometheus] error: %s\n' "$*" >&2; exit 1; }

if [ -n "${PROMETHEUS:-}" ]; then
  [ -x "$PROMETHEUS" ] || die "PROMETHEUS=$PROMETHEUS is not an executable"
  echo "prometheus=$PROMETHEUS"
  exit 0
fi
if ! command -v prometheus >/dev/null 2>&1; then
  # Root, or a user with password-less sudo (GitHub's runners).
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || die "prometheus is missing and installing it needs root: apt-get install prometheus"
    sudo=(sudo -n)
  fi
  echo "installing the Debian package prometheus (once)" >&2
  # No package index yet on a fresh machine: update first.
  "${sudo[@]}" apt-get update -qq >/dev/null || die "apt-get update failed"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >&2 \
    || die "apt-get install prometheus failed"
  if [ -d /run/systemd/system ]; then
    "${sudo[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  command -v prometheus >/dev/null 2>&1 || die "prometheus is still missing after installing the package"
fi
echo "prometheus=$(command -v prometheus)"

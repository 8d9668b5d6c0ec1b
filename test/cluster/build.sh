#!/usr/bin/env bash
# Builds what the test cluster needs; skips whatever is already there (idempotent).
#   - etcd from Debian (etcd-server), installed with apt-get when missing
#   - kube-apiserver, kube-controller-manager, kube-scheduler from the Go module proxy, through
#     the pinned wrapper module in test/cluster/kube (go.mod/go.sum)
#   - the node agent (test/cluster/agent), rebuilt when its sources change
# Binaries go to ${K6D_CACHE_DIR:-$HOME/.cache/k6-distributed}/kube-<version>/.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { printf '[build] %s\n' "$*"; }
die() { printf '[build] error: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "go is not installed (Go >= 1.25 is needed to build the control plane)"

KUBE_VERSION="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$HERE/kube/go.mod")"
[[ -n "$KUBE_VERSION" ]] || die "cannot read the k8s.io/kubernetes version from $HERE/kube/go.mod"
CACHE_ROOT="${K6D_CACHE_DIR:-$HOME/.cache/k6-distributed}"
BIN_DIR="$CACHE_ROOT/kube-$KUBE_VERSION"
mkdir -p "$BIN_DIR"
t0=$SECONDS

# --- etcd ---------------------------------------------------------------------------------
if command -v etcd >/dev/null; then
  say "etcd: $(command -v etcd) ($(etcd --version 2>/dev/null | head -1))"
else
  [[ $(id -u) -eq 0 ]] || die "etcd is missing and installing it needs root: apt-get install etcd-server"
  say "etcd: installing the Debian package etcd-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq etcd-server >/dev/null || die "apt-get install etcd-server failed"
  # The package enables a system etcd service on 2379; the test cluster runs its own etcd.
  if [[ -d /run/systemd/system ]]; then
    systemctl disable --now etcd >/dev/null 2>&1 || true
  fi
  command -v etcd >/dev/null || die "etcd is still missing after installing etcd-server"
  say "etcd: installed ($(etcd --version | head -1))"
fi

# --- control plane ------------------------------------------------------------------------
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler)
missing=()
for c in "${COMPONENTS[@]}"; do
  if [[ -x "$BIN_DIR/$c" ]]; then
    say "$c $KUBE_VERSION: cached at $BIN_DIR/$c"
  else
    missing+=("$c")
  fi
done
if ((${#missing[@]})); then
  minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
  pkg="k8s.io/component-base/version"
  ldflags="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  tmp="$(mktemp -d "$BIN_DIR/.build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  pkgs=()
  for c in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  say "building ${missing[*]} $KUBE_VERSION from the Go module proxy (a few minutes on 2 cores)..."
  tb=$SECONDS
  (cd "$HERE/kube" && CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}") \
    || die "building the control plane failed (see the go output above)"
  for c in "${missing[@]}"; do mv -f "$tmp/$c" "$BIN_DIR/$c"; done
  rm -rf "$tmp"
  trap - EXIT
  say "built ${missing[*]} in $((SECONDS - tb)) s"
fi

# --- node agent ---------------------------------------------------------------------------
agent_sum="$(cd "$HERE/agent" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"
if [[ -x "$BIN_DIR/k6d-agent" && "$(cat "$BIN_DIR/k6d-agent.sum" 2>/dev/null)" == "$agent_sum" ]]; then
  say "k6d-agent: cached at $BIN_DIR/k6d-agent"
else
  say "building the node agent k6d-agent"
  tb=$SECONDS
  (cd "$HERE/agent" && CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -ldflags "-s -w" -o "$BIN_DIR/k6d-agent.new" .) \
    || die "building the node agent failed"
  mv -f "$BIN_DIR/k6d-agent.new" "$BIN_DIR/k6d-agent"
  echo "$agent_sum" >"$BIN_DIR/k6d-agent.sum"
  say "built k6d-agent in $((SECONDS - tb)) s"
fi

say "done in $((SECONDS - t0)) s: binaries in $BIN_DIR"

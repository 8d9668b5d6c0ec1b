#!/usr/bin/env bash
# Starts the k6-distributed test cluster: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, and the nodes: real kubelets with one containerd each (NODE_RUNTIME=kubelet, the
# default: kubelet-nodes.sh), or the node agent k6d-agent that runs pods as local processes
# (NODE_RUNTIME=agent: many nodes on few cores).
# Waits until the API is ready, the nodes are Ready and the default service account exists.
# KCM_API_QPS sets kube-controller-manager's --kube-api-qps (burst twice that); unset, its default
# of 20 requests a second per controller holds (bench/cluster.ts measures both).
#
# Writes, in ${CLUSTER_STATE_DIR:-test/cluster/.state}:
#   kubeconfig          admin (system:masters)
#   kubeconfig-limited  user "limited-user", no RBAC bindings (for "missing RBAC" tests)
#   env                 KUBECONFIG, K6D_APISERVER, ... (source it)
#   pids                "<name> <pid>" per component
#   logs/<component>.log
# Stop with test/cluster/stop.sh. See README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${CLUSTER_STATE_DIR:-$HERE/.state}"
POD_NET="${CLUSTER_POD_NET:-10.213}"
BUDGET="${CLUSTER_START_TIMEOUT:-180}"
CLUSTER_WANT_NODES="${DEDICATED_NODES:-}${GENERAL_NODES:-}" # set when the caller asked for node counts
DEDICATED_NODES="${DEDICATED_NODES:-4}"
GENERAL_NODES="${GENERAL_NODES:-1}"
NODE_RUNTIME="${NODE_RUNTIME:-kubelet}"
[[ -z "${KCM_API_QPS:-}" || "$KCM_API_QPS" =~ ^[1-9][0-9]*$ ]] || { echo "[start] error: KCM_API_QPS must be a whole number, got '$KCM_API_QPS'" >&2; exit 1; }
[[ "$NODE_RUNTIME" == kubelet || "$NODE_RUNTIME" == agent ]] || { echo "[start] error: NODE_RUNTIME must be kubelet or agent, got '$NODE_RUNTIME'" >&2; exit 1; }
STARTING=0 # 1 once this run starts creating the state dir and processes
say() { printf '[start] %s\n' "$*"; }
die() {
  printf '[start] error: %s\n' "$*" >&2
  if ((STARTING)) && [[ -f "$STATE/pids" ]]; then
    printf '[start] component logs: %s/logs (stopping what was started; the state dir is kept)\n' "$STATE" >&2
    CLUSTER_STATE_DIR="$STATE" bash "$HERE/stop.sh" --keep-state >/dev/null 2>&1 || true
  fi
  exit 1
}

[[ $(id -u) -eq 0 ]] || die "the test cluster needs root (network namespaces, mounts)"
[[ "$POD_NET" =~ ^10\.([0-9]{1,3})$ ]] && ((BASH_REMATCH[1] <= 255)) || die "CLUSTER_POD_NET must be 10.N (0 <= N <= 255), got '$POD_NET'"
NET_N="${BASH_REMATCH[1]}"
for tool in openssl curl jq ip ss setsid; do
  command -v "$tool" >/dev/null || die "'$tool' is missing (apt-get install openssl curl jq iproute2 util-linux)"
done

# Already running?
if [[ -f "$STATE/env" && -f "$STATE/pids" ]]; then
  # shellcheck disable=SC1091
  if (source "$STATE/env" && curl -fsS --max-time 3 --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" \
      --key "$STATE/pki/admin.key" "$K6D_APISERVER/readyz" >/dev/null 2>&1); then
    have="$(source "$STATE/env" && echo "$K6D_DEDICATED_NODES $K6D_GENERAL_NODES")"
    if [[ -n "${CLUSTER_WANT_NODES:-}" && "$have" != "$DEDICATED_NODES $GENERAL_NODES" ]]; then
      die "a cluster with ${have/ / dedicated + } general nodes already runs in $STATE; stop it first to get $DEDICATED_NODES dedicated + $GENERAL_NODES general"
    fi
    say "already running (state: $STATE, nodes: ${have/ / dedicated + } general); stop it with test/cluster/stop.sh"
    exit 0
  fi
fi
if [[ -e "$STATE" ]]; then
  say "removing a stale state dir $STATE"
  CLUSTER_STATE_DIR="$STATE" CLUSTER_POD_NET="$POD_NET" bash "$HERE/stop.sh" >/dev/null
fi
if ip link show "k6br$NET_N" >/dev/null 2>&1; then
  die "pod network $POD_NET.0.0/16 is in use (bridge k6br$NET_N exists): stop that cluster (stop.sh with its CLUSTER_STATE_DIR) or set CLUSTER_POD_NET=10.N"
fi

# --- binaries -----------------------------------------------------------------------------
if [[ -z "${K6_BINARY:-}" ]] && command -v k6 >/dev/null; then K6_BINARY="$(command -v k6)"; fi
if [[ -n "${K6_BINARY:-}" ]]; then
  [[ -x "$K6_BINARY" ]] || die "K6_BINARY=$K6_BINARY is not an executable"
  K6_BINARY="$(realpath "$K6_BINARY")"
  export K6_BINARY
  say "k6 for grafana/k6 images: $K6_BINARY"
elif [[ "$NODE_RUNTIME" == kubelet ]]; then
  die "real nodes need K6_BINARY (or k6 on PATH) to build the runner image"
else
  say "warning: no K6_BINARY and no k6 on PATH: pods with grafana/k6 images will fail to start"
fi
PAUSE_IMAGE="registry.k8s.io/pause:3.10"
if [[ "$NODE_RUNTIME" == kubelet ]]; then
  # Every kubelet and containerd holds inotify instances, and each followed container log takes one
  # more: at the kernel's default of 128 per user, 16 nodes ran out and the kubelet answered a log
  # follow with "failed to create fsnotify watcher: too many open files". Real nodes each have
  # their own limit; here all the nodes share one machine's.
  if (($(sysctl -n fs.inotify.max_user_instances) < 8192)); then
    sysctl -qw fs.inotify.max_user_instances=8192 || die "could not raise fs.inotify.max_user_instances"
    say "raised fs.inotify.max_user_instances to 8192 (every node's kubelet and containerd share this machine's)"
  fi
fi
tb=$SECONDS
NODE_RUNTIME="$NODE_RUNTIME" PAUSE_IMAGE="$PAUSE_IMAGE" bash "$HERE/build.sh" | sed 's/^/  /'
((PIPESTATUS[0] == 0)) || die "build.sh failed"
build_s=$((SECONDS - tb))
KUBE_VERSION="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$HERE/kube/go.mod")"
BIN="${K6D_CACHE_DIR:-$HOME/.cache/k6-distributed}/kube-$KUBE_VERSION"
ETCD="$(command -v etcd)"

T0=$SECONDS
deadline=$((T0 + BUDGET))
left() { echo $((deadline - SECONDS)); }

STARTING=1
mkdir -p "$STATE"/{pki,logs,etcd,agent}
chmod 700 "$STATE/pki"
STATE="$(cd "$STATE" && pwd)"
: >"$STATE/pids"

# --- certificates and keys ----------------------------------------------------------------
PKI="$STATE/pki"
ossl() { openssl "$@" >/dev/null 2>&1 || die "openssl $1 failed"; }
ossl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key"
ossl req -x509 -new -key "$PKI/ca.key" -subj "/CN=k6d-test-cluster-ca" -days 3650 -out "$PKI/ca.crt"
# cert NAME SUBJECT EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
cert() {
  local name=$1 subj=$2 eku=$3 san=${4:-}
  ossl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key"
  ossl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -n "$san" ]] && echo "subjectAltName=$san"
  } >"$PKI/$name.ext"
  ossl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt"
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}
SVC_CIDR="$POD_NET.254.0/24"
GATEWAY="$POD_NET.0.1"
cert apiserver "/CN=kube-apiserver" serverAuth \
  "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$GATEWAY,IP:$POD_NET.254.1"
cert admin "/O=system:masters/CN=k6d-admin" clientAuth
cert limited "/CN=limited-user" clientAuth
cert controller-manager "/CN=system:kube-controller-manager" clientAuth
cert scheduler "/CN=system:kube-scheduler" clientAuth
cert agent "/O=system:masters/CN=k6d-node-agent" clientAuth
cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
openssl genrsa -out "$PKI/sa.key" 2048 >/dev/null 2>&1 || die "openssl genrsa failed"
ossl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"

# --- ports ----------------------------------------------------------------------------------
used_ports="$(ss -Htan | awk '{print $4}' | sed 's/.*://' | sort -u)"
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 30000))
    if ! grep -qx "$p" <<<"$used_ports"; then
      used_ports+=$'\n'"$p"
      echo "$p"
      return
    fi
  done
  die "no free TCP port found"
}
ETCD_PORT="$(free_port)"
ETCD_PEER_PORT="$(free_port)"
API_PORT="$(free_port)"
API="https://127.0.0.1:$API_PORT"

kubeconfig() { # FILE USER
  local file=$1 user=$2
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: k6d
  cluster:
    server: $API
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$PKI/$user.crt")
    client-key-data: $(base64 -w0 <"$PKI/$user.key")
contexts:
- name: k6d-$user
  context:
    cluster: k6d
    user: $user
    namespace: default
current-context: k6d-$user
EOF
  chmod 600 "$file"
}
kubeconfig "$STATE/kubeconfig" admin
kubeconfig "$STATE/kubeconfig-limited" limited
kubeconfig "$PKI/controller-manager.kubeconfig" controller-manager
kubeconfig "$PKI/scheduler.kubeconfig" scheduler
kubeconfig "$PKI/agent.kubeconfig" agent

cat >"$STATE/env" <<EOF
# k6-distributed test cluster: source this file.
export KUBECONFIG='$STATE/kubeconfig'
export K6D_LIMITED_KUBECONFIG='$STATE/kubeconfig-limited'
export K6D_APISERVER='$API'
export K6D_CA_CERT='$PKI/ca.crt'
export K6D_ADMIN_CERT='$PKI/admin.crt'
export K6D_ADMIN_KEY='$PKI/admin.key'
export CLUSTER_STATE_DIR='$STATE'
export CLUSTER_POD_NET='$POD_NET'
export K6D_POD_GATEWAY='$GATEWAY'
export K6D_DEDICATED_NODES='$DEDICATED_NODES'
export K6D_GENERAL_NODES='$GENERAL_NODES'
export K6D_NODE_RUNTIME='$NODE_RUNTIME'
EOF

# --- processes --------------------------------------------------------------------------------
# spawn NAME CMD...: runs in its own session, output to logs/NAME.log, PID to the pids file.
spawn() {
  local name=$1
  shift
  setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo "$name $!" >>"$STATE/pids"
}
alive() { # running and not a zombie
  local pid st
  pid="$(awk -v n="$1" '$1 == n {print $2}' "$STATE/pids")"
  st="$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)"
  [[ -n "$st" && "$st" != Z && "$st" != X ]]
}
# wait_for WHAT COMPONENT CMD...: polls CMD until it succeeds, COMPONENT dies, or the budget ends.
wait_for() {
  local what=$1 comp=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    alive "$comp" || die "$comp exited while waiting for $what: $(tail -n 3 "$STATE/logs/$comp.log" | tr '\n' ' ' | cut -c1-400)"
    ((SECONDS < deadline)) || die "timed out after $BUDGET s waiting for $what (logs: $STATE/logs)"
    sleep 0.3
  done
}
kcurl() { curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$@"; }

spawn etcd "$ETCD" --name k6d --data-dir "$STATE/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "k6d=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
  --quota-backend-bytes 4294967296 --snapshot-count 10000 --logger zap --log-outputs stderr
wait_for "etcd" etcd curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"
say "etcd ready on 127.0.0.1:$ETCD_PORT ($((SECONDS - T0)) s)"

spawn kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --secure-port "$API_PORT" --advertise-address "$GATEWAY" \
  --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --client-ca-file "$PKI/ca.crt" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --service-cluster-ip-range "$SVC_CIDR" \
  --authorization-mode Node,RBAC \
  --kubelet-client-certificate "$PKI/kubelet-client.crt" --kubelet-client-key "$PKI/kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP \
  --allow-privileged=true --profiling=false
wait_for "kube-apiserver /readyz" kube-apiserver kcurl "$API/readyz"
say "kube-apiserver ready on $API ($((SECONDS - T0)) s)"

spawn kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig "$PKI/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$PKI/controller-manager.kubeconfig" --authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
  --controllers '*,-nodeipam' --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --service-cluster-ip-range "$SVC_CIDR" \
  ${KCM_API_QPS:+--kube-api-qps "$KCM_API_QPS" --kube-api-burst "$((KCM_API_QPS * 2))"} \
  --bind-address 127.0.0.1 --secure-port 0 --profiling=false
spawn kube-scheduler "$BIN/kube-scheduler" \
  --kubeconfig "$PKI/scheduler.kubeconfig" \
  --authentication-kubeconfig "$PKI/scheduler.kubeconfig" --authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port 0 --profiling=false
if [[ "$NODE_RUNTIME" == kubelet ]]; then
  # shellcheck source=kubelet-nodes.sh
  source "$HERE/kubelet-nodes.sh"
  kubelet_nodes_start
  cat >>"$STATE/env" <<EOF
export K6D_REGISTRY='$REGISTRY'
export K6D_REGISTRY_USER='$REGISTRY_USER'
export K6D_REGISTRY_PASSWORD='$REGISTRY_PASSWORD'
EOF
  NODE_COMPONENT="kubelet-k6d-loadtest-1"
else
spawn k6d-agent env KUBECONFIG="$PKI/agent.kubeconfig" AGENT_STATE_DIR="$STATE/agent" \
  CLUSTER_POD_NET="$POD_NET" K6_BINARY="${K6_BINARY:-}" \
  DEDICATED_NODES="$DEDICATED_NODES" GENERAL_NODES="$GENERAL_NODES" \
  NODE_CPU="${NODE_CPU:-4}" NODE_MEMORY="${NODE_MEMORY:-8Gi}" NODE_PODS="${NODE_PODS:-110}" \
  KUBELET_PORT="${KUBELET_PORT:-10250}" KUBELET_VERSION="$KUBE_VERSION" \
  "$BIN/k6d-agent"
  NODE_COMPONENT=k6d-agent
fi

want_nodes=$((DEDICATED_NODES + GENERAL_NODES))
nodes_ready() {
  local n
  n="$(kcurl "$API/api/v1/nodes" | jq '[.items[]
      | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))
      | select(all(.spec.taints[]?; (.key | startswith("node.kubernetes.io/")) | not))] | length')"
  [[ "$n" -eq "$want_nodes" ]]
}
wait_for "$want_nodes Ready nodes" "$NODE_COMPONENT" nodes_ready
say "$want_nodes nodes Ready ($DEDICATED_NODES dedicated, $GENERAL_NODES general) ($((SECONDS - T0)) s)"
wait_for "the default service account" kube-controller-manager kcurl "$API/api/v1/namespaces/default/serviceaccounts/default"
wait_for "the kube-root-ca.crt config map" kube-controller-manager kcurl "$API/api/v1/namespaces/default/configmaps/kube-root-ca.crt"
for c in kube-scheduler "$NODE_COMPONENT"; do alive "$c" || die "$c exited: $(tail -n 3 "$STATE/logs/$c.log" | tr '\n' ' ' | cut -c1-400)"; done

say "cluster ready in $((SECONDS - T0)) s (budget $BUDGET s; build/check took $build_s s)"
say "  source $STATE/env    # KUBECONFIG=$STATE/kubeconfig, K6D_APISERVER=$API"
say "  limited user (no RBAC): $STATE/kubeconfig-limited"
if [[ "$STATE" == "$HERE/.state" ]]; then
  say "  stop: bash $HERE/stop.sh"
else
  say "  stop: CLUSTER_STATE_DIR=$STATE bash $HERE/stop.sh"
fi

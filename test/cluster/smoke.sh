#!/usr/bin/env bash
# Smoke test of the test cluster, end to end: start it, run an Indexed Job of 2 paused k6
# runners on 2 distinct dedicated nodes, drive them through the API server's pod proxy, read
# their logs, delete the Job, check nothing is left, stop the cluster. Exits non-zero on any
# failure; always stops the cluster.
#
# Needs K6_BINARY (or k6 on PATH). Uses its own state dir (SMOKE_STATE_DIR, default
# test/cluster/.state-smoke) so it does not touch a cluster started by hand.
set -euo pipefail
# It checks the stand-in agent's pod network namespaces, so it runs on agent nodes.
export NODE_RUNTIME="${NODE_RUNTIME:-agent}"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CLUSTER_STATE_DIR="${SMOKE_STATE_DIR:-$HERE/.state-smoke}"
T0=$SECONDS
step() { printf '[smoke %3ds] %s\n' $((SECONDS - T0)) "$*"; }
fail() {
  printf '[smoke %3ds] FAIL: %s\n' $((SECONDS - T0)) "$*" >&2
  exit 1
}

if [[ -z "${K6_BINARY:-}" ]]; then
  K6_BINARY="$(command -v k6 || true)"
fi
[[ -n "$K6_BINARY" && -x "$K6_BINARY" ]] || fail "set K6_BINARY to a k6 binary (or put k6 on PATH)"
export K6_BINARY

cleanup() {
  local rc=$?
  trap - EXIT
  if [[ -d "$CLUSTER_STATE_DIR/logs" ]] && ((rc != 0)); then
    mkdir -p "$HERE/.smoke-logs"
    cp -r "$CLUSTER_STATE_DIR/logs/." "$HERE/.smoke-logs/" 2>/dev/null || true
    printf '[smoke] component logs copied to %s\n' "$HERE/.smoke-logs" >&2
  fi
  bash "$HERE/stop.sh" || rc=1
  # Nothing may be left: no netns/veth of the pod network, no processes of the state dir.
  if ip netns list | grep -q "^k6d${NET_N:-213}-"; then
    printf '[smoke] FAIL: network namespaces left after stop: %s\n' "$(ip netns list | grep "^k6d${NET_N:-213}-" | tr '\n' ' ')" >&2
    rc=1
  fi
  if ip -o link show | grep -q "k6v${NET_N:-213}-\|k6br${NET_N:-213}"; then
    printf '[smoke] FAIL: links left after stop\n' >&2
    rc=1
  fi
  if pgrep -f "$CLUSTER_STATE_DIR/" >/dev/null; then
    printf '[smoke] FAIL: processes left after stop: %s\n' "$(pgrep -af "$CLUSTER_STATE_DIR/" | head -5 | tr '\n' ';')" >&2
    rc=1
  fi
  if ((rc == 0)); then
    printf '[smoke %3ds] PASS\n' $((SECONDS - T0))
  else
    printf '[smoke %3ds] FAILED\n' $((SECONDS - T0)) >&2
  fi
  exit "$rc"
}
trap cleanup EXIT

step "starting the cluster"
bash "$HERE/start.sh" | sed 's/^/  /'
# shellcheck disable=SC1091
source "$CLUSTER_STATE_DIR/env"
NET_N="${CLUSTER_POD_NET#10.}"
step "cluster up"

api() { # METHOD PATH [BODY [CONTENT_TYPE]]
  local method=$1 path=$2 body=${3:-} ctype=${4:-application/json}
  local args=(-sS --max-time 20 -X "$method" --cacert "$K6D_CA_CERT" --cert "$K6D_ADMIN_CERT" --key "$K6D_ADMIN_KEY"
    -w '\n%{http_code}')
  [[ -n "$body" ]] && args+=(-H "Content-Type: $ctype" --data-binary "$body")
  local out code
  out="$(curl "${args[@]}" "$K6D_APISERVER$path")" || return 1
  code="${out##*$'\n'}"
  out="${out%$'\n'*}"
  printf '%s' "$out"
  [[ "$code" =~ ^2 ]]
}
# until_ok TIMEOUT WHAT CMD...: retries CMD until it succeeds.
until_ok() {
  local timeout=$1 what=$2
  shift 2
  local end=$((SECONDS + timeout))
  until "$@"; do
    ((SECONDS < end)) || fail "timed out after ${timeout}s: $what"
    sleep 0.5
  done
}

NS=default
JOB=k6-smoke

step "limited user is authenticated but has no RBAC"
code="$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$K6D_CA_CERT" \
  --cert "$CLUSTER_STATE_DIR/pki/limited.crt" --key "$CLUSTER_STATE_DIR/pki/limited.key" \
  "$K6D_APISERVER/api/v1/namespaces/$NS/pods")"
[[ "$code" == 403 ]] || fail "limited-user listing pods: want HTTP 403, got $code"

step "creating the script config map and the Indexed Job"
cm="$(jq -n --arg js 'export const options = { vus: 1, iterations: 1 };
export default function () { console.log(`smoke runner ${__ENV.RUNNER_INDEX}`); }' \
  '{apiVersion:"v1", kind:"ConfigMap", metadata:{name:"k6-smoke-script"}, data:{"test.js":$js}}')"
api POST "/api/v1/namespaces/$NS/configmaps" "$cm" >/dev/null || fail "create config map"
job="$(jq -n '{
  apiVersion: "batch/v1", kind: "Job", metadata: {name: "k6-smoke"},
  spec: {
    completions: 2, parallelism: 2, completionMode: "Indexed", backoffLimit: 0,
    template: {
      metadata: {labels: {app: "k6-smoke"}},
      spec: {
        restartPolicy: "Never",
        nodeSelector: {"k6-distributed.test/pool": "loadtest"},
        tolerations: [{key: "k6-distributed.test/dedicated", operator: "Equal", value: "loadtest", effect: "NoSchedule"}],
        topologySpreadConstraints: [{maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "DoNotSchedule",
          labelSelector: {matchLabels: {app: "k6-smoke"}}}],
        volumes: [{name: "script", configMap: {name: "k6-smoke-script", items: [{key: "test.js", path: "test.js"}]}}],
        containers: [{
          name: "k6", image: "grafana/k6:2.2.0",
          command: ["k6", "run", "--paused", "--address", "0.0.0.0:6565", "--quiet", "/scripts/test.js"],
          env: [{name: "RUNNER_INDEX", valueFrom: {fieldRef: {fieldPath: "metadata.annotations['"'"'batch.kubernetes.io/job-completion-index'"'"']"}}}],
          ports: [{containerPort: 6565, name: "k6-api"}],
          volumeMounts: [{name: "script", mountPath: "/scripts", readOnly: true}]
        }]
      }
    }
  }
}')"
api POST "/apis/batch/v1/namespaces/$NS/jobs" "$job" >/dev/null || fail "create job"

pods_json() { api GET "/api/v1/namespaces/$NS/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D$JOB"; }
# Fails at once when a runner pod failed or waits on an error (bad image, bad config).
check_no_failed_pod() {
  local pj bad
  pj="$(pods_json)" || return 0
  bad="$(jq -c '[.items[] | select(.status.phase == "Failed" or
      any(.status.containerStatuses[]?; .state.waiting.reason // "" | test("Err|BackOff|Error")))
      | {pod: .metadata.name, phase: .status.phase, state: .status.containerStatuses[0].state}] | select(length > 0)' <<<"$pj")"
  if [[ -n "$bad" ]]; then
    local p log
    p="$(jq -r '.[0].pod' <<<"$bad")"
    log="$(api GET "/api/v1/namespaces/$NS/pods/$p/log?tailLines=5" 2>/dev/null | tr '\n' ' ' | cut -c1-400 || true)"
    fail "runner pod failed: $bad; log: $log"
  fi
}
two_pods_running() {
  local n
  check_no_failed_pod
  n="$(pods_json | jq '[.items[] | select(.status.phase == "Running" and .status.podIP != null)] | length')" || return 1
  [[ "$n" == 2 ]]
}
until_ok 90 "2 pods Running with a pod IP" two_pods_running
PODS_JSON="$(pods_json)"
mapfile -t PODS < <(jq -r '.items[].metadata.name' <<<"$PODS_JSON")
mapfile -t NODES < <(jq -r '.items[].spec.nodeName' <<<"$PODS_JSON" | sort -u)
step "pods: $(jq -r '.items[] | "\(.metadata.name)@\(.spec.nodeName)=\(.status.podIP)"' <<<"$PODS_JSON" | tr '\n' ' ')"
((${#NODES[@]} == 2)) || fail "want the 2 pods on 2 distinct nodes, got: ${NODES[*]}"
for n in "${NODES[@]}"; do
  [[ "$n" == k6d-loadtest-* ]] || fail "pod on node $n, which is not a dedicated load-test node"
done
for ip in $(jq -r '.items[].status.podIP' <<<"$PODS_JSON"); do
  [[ "$ip" == "$CLUSTER_POD_NET".* ]] || fail "pod IP $ip is outside $CLUSTER_POD_NET.0.0/16"
  ns="k6d${NET_N}-$(cut -d. -f3 <<<"$ip")-$(cut -d. -f4 <<<"$ip")"
  ip netns list | grep -q "^$ns\b" || fail "no network namespace $ns for pod IP $ip"
done

status_of() { api GET "/api/v1/namespaces/$NS/pods/$1:6565/proxy/v1/status"; }
paused_ready() {
  check_no_failed_pod
  [[ "$(status_of "$1" | jq -r '.data.attributes.status' 2>/dev/null)" == 4 ]]
}
for p in "${PODS[@]}"; do
  until_ok 60 "k6 REST API of $p reports status 4 (PausedBeforeRun) through the pod proxy" paused_ready "$p"
done
step "both runners report status 4 through the API server's pod proxy"

body='{"data":{"type":"status","id":"default","attributes":{"paused":false}}}'
for p in "${PODS[@]}"; do
  out="$(api PATCH "/api/v1/namespaces/$NS/pods/$p:6565/proxy/v1/status" "$body")" || fail "unpause $p: $out"
done
step "unpaused both runners"

job_done() {
  local j
  j="$(api GET "/apis/batch/v1/namespaces/$NS/jobs/$JOB")" || return 1
  if jq -e '.status.conditions[]? | select(.type == "Failed" and .status == "True")' <<<"$j" >/dev/null; then
    fail "job failed: $(jq -c '.status' <<<"$j")"
  fi
  jq -e '.status.conditions[]? | select(.type == "Complete" and .status == "True")' <<<"$j" >/dev/null
}
until_ok 90 "job complete" job_done
step "job complete"

PODS_JSON="$(pods_json)"
for p in "${PODS[@]}"; do
  pj="$(jq --arg p "$p" '.items[] | select(.metadata.name == $p)' <<<"$PODS_JSON")"
  idx="$(jq -r '.metadata.annotations["batch.kubernetes.io/job-completion-index"]' <<<"$pj")"
  phase="$(jq -r '.status.phase' <<<"$pj")"
  term="$(jq -c '.status.containerStatuses[0].state.terminated' <<<"$pj")"
  [[ "$phase" == Succeeded ]] || fail "pod $p phase $phase"
  [[ "$(jq -r '.exitCode' <<<"$term")" == 0 && "$(jq -r '.reason' <<<"$term")" == Completed ]] || fail "pod $p terminated state: $term"
  [[ "$(jq -r '.startedAt != null and .finishedAt != null' <<<"$term")" == true ]] || fail "pod $p: no startedAt/finishedAt: $term"
  log="$(api GET "/api/v1/namespaces/$NS/pods/$p/log")" || fail "read log of $p: $log"
  grep -q "smoke runner $idx" <<<"$log" || fail "log of $p (index $idx) lacks 'smoke runner $idx': $(head -c 600 <<<"$log")"
  tail1="$(api GET "/api/v1/namespaces/$NS/pods/$p/log?tailLines=1&timestamps=true")" || fail "read log tail of $p"
  [[ "$(wc -l <<<"$tail1")" == 1 && "$tail1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T ]] || fail "log of $p with tailLines=1&timestamps=true: $tail1"
done
step "pods Succeeded with exit code 0; logs through the API show each runner's index"

api DELETE "/apis/batch/v1/namespaces/$NS/jobs/$JOB" '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}' >/dev/null \
  || fail "delete job"
no_pods() { [[ "$(pods_json | jq '.items | length')" == 0 ]]; }
no_job() { ! api GET "/apis/batch/v1/namespaces/$NS/jobs/$JOB" >/dev/null 2>&1; }
until_ok 60 "pods gone after deleting the job" no_pods
until_ok 60 "job gone" no_job
step "job and pods deleted"

if ip netns list | grep -q "^k6d${NET_N}-"; then fail "network namespaces left: $(ip netns list | grep "^k6d${NET_N}-" | tr '\n' ' ')"; fi
if ip -o link show | grep -q "k6v${NET_N}-"; then fail "veths left"; fi
if pgrep -f "/scripts/test.js" >/dev/null; then fail "k6 processes left: $(pgrep -af /scripts/test.js | tr '\n' ';')"; fi
if [[ -n "$(ls -A "$CLUSTER_STATE_DIR/agent/pods" 2>/dev/null)" ]]; then fail "pod dirs left in $CLUSTER_STATE_DIR/agent/pods"; fi
step "no netns, veth, process or pod dir left"

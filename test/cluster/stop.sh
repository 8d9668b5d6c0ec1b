#!/usr/bin/env bash
# Stops the test cluster started by start.sh and removes everything it made: processes (by the
# pids file, then a sweep of processes that point at the state dir), the real nodes' kubelets,
# containers, containerds, mount namespaces and cgroups, the pods' network namespaces and veths,
# the bridge, leftover mounts, and the state dir.
# Safe to run twice, and when nothing runs.
#   --keep-state   keep the state dir (logs) after stopping
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${CLUSTER_STATE_DIR:-$HERE/.state}"
KEEP_STATE=0
[[ "${1:-}" == "--keep-state" ]] && KEEP_STATE=1
say() { printf '[stop] %s\n' "$*"; }

POD_NET="${CLUSTER_POD_NET:-10.213}"
if [[ -f "$STATE/env" ]]; then
  v="$(sed -n "s/^export CLUSTER_POD_NET='\(.*\)'$/\1/p" "$STATE/env")"
  [[ -n "$v" ]] && POD_NET="$v"
fi
[[ "$POD_NET" =~ ^10\.([0-9]{1,3})$ ]] || { say "error: bad CLUSTER_POD_NET '$POD_NET'" >&2; exit 1; }
NET_N="${BASH_REMATCH[1]}"
[[ -d "$STATE" ]] && STATE="$(cd "$STATE" && pwd)"

# Does the process point at our state dir (guards against reused PIDs)?
ours() {
  local pid=$1
  [[ -r /proc/$pid/cmdline ]] || return 1
  { tr '\0' ' ' </proc/"$pid"/cmdline | grep -qF "$STATE/"; } 2>/dev/null && return 0
  { tr '\0' '\n' </proc/"$pid"/environ | grep -qxF -e "AGENT_STATE_DIR=$STATE/agent" -e "K6D_NODE_STATE=$STATE/nodes"; } 2>/dev/null && return 0
  return 1
}
# Alive and not a zombie (an exited child waiting to be reaped by init counts as gone).
running() {
  local st
  st="$(sed 's/.*) //' /proc/"$1"/stat 2>/dev/null | cut -d' ' -f1)" || return 1
  [[ -n "$st" && "$st" != Z && "$st" != X ]]
}
wait_gone() { # TIMEOUT_S PID...
  local t=$1 p
  shift
  for _ in $(seq $((t * 10))); do
    local any=0
    for p in "$@"; do running "$p" && any=1; done
    ((any)) || return 0
    sleep 0.1
  done
  return 1
}
pid_of() { awk -v n="$1" '$1 == n {print $2}' "$STATE/pids" 2>/dev/null || true; }

# term_group TIMEOUT_S NAME_PATTERN: SIGTERM to every listed process whose name matches, SIGKILL
# after the timeout.
term_group() {
  local t=$1 pattern=$2 name p pids=()
  while read -r name p; do
    [[ "$name" == $pattern ]] || continue
    if ours "$p"; then
      kill -TERM "$p" 2>/dev/null || true
      pids+=("$p")
      stopped+=("$name")
    fi
  done <"$STATE/pids"
  if ((${#pids[@]})); then
    wait_gone "$t" "${pids[@]}" || kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
}
# Every process in the real nodes' cgroups (containers, shims' children), killed at once.
kill_node_cgroups() {
  local f p
  for f in /sys/fs/cgroup/*/k6d"$NET_N"-*/; do
    [[ -d "$f" ]] || continue
    while read -r p; do kill -KILL "$p" 2>/dev/null || true; done < <(find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null)
  done
}

stopped=()
if [[ -f "$STATE/pids" ]]; then
  # Real nodes: kubelets first (no restarts), then whatever runs in their cgroups, then the
  # containerds (their shims go in the sweep below), the mount-namespace holders, the registry.
  if grep -q '^kubelet-' "$STATE/pids"; then
    term_group 10 'kubelet-*'
    kill_node_cgroups
    term_group 10 'containerd-*'
    term_group 5 'holder-*'
    term_group 5 registry
  fi
  # The agent first, with SIGTERM: it kills the pods' processes and removes their namespaces.
  p="$(pid_of k6d-agent)"
  if [[ -n "$p" ]] && ours "$p"; then
    kill -TERM "$p" 2>/dev/null || true
    wait_gone 30 "$p" || kill -KILL "$p" 2>/dev/null || true
    stopped+=(k6d-agent)
  fi
  # Then the control plane, etcd last (the API server's shutdown needs etcd).
  for group in "kube-scheduler kube-controller-manager" kube-apiserver etcd; do
    pids=()
    for name in $group; do
      p="$(pid_of "$name")"
      if [[ -n "$p" ]] && ours "$p"; then
        kill -TERM "$p" 2>/dev/null || true
        pids+=("$p")
        stopped+=("$name")
      fi
    done
    if ((${#pids[@]})); then
      wait_gone 15 "${pids[@]}" || kill -KILL "${pids[@]}" 2>/dev/null || true
    fi
  done
fi

# Safety sweep: any process whose command line (or agent environment) points at the state dir.
swept=0
if [[ -n "$STATE" && "$STATE" != "/" ]]; then
  while read -r f; do
    p="${f#/proc/}"
    p="${p%%/*}"
    [[ "$p" == "$$" || "$p" == "$BASHPID" ]] && continue
    if running "$p" && ours "$p"; then
      kill -KILL "$p" 2>/dev/null && swept=$((swept + 1))
    fi
  done < <({ grep -lsazF "$STATE/" /proc/[0-9]*/cmdline; grep -lsxzF "AGENT_STATE_DIR=$STATE/agent" /proc/[0-9]*/environ; } 2>/dev/null || true)
fi

# The real nodes' cgroups, deepest first, once their processes are gone.
kill_node_cgroups
for _ in 1 2 3; do
  find /sys/fs/cgroup/*/k6d"$NET_N"-* -depth -type d -exec rmdir {} + 2>/dev/null || true
  compgen -G "/sys/fs/cgroup/*/k6d$NET_N-*" >/dev/null || break
  sleep 0.5
  kill_node_cgroups
done

# Pods' network namespaces (and whatever still runs in them), veths, the bridge.
netns=0
while read -r ns _; do
  [[ "$ns" == k6d"$NET_N"-* ]] || continue
  for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
  ip netns delete "$ns" 2>/dev/null || true
  netns=$((netns + 1))
done < <(ip netns list 2>/dev/null)
while read -r link; do
  ip link delete "$link" 2>/dev/null || true
done < <(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^k6v$NET_N-" || true)
# Veths the CNI bridge plugin attached to the bridge (they go with their netns, normally).
while read -r link; do
  ip link delete "$link" 2>/dev/null || true
done < <(ip -o link show master "k6br$NET_N" 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//')
ip link show "k6br$NET_N" >/dev/null 2>&1 && ip link delete "k6br$NET_N" 2>/dev/null || true

# Mounts under the state dir (there should be none in the host's namespace).
if [[ -d "$STATE" ]]; then
  awk -v s="$STATE/" 'index($2, s) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
fi

if ((KEEP_STATE == 0)); then
  rm -rf "$STATE"
fi
msg="stopped: ${stopped[*]:-nothing was running}"
((swept)) && msg+="; swept $swept stray process(es)"
((netns)) && msg+="; removed $netns leftover netns"
say "$msg"

import type { KubeConfig, V1Toleration } from '@kubernetes/client-node';
import type { Logger } from '../../log.ts';
import type { PodPatch } from './pod-patch.ts';

/**
 * The Kubernetes backend's options as the inputs build them (src/inputs/kubernetes.ts): types
 * only, a near-leaf that imports nothing of the backend but the type of a Pod patch (pod-patch.ts,
 * itself a near-leaf), so the inputs depend on it and not on the backend's code.
 */

/** When the backend removes what it created. */
export type CleanupPolicy = 'always' | 'on-success' | 'never';

/** How runners are spread over nodes. */
export type Spread = 'one-per-node' | 'even' | 'none';

/** Placement of runner Pods on nodes. */
export interface Placement {
  /** Pod `spec.nodeSelector`. */
  nodeSelector?: Record<string, string>;
  /** Pod `spec.tolerations`. */
  tolerations?: V1Toleration[];
  /**
   * `one-per-node`: required Pod anti-affinity on `kubernetes.io/hostname` (no two runners of the
   * run share a node); `even`: a topology spread constraint with maxSkew 1 over hostnames; `none`.
   */
  spread: Spread;
}

/** Container resources as Kubernetes quantities (`cpu: "2"`, `memory: "4Gi"`). */
export interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** An env var of the runners: a value, or a key of a Secret. */
export type RunnerEnv = { name: string; value: string } | { name: string; secret: string; key: string };

/** Pod spec options users set for their cluster's rules (the k6-operator's `runner` block has each). */
export interface PodOptions {
  /** Pod `spec.imagePullSecrets`: names of `kubernetes.io/dockerconfigjson` Secrets in the namespace. */
  imagePullSecrets?: string[];
  /**
   * Pod `spec.serviceAccountName` (e.g. one bound to a cloud identity). Its token is still not
   * mounted (`automountServiceAccountToken: false`): k6 does not talk to the Kubernetes API.
   */
  serviceAccountName?: string;
  /** Pod annotations, e.g. `sidecar.istio.io/inject: "false"` to keep a service mesh out. */
  podAnnotations?: Record<string, string>;
  /** Pod `spec.priorityClassName`. */
  priorityClassName?: string;
  /**
   * Image of each runner Pod's interval receiver (a container running `node`, receiver/main.ts)
   * that records latency per interval; undefined: no receiver, the timeline keeps its since-start
   * band.
   */
  receiverImage?: string;
  /** Resources of the barrier container (default: `BARRIER_RESOURCES` of manifests.ts). */
  barrierResources?: Resources;
  /**
   * A strategic merge patch of every runner Pod (volumes, `envFrom`, affinity, init containers, …),
   * checked by pod-patch.ts `checkPodPatch` and merged last by the manifests.
   */
  podPatch?: PodPatch;
}

/** What the run's objects are made of: everything the manifests need but the plan. */
export interface RunObjectOptions extends PodOptions {
  namespace: string;
  /** A short unique id (lowercase letters and digits): names and labels carry it. */
  runId: string;
  /**
   * Runner container image, e.g. `grafana/k6:2.2.0`, or an xk6 build: it needs `k6` on its PATH
   * and nothing else (no shell).
   */
  image: string;
  placement: Placement;
  /** Resources of the k6 container (the barrier container's are `barrierResources`). */
  resources?: Resources;
  env?: RunnerEnv[];
  /** Extra labels for every object (ConfigMap, Pods). */
  labels?: Record<string, string>;
  /**
   * Pod sysctls of every runner (`spec.securityContext.sysctls`), e.g.
   * `net.ipv4.ip_local_port_range=1024 65535` for large runs; Kubernetes allows the safe ones
   * everywhere, others only where the kubelet does
   * (https://kubernetes.io/docs/tasks/administer-cluster/sysctl-cluster/).
   */
  sysctls?: Array<{ name: string; value: string }>;
  /**
   * How long each runner Pod may live, in s: the kubelet ends it this many seconds after it
   * started (`activeDeadlineSeconds`). The backend sets it per run from the run's lifetime
   * (src/run/launch.ts `runLifetimeS`: the test's totalDuration, grace, start timeout, setup,
   * teardown and stop timeouts); this value is the fallback for a launch that gives none.
   */
  activeDeadlineSeconds: number;
  /**
   * How the user names the `secret-env` input, for the warning about `-e` values (`--secret-env` on
   * the CLI); default `secret-env`, the actions' input.
   */
  secretEnvInput?: string;
  /** How the user names the `pod-patch` input, for its errors and warning (`--pod-patch` on the CLI). */
  podPatchInput?: string;
}

/** Options of the Kubernetes backend (backend.ts `KubernetesBackend`). */
export interface KubernetesBackendOptions extends RunObjectOptions {
  kc: KubeConfig;
  /**
   * `always`: delete everything at the end; `on-success`: keep the Pods and ConfigMap for
   * inspection when a runner failed; `never`: keep them. Runners still running are stopped in
   * every case.
   */
  cleanup: CleanupPolicy;
  /** How long a runner Pod may stay Unschedulable before the run fails, in s. */
  scheduleTimeoutS: number;
  log: Logger;
}

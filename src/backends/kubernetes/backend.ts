import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { BatchV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ConfigurationError } from '../../errors.ts';
import { runnerCompleted } from '../../k6/exit-codes.ts';
import { K6_STATUS, type K6Status, type RunnerApi, type RunnerRequest, runnerApi } from '../../k6/rest.ts';
import type { Logger } from '../../log.ts';
import type { RunPlan } from '../../run/plan.ts';
import type { Backend, Runner, RunnerExit } from '../backend.ts';
import { apiError, apiErrorMessage } from './api-errors.ts';
import {
  archiveConfigMap,
  CONTAINERS,
  extractSummary,
  LABELS,
  MAX_ARCHIVE_BYTES,
  type Placement,
  type PodOptions,
  REST_PORT,
  type Resources,
  type RunnerEnv,
  runName,
  runnerJob,
} from './manifests.ts';
import { checkPermissions } from './permissions.ts';
import { type PodState, RunnerPods } from './pods.ts';

/** When the backend removes what it created. */
export type CleanupPolicy = 'always' | 'on-success' | 'never';

/** Options of {@link KubernetesBackend}. */
export interface KubernetesBackendOptions extends PodOptions {
  kc: KubeConfig;
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
  labels?: Record<string, string>;
  /** Pod sysctls of every runner. */
  sysctls?: Array<{ name: string; value: string }>;
  /**
   * `always`: delete everything at the end; `on-success`: keep the Jobs, Pods and ConfigMap for
   * inspection when a runner failed; `never`: keep them. Runners still running are stopped in
   * every case.
   */
  cleanup: CleanupPolicy;
  /** How long a runner Pod may stay Unschedulable before the run fails, in s. */
  scheduleTimeoutS: number;
  /** Safety net on each Job (`activeDeadlineSeconds`), in s. */
  activeDeadlineSeconds: number;
  log: Logger;
}

/** How many API requests of one kind the backend sends at once (creating Jobs, deleting Pods). */
const API_CONCURRENCY = 16;

/** Runs `fn` over `items`, at most `limit` at a time. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A status the orchestrator's barrier reads as "not yet" (k6 is still initialising VUs). */
const INITIALISING: K6Status = {
  status: K6_STATUS.InitVUs,
  paused: true,
  running: false,
  stopped: false,
  vus: 0,
  vusMax: 0,
  tainted: false,
};

/**
 * The Kubernetes backend: one Job per runner on the user's cluster, the archive in a ConfigMap,
 * readiness and failures from a Pod watch, the k6 REST API through the API server's pod proxy
 * (`/api/v1/namespaces/NS/pods/NAME:6565/proxy/v1/status`, RBAC `pods/proxy`).
 *
 * The barrier costs the API server nothing per poll: a runner's `api.status()` is answered from the
 * Pod watch (its barrier container ends once k6 is at status 4, see manifests.ts) until the watch
 * says every runner is ready; then one real `GET /v1/status` per runner, all at once, through the
 * pod proxy confirms it and opens the warm connection its start `PATCH` goes out on. A runner whose barrier container failed is polled
 * through the proxy as before.
 */
export class KubernetesBackend implements Backend {
  readonly name = 'kubernetes' as const;
  private readonly o: KubernetesBackendOptions;
  private readonly core: CoreV1Api;
  private readonly batch: BatchV1Api;
  private pods: RunnerPods | undefined;
  private created = false;
  private runnerCount = 0;
  private readonly exits = new Map<number, RunnerExit>();
  /** Logs of disrupted runners, read to the end as their Pods go away. */
  private readonly savedLogs = new Map<number, Promise<string>>();
  private cleanedUp = false;
  /**
   * Keeps the pod-proxy connections to the API server open between the barrier's confirmation and
   * the start (Node's default agent closes idle sockets after 5 s), so that every start `PATCH` goes
   * out on a warm TLS connection and the start skew is not a spread of handshakes.
   */
  private readonly agent = new https.Agent({ keepAlive: true, timeout: 120_000, maxSockets: Infinity });

  constructor(options: KubernetesBackendOptions) {
    this.o = options;
    this.core = options.kc.makeApiClient(CoreV1Api);
    this.batch = options.kc.makeApiClient(BatchV1Api);
  }

  /** Checks the credentials' permissions before anything is created. */
  async preflight(): Promise<void> {
    await checkPermissions(this.o.kc, this.o.namespace);
  }

  async launch(plan: RunPlan, archivePath: string): Promise<Runner[]> {
    const { namespace, runId, log } = this.o;
    const archive = await readFile(archivePath);
    if (archive.length > MAX_ARCHIVE_BYTES) {
      throw new ConfigurationError(
        `script: its k6 archive is ${(archive.length / 1048576).toFixed(2)} MiB, more than a ConfigMap holds (1 MiB); ` +
          'move large data files out of the script (load them from a URL in setup()), or build a runner image that contains them',
      );
    }
    this.runnerCount = plan.runners.length;
    const spec = { ...this.o, plan };
    this.pods = new RunnerPods(this.o.kc, namespace, runId, log);
    this.created = true;
    let configMap: Awaited<ReturnType<CoreV1Api['createNamespacedConfigMap']>>;
    try {
      configMap = await this.core.createNamespacedConfigMap({
        namespace,
        body: archiveConfigMap(spec, archive),
      });
      const owner = { name: runName(runId), uid: configMap.metadata!.uid! };
      await eachLimited(plan.runners, API_CONCURRENCY, async (runner) => {
        await this.batch.createNamespacedJob({ namespace, body: runnerJob(spec, runner, owner) });
      });
      await this.pods.start();
    } catch (error) {
      throw apiError(error, `creating the runners in namespace ${namespace}`);
    }
    log.info(
      `created ConfigMap ${runName(runId)} and ${plan.runners.length} runner Jobs in namespace ${namespace}`,
    );
    return plan.runners.map((r) => this.runner(r.index));
  }

  private runner(index: number): Runner {
    const pods = this.pods!;
    const exited = new Promise<RunnerExit>((resolve) => {
      const unschedulableSince = { at: 0 };
      const check = () => {
        const state = pods.state(index);
        if ((state.kind === 'running' || state.kind === 'ended') && state.disruption)
          this.saveLog(index, state.pod);
        const exit = this.exitOf(index, state, unschedulableSince);
        if (exit) {
          this.exits.set(index, exit);
          off();
          clearInterval(timer);
          resolve(exit);
        }
      };
      const off = pods.onChange(check);
      // Timeouts advance without Pod events too.
      const timer = setInterval(check, 1000);
      timer.unref();
      check();
    });
    return {
      index,
      api: this.runnerApi(index),
      exited,
      kill: async () => {
        const state = pods.state(index);
        if (state.kind !== 'none') {
          pods.deleting.add(state.pod);
          await this.core
            .deleteNamespacedPod({ name: state.pod, namespace: this.o.namespace, gracePeriodSeconds: 0 })
            .catch(() => {});
        }
        await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
      },
      collect: async () => {
        const state = pods.state(index);
        if (state.kind === 'none') return { logTail: '' };
        const nodeName = pods.pods.get(index)?.spec?.nodeName;
        const node = nodeName ? { node: nodeName } : {};
        try {
          const log = await (this.savedLogs.get(index) ??
            this.core.readNamespacedPodLog({
              name: state.pod,
              namespace: this.o.namespace,
              container: CONTAINERS.k6,
            }));
          const { summary, rest } = extractSummary(log);
          // k6's own log lines; its end-of-test text summary (every line indented) is left out.
          const logTail = rest
            .split('\n')
            .filter((line) => line.trim() && !/^\s/.test(line))
            .slice(-15)
            .join('\n');
          return summary === undefined ? { logTail, ...node } : { summary, logTail, ...node };
        } catch (error) {
          return {
            logTail: `(the log of Pod ${state.pod} could not be read: ${apiErrorMessage(error)})`,
            ...node,
          };
        }
      },
    };
  }

  /**
   * A disrupted runner's Pod goes away soon after its k6 container ends: its log (with the summary
   * k6 wrote on SIGTERM) is followed to the end from the moment the disruption shows.
   */
  private saveLog(index: number, pod: string): void {
    if (this.savedLogs.has(index)) return;
    const log = this.core
      .readNamespacedPodLog({
        name: pod,
        namespace: this.o.namespace,
        container: CONTAINERS.k6,
        follow: true,
      })
      .catch(() =>
        this.core.readNamespacedPodLog({ name: pod, namespace: this.o.namespace, container: CONTAINERS.k6 }),
      );
    log.catch(() => {});
    this.savedLogs.set(index, log);
  }

  private exitOf(index: number, state: PodState, unschedulableSince: { at: number }): RunnerExit | undefined {
    if (state.kind === 'ended') {
      if (state.disruption) {
        const { what, message } = state.disruption;
        return {
          code: state.code,
          reason: `runner ${index} was ${what} on node ${state.node ?? '(unknown)'}${message ? `: ${message}` : ''}`,
        };
      }
      if (state.reason === 'OOMKilled') {
        const limit = this.o.resources?.limits?.memory;
        return {
          code: state.code,
          signal: state.reason,
          reason: `runner ${index} was OOMKilled on node ${state.node ?? '(unknown)'}: it used more than its memory limit${limit ? ` of ${limit}` : ''} (resources.limits.memory)`,
        };
      }
      return { code: state.code, ...(state.reason ? { signal: state.reason } : {}) };
    }
    if (state.kind === 'failed') return { code: null, reason: `Pod ${state.pod}: ${state.reason}` };
    if (state.kind === 'pending' && state.unschedulable) {
      unschedulableSince.at ||= Date.now();
      if (Date.now() - unschedulableSince.at >= this.o.scheduleTimeoutS * 1000) {
        return {
          code: null,
          reason: `Pod ${state.pod} could not be placed within ${this.o.scheduleTimeoutS} s: ${state.unschedulable}`,
        };
      }
    } else {
      unschedulableSince.at = 0;
    }
    return undefined;
  }

  /** Runner `index`'s REST API: the status from the Pod watch until ready, the rest through the pod proxy. */
  private runnerApi(index: number): RunnerApi {
    const proxied = runnerApi(this.proxyRequest(index));
    let confirmed: K6Status | undefined;
    return {
      ...proxied,
      status: async () => {
        const state = this.pods!.state(index);
        if (state.kind !== 'running') throw new Error(`runner ${index} has no running Pod (${state.kind})`);
        // Until every runner's barrier container has ended, none is confirmed: then the orchestrator's
        // next poll sends all confirmations at once, which opens one warm connection per runner
        // for the start PATCHes (sequential confirmations would leave a few sockets for all).
        if (state.barrier === 'waiting' || (state.barrier === 'ready' && !this.allBarriersDone())) {
          return INITIALISING;
        }
        if (confirmed && state.barrier === 'ready') return confirmed;
        const status = await proxied.status();
        if (status.status === K6_STATUS.PausedBeforeRun && state.barrier === 'ready') confirmed = status;
        return status;
      },
    };
  }

  /** Whether every runner's Pod runs and its barrier container has ended (ready or failed). */
  private allBarriersDone(): boolean {
    for (let i = 0; i < this.runnerCount; i++) {
      const state = this.pods!.state(i);
      if (state.kind !== 'running' || state.barrier === 'waiting') return false;
    }
    return true;
  }

  /** A {@link RunnerRequest} through the API server's pod proxy to the runner's current Pod. */
  private proxyRequest(index: number): RunnerRequest {
    return async (method, path, body) => {
      const state = this.pods!.state(index);
      if (state.kind !== 'running') throw new Error(`runner ${index} has no running Pod (${state.kind})`);
      const cluster = this.o.kc.getCurrentCluster()!;
      const server = cluster.server.replace(/\/$/, '');
      const url = new URL(
        `${server}/api/v1/namespaces/${encodeURIComponent(this.o.namespace)}/pods/${encodeURIComponent(state.pod)}:${REST_PORT}/proxy${path}`,
      );
      const options: https.RequestOptions = { method, headers: {} };
      await this.o.kc.applyToHTTPSOptions(options);
      // The client makes a new agent (a new TLS connection) per call; ours pools them. The TLS
      // options (ca, cert, key) stay on the request, and a proxy-url keeps the client's agent.
      if (url.protocol === 'https:' && !cluster.proxyUrl) options.agent = this.agent;
      const payload = body === undefined ? undefined : JSON.stringify(body);
      if (payload) options.headers = { ...options.headers, 'content-type': 'application/json' };
      return new Promise((resolve, reject) => {
        const request = (url.protocol === 'https:' ? https : http).request(url, options, (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () => {
            if ((response.statusCode ?? 500) >= 300) {
              reject(
                new Error(
                  `${method} ${path} through the pod proxy: HTTP ${response.statusCode} ${text.slice(0, 200)}`,
                ),
              );
              return;
            }
            try {
              resolve(JSON.parse(text) as unknown);
            } catch {
              reject(new Error(`${method} ${path}: not JSON: ${text.slice(0, 200)}`));
            }
          });
        });
        request.setTimeout(10_000, () => request.destroy(new Error(`${method} ${path}: timed out`)));
        request.on('error', reject);
        request.end(payload);
      });
    };
  }

  /** Whether every runner ended on its own with a completed exit code. */
  private allCompleted(): boolean {
    return (
      this.exits.size === this.runnerCount && [...this.exits.values()].every((e) => runnerCompleted(e.code))
    );
  }

  async cleanup(): Promise<void> {
    if (this.cleanedUp || !this.created) return;
    this.cleanedUp = true;
    this.pods?.stop();
    this.agent.destroy();
    const { namespace, log, cleanup } = this.o;
    const keep = cleanup === 'never' || (cleanup === 'on-success' && !this.allCompleted());
    if (keep) {
      // Never leave a runner running: stop what still runs, keep the rest for inspection.
      const live = [...(this.pods?.pods.values() ?? [])].filter(
        (p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
      );
      await eachLimited(live, API_CONCURRENCY, async (pod) => {
        await this.core
          .deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 })
          .catch(() => {});
      });
      log.info(
        `cleanup ${cleanup}: kept the run's objects; delete them with: kubectl delete configmap,job,pod -n ${namespace} -l ${LABELS.runId}=${this.o.runId}`,
      );
      return;
    }
    await deleteRun(this.o.kc, namespace, this.o.runId, log);
  }
}

/**
 * Deletes every object of a run, by its run-id label: the ConfigMap (whose dependents the garbage
 * collector removes), the Jobs and the Pods directly too so nothing waits for the collector, then
 * waits until no Pod of the run is left (at most `waitS` seconds).
 * @returns the names of objects still present after the wait (empty when all are gone).
 */
export async function deleteRun(
  kc: KubeConfig,
  namespace: string,
  runId: string,
  log: Pick<Logger, 'warning'>,
  waitS = 60,
): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const labelSelector = `${LABELS.runId}=${runId}`;
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (error) {
      if ((error as { code?: number }).code !== 404)
        log.warning(`cleanup: deleting ${what} failed: ${apiErrorMessage(error)}`);
    }
  };
  const configMaps = await core
    .listNamespacedConfigMap({ namespace, labelSelector })
    .catch(() => ({ items: [] }));
  await eachLimited(configMaps.items, API_CONCURRENCY, (cm) =>
    attempt(`ConfigMap ${cm.metadata?.name}`, () =>
      core.deleteNamespacedConfigMap({
        name: cm.metadata!.name!,
        namespace,
        propagationPolicy: 'Background',
      }),
    ),
  );
  const jobs = await batch.listNamespacedJob({ namespace, labelSelector }).catch(() => ({ items: [] }));
  await eachLimited(jobs.items, API_CONCURRENCY, (job) =>
    attempt(`Job ${job.metadata?.name}`, () =>
      batch.deleteNamespacedJob({ name: job.metadata!.name!, namespace, propagationPolicy: 'Background' }),
    ),
  );
  const deadline = Date.now() + waitS * 1000;
  for (;;) {
    const pods = await core.listNamespacedPod({ namespace, labelSelector }).catch(() => ({ items: [] }));
    await eachLimited(
      pods.items.filter((p) => !p.metadata?.deletionTimestamp),
      API_CONCURRENCY,
      (pod) =>
        attempt(`Pod ${pod.metadata?.name}`, () =>
          core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, gracePeriodSeconds: 0 }),
        ),
    );
    const left = [
      ...pods.items.map((p) => `Pod ${p.metadata?.name}`),
      ...(await batch.listNamespacedJob({ namespace, labelSelector }).catch(() => ({ items: [] }))).items.map(
        (j) => `Job ${j.metadata?.name}`,
      ),
    ];
    if (left.length === 0 || Date.now() > deadline) {
      if (left.length > 0) log.warning(`cleanup: still present after ${waitS} s: ${left.join(', ')}`);
      return left;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

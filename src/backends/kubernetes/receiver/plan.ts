import { type KubeConfig, VersionApi } from '@kubernetes/client-node';
import type { Logger } from '../../../log.ts';
import type { RunPlan } from '../../../plan.ts';
import { makeClient } from '../api-client.ts';
import { receiverScript } from './script.ts';

/**
 * The first Kubernetes 1.x with native sidecars on by default (init containers with
 * `restartPolicy: Always`, feature gate `SidecarContainers`, beta in 1.29): an older API server
 * drops the field, and the receiver would keep the runner's Pod initialising for good.
 */
export const NATIVE_SIDECARS_MINOR = 29;

/**
 * The API server's minor version (`GET /version`, `minor` such as `29` or `29+`); undefined when it
 * cannot be read (the run then assumes native sidecars).
 */
export async function serverMinor(api: Pick<VersionApi, 'getCode'>): Promise<number | undefined> {
  try {
    const { major, minor } = await api.getCode();
    const value = Number.parseInt(minor, 10);
    return major === '1' && Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The plan and interval receiver program of a run: with a receiver image, a plan that pushes
 * (src/run/interval-receiver.ts) and a cluster with native sidecars ({@link NATIVE_SIDECARS_MINOR},
 * one `GET /version`), the receiver's program; else the plan without its pushes (nobody would take
 * them). An old cluster, or a program that cannot be loaded, is warned about and costs only the
 * per-interval latency. Never throws.
 * @param options.receiverImage the `interval-receiver-image` input (undefined: off).
 */
export async function receiverPlan(
  plan: RunPlan,
  options: { kc: KubeConfig; receiverImage?: string; log: Pick<Logger, 'warning'> },
): Promise<{ plan: RunPlan; receiverScript?: string }> {
  const without = { plan: { ...plan, intervalMetrics: undefined } };
  if (!plan.intervalMetrics || !options.receiverImage) return without;
  const version = await serverMinor(makeClient(options.kc, VersionApi));
  if (version !== undefined && version < NATIVE_SIDECARS_MINOR) {
    options.log.warning(
      `timeline: no latency per interval: the cluster runs Kubernetes 1.${version}, and the interval receiver is a native sidecar (1.${NATIVE_SIDECARS_MINOR} or later); interval-receiver-image: none leaves it out without this line`,
    );
    return without;
  }
  try {
    return { plan, receiverScript: await receiverScript() };
  } catch (error) {
    options.log.warning(
      `timeline: no latency per interval: the interval receiver's program: ${(error as Error).message}`,
    );
    return without;
  }
}

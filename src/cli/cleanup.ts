import type { Command } from 'commander';
import { allRunsSelector, runSelector } from '../backends/kubernetes/names.ts';
import { ConfigurationError } from '../errors.ts';
import type { KubernetesInputs } from '../inputs/kubernetes.ts';
import { parseZonesFile, type ZoneInputs } from '../inputs/zones.ts';
import type { Logger } from '../log.ts';
import {
  addClusterOptions,
  KUBERNETES_MIN_NODE,
  kubernetesNodeProblem,
  readClusterFlags,
} from './kubernetes.ts';

/**
 * `k6-distributed cleanup [--run-id ID | --all]`: removes from a cluster what Kubernetes runs left
 * when their CLI could not clean up (killed with SIGKILL, its machine gone): by the label
 * `k6-distributed.io/run-id`, the run's ConfigMap (which owns its Pods) and its runner Pods. The
 * cluster and namespace are named as for `run --backend kubernetes` (`--kubeconfig`, `--context`,
 * `--namespace`). Prints one line per object removed; exits 0 when there was nothing.
 */

/** A run id as `run` makes them (src/run/plan.ts `newRunId`) and a label value allows. */
const RUN_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

interface CleanupFlags {
  runId?: string;
  all?: boolean;
  zones?: string;
}

/**
 * The label selector `--run-id` or `--all` names.
 * @throws ConfigurationError naming the flags: neither or both given, or a run id that is not one.
 */
export function cleanupSelector(flags: CleanupFlags): string {
  if (flags.runId !== undefined && flags.all)
    throw new ConfigurationError('--run-id, --all: give one of them, not both');
  if (flags.all) return allRunsSelector();
  if (flags.runId === undefined)
    throw new ConfigurationError('cleanup: give --run-id ID (the id `run` printed) or --all');
  if (!RUN_ID.test(flags.runId))
    throw new ConfigurationError(
      `--run-id: "${flags.runId}" is not a run id (lowercase letters, digits and -, as \`run\` prints it)`,
    );
  return runSelector(flags.runId);
}

/**
 * The zones of `cleanup --zones FILE`: only their clusters and namespaces count, with `--kubeconfig`,
 * `--context` and `--namespace` as every zone's defaults.
 * @throws ConfigurationError naming `--zones` (src/inputs/zones.ts).
 */
function readZonesFile(
  file: string,
  cluster: Pick<KubernetesInputs, 'kubeconfig' | 'context' | 'namespace'>,
): ZoneInputs[] {
  return parseZonesFile(file, (input) =>
    input in cluster ? cluster[input as keyof typeof cluster] : undefined,
  );
}

/**
 * Adds the `cleanup` command to `program`.
 * @param out where the objects removed are printed, one a line (the CLI's stdout).
 * @param log progress and warnings (the CLI's stderr).
 */
export function addCleanupCommand(program: Command, out: (line: string) => void, log: Logger): void {
  const command = program
    .command('cleanup')
    .description(
      'remove what Kubernetes runs left behind (a CLI killed with SIGKILL): the ConfigMap and runner Pods of a run, by its run id',
    )
    .option('--run-id <id>', 'the run to remove (`run` prints it: "run ID in namespace NS")')
    .option('--all', 'every run of k6-distributed in the namespace, runs under way included')
    .option('--zones <file>', "the zones file of a run with load zones: every zone's cluster and namespace");
  addClusterOptions(command).action(async (flags: CleanupFlags, cmd: Command) => {
    const selector = cleanupSelector(flags);
    const cluster = readClusterFlags(cmd);
    if (kubernetesNodeProblem())
      throw new ConfigurationError(
        `cleanup: Node ${process.versions.node} is running this, but cleanup uses the Kubernetes client, which needs Node ${KUBERNETES_MIN_NODE.replace(/\.0$/, '')} or newer`,
      );
    const what = flags.all ? 'every run' : `run ${flags.runId}`;
    if (flags.zones !== undefined) {
      const zones = readZonesFile(flags.zones, cluster);
      const { removeZonesLeftovers } = await import('./zones-run.ts');
      const done = await removeZonesLeftovers(zones, flags.zones, selector, what, log);
      for (const zone of done) {
        for (const name of zone.removed) out(`removed ${name} (zone "${zone.zone}")`);
        if (zone.removed.length === 0 && zone.left.length === 0)
          log.info(
            `zone "${zone.zone}": nothing to remove: no ConfigMap or Pod of ${what} in namespace ${zone.namespace}`,
          );
      }
      process.exitCode = done.some((z) => z.left.length > 0) ? 1 : 0;
      return;
    }
    // The Kubernetes client loads only here, as for `run --backend kubernetes` (kubernetes-run.ts).
    const { removeClusterLeftovers } = await import('./kubernetes-run.ts');
    const { removed, left, namespace } = await removeClusterLeftovers(cluster, selector, what, log);
    for (const name of removed) out(`removed ${name}`);
    if (removed.length === 0 && left.length === 0)
      log.info(`nothing to remove: no ConfigMap or Pod of ${what} in namespace ${namespace}`);
    process.exitCode = left.length > 0 ? 1 : 0;
  });
}

import { ConfigurationError, errorMessage, RunError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { RunPlan } from '../plan.ts';
import type { Backend, Runner, ScheduledStart, StartOptions } from './backend.ts';
import type { KubernetesBackend } from './kubernetes/backend.ts';

/**
 * Load zones: one run over several Kubernetes backends (clusters, or namespaces), each running the
 * plan's runners of its zone (src/plan.ts `RunnerPlan.zone`), seen by the orchestrator as one
 * backend. The barrier is the orchestrator's over every zone's runners, so every runner of every
 * zone is at status 4 before any starts; the scheduled start gives every zone one instant of this
 * machine's clock, which each zone moves to its own nodes' clock by its barrier logs (scheduled-start.ts).
 * Every error names its zone (`zone "us-east": …`); cleanup reaches every zone, even after one failed.
 */

/** The start skew target across zones, in ms: zones' clocks that look further apart get a warning. */
export const ZONE_CLOCKS_WARN_MS = 50;

/** One zone's backend. */
export interface ZoneBackend {
  /** The zone's name, as the plan's runners carry it. */
  name: string;
  backend: Pick<
    KubernetesBackend,
    'launch' | 'cleanup' | 'preflight' | 'startAll' | 'startLeadMs' | 'clockAheadMs'
  >;
}

/** A logger whose lines start with the zone (`zone "us-east": …`): a zone's backend numbers its runners from 0. */
export function zoneLogger(log: Logger, zone: string): Logger {
  const tag = (m: string) => `zone "${zone}": ${m}`;
  return {
    info: (m) => log.info(tag(m)),
    warning: (m) => log.warning(tag(m)),
    error: (m) => log.error(tag(m)),
    debug: (m) => log.debug(tag(m)),
  };
}

/** An error of one zone, with its name in front and its kind kept. */
export function zoneError(zone: string, error: unknown): Error {
  const message = `zone "${zone}": ${errorMessage(error)}`;
  if (error instanceof ConfigurationError) return new ConfigurationError(message, error);
  if (error instanceof RunError) return new RunError(error.kind, message);
  return new Error(message);
}

/**
 * Refuses two zones with the same cluster (API server URL) and namespace: their runners' objects
 * would share names and labels.
 * @param input how the user names the zones input (`zones`, `--zones`).
 * @throws ConfigurationError naming both zones.
 */
export function checkDistinctZones(
  zones: ReadonlyArray<{ name: string; server: string | undefined; namespace: string }>,
  input: string,
): void {
  const seen = new Map<string, string>();
  for (const zone of zones) {
    const key = `${zone.server} ${zone.namespace}`;
    const other = seen.get(key);
    if (other)
      throw new ConfigurationError(
        `${input}: zone "${zone.name}": the same cluster and namespace as zone "${other}" (${zone.namespace}); give each zone its own cluster or namespace`,
      );
    seen.set(key, zone.name);
  }
}

/** Runs `work` on every zone at once; throws the first zone's error (named) once all settled. */
async function everyZone<T>(
  zones: readonly ZoneBackend[],
  work: (zone: ZoneBackend, i: number) => Promise<T>,
): Promise<T[]> {
  const settled = await Promise.allSettled(zones.map((zone, i) => work(zone, i)));
  const failed = settled.findIndex((s) => s.status === 'rejected');
  if (failed >= 0) throw zoneError(zones[failed]!.name, (settled[failed] as PromiseRejectedResult).reason);
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

/** The backend of a run with load zones: one {@link ZoneBackend} per zone of the plan. */
export class ZonedBackend implements Backend {
  readonly name = 'kubernetes' as const;
  private readonly zones: readonly ZoneBackend[];
  private readonly log: Logger;
  /** Per zone, its runners as its backend numbers them (from 0), once launched. */
  private launched: Runner[][] = [];
  /** Per zone, the run's indexes of its runners. */
  private indexes: number[][] = [];

  private readonly now: () => number;

  /** @param now this machine's clock, epoch ms (tests give a fake one). */
  constructor(zones: readonly ZoneBackend[], log: Logger, now: () => number = Date.now) {
    this.zones = zones;
    this.log = log;
    this.now = now;
  }

  /** Every zone's preflight (its credentials' permissions), at once; the first failure names its zone. */
  async preflight(): Promise<void> {
    await everyZone(this.zones, async (zone) => zone.backend.preflight());
  }

  /**
   * Launches every zone's runners at once, each zone's backend with its part of the plan (its
   * runners numbered from 0, `runIndex` their index in the run). Every zone is launched even when
   * one fails, so that {@link cleanup} finds what each made.
   * @returns every runner, numbered as in the plan.
   * @throws the first zone's error, named by zone (`zone "us-east": creating the runners …`).
   */
  async launch(plan: RunPlan, archivePath: string, lifetimeS?: number): Promise<Runner[]> {
    const parts = this.zones.map((zone) => plan.runners.filter((r) => r.zone === zone.name));
    const missing = plan.runners.find((r) => !this.zones.some((z) => z.name === r.zone));
    if (missing) throw new Error(`runner ${missing.index}: its zone "${missing.zone}" has no backend`);
    this.launched = await everyZone(this.zones, (zone, z) =>
      zone.backend.launch(
        { ...plan, runners: parts[z]!.map((r, i) => ({ ...r, index: i, runIndex: r.index })) },
        archivePath,
        lifetimeS,
      ),
    );
    this.indexes = parts.map((own) => own.map((r) => r.index));
    return this.launched
      .flatMap((runners, z) =>
        runners.map((runner, i) => this.inRun(this.zones[z]!.name, runner, this.indexes[z]![i]!)),
      )
      .sort((a, b) => a.index - b.index);
  }

  /** A zone's runner as the run numbers it, its failures named by zone. */
  private inRun(zone: string, runner: Runner, index: number): Runner {
    return {
      ...runner,
      index,
      exited: runner.exited.then((exit) =>
        exit.reason === undefined ? exit : { ...exit, reason: `zone "${zone}": ${exit.reason}` },
      ),
      collect: async () => {
        const left = await runner.collect();
        return left.unreadable === undefined
          ? left
          : { ...left, unreadable: `zone "${zone}": ${left.unreadable}` };
      },
    };
  }

  /**
   * One scheduled start for every zone: the instant is now plus the longest lead of the zones
   * (their slowest confirmations differ), given to every zone's backend, each moving it to its own
   * nodes' clock. Warns when the zones' clocks look further apart than {@link ZONE_CLOCKS_WARN_MS}.
   * @returns the runners' offsets on one time line (this machine's clock, through each zone's
   *   clock estimate); undefined when some zone cannot schedule its start (every runner is then
   *   un-paused through its REST API).
   */
  async startAll(runners: readonly Runner[], options: StartOptions): Promise<ScheduledStart | undefined> {
    if (this.launched.length !== this.zones.length) return undefined;
    const ahead = this.zones.map((z) => z.backend.clockAheadMs());
    if (ahead.some((a) => a === undefined)) return undefined;
    this.warnOfClocks(ahead as number[]);
    const atMs = this.now() + Math.max(...this.zones.map((z) => z.backend.startLeadMs()));
    const starts = await everyZone(this.zones, async (zone, z) => {
      const own = this.launched[z]!;
      const scheduled = await zone.backend.startAll(own, { ...options, atMs });
      if (scheduled?.firstAtMs !== undefined) return scheduled as Required<ScheduledStart>;
      // This zone's barrier logs cannot start it: its runners are un-paused through their REST
      // APIs at the instant (their confirmations time them), the other zones start by themselves.
      this.log.debug(`zone "${zone.name}": no scheduled start; un-pausing its runners at the instant`);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - this.now())));
      const at = await Promise.all(own.map((r) => r.api.start().then(() => this.now())));
      const first = Math.min(...at);
      return {
        startedAtMs: atMs,
        offsetsMs: at.map((t) => t - first),
        confirmedSpreadMs: Math.max(...at) - first,
        firstAtMs: first,
      };
    });
    // On one time line, by the run's runner index, then in `runners`' order.
    const at = new Map<number, number>();
    starts.forEach((s, z) => {
      s.offsetsMs.forEach((o, i) => {
        at.set(this.indexes[z]![i]!, s.firstAtMs + o);
      });
    });
    const absolute = runners.map((r) => at.get(r.index) ?? Number.NaN);
    if (absolute.some(Number.isNaN)) throw new Error('zones: a zone started other runners than launched');
    const first = Math.min(...absolute);
    this.log.info(
      `zones started at one instant: ${this.zones
        .map((zone, z) => {
          const own = this.indexes[z]!.map((i) => at.get(i)! - first);
          return `${zone.name} +${Math.min(...own).toFixed(1)} ms (skew ${(Math.max(...own) - Math.min(...own)).toFixed(1)} ms)`;
        })
        .join(', ')}`,
    );
    return {
      startedAtMs: Math.min(...starts.map((s) => s.startedAtMs)),
      offsetsMs: absolute.map((t) => t - first),
      confirmedSpreadMs: Math.max(...starts.map((s) => s.confirmedSpreadMs)),
      firstAtMs: first,
    };
  }

  /** Warns when two zones' node clocks look further apart than {@link ZONE_CLOCKS_WARN_MS}. */
  private warnOfClocks(ahead: readonly number[]): void {
    let behind = 0;
    let aheadOf = 0;
    ahead.forEach((a, i) => {
      if (a > ahead[behind]!) behind = i;
      if (a < ahead[aheadOf]!) aheadOf = i;
    });
    const gapMs = ahead[behind]! - ahead[aheadOf]!;
    if (gapMs > ZONE_CLOCKS_WARN_MS)
      this.log.warning(
        `zones: the nodes of zone "${this.zones[behind]!.name}" look ${Math.round(gapMs)} ms behind those of zone "${this.zones[aheadOf]!.name}" (by their barrier logs; the lines' way there counts too): each zone starts at the one instant moved to its own nodes' clock, so the start skew across zones is only as good as that estimate; keep every cluster's clocks synchronised (NTP)`,
      );
  }

  /** Cleans up every zone, each even when another fails; the first failure names its zone. */
  async cleanup(): Promise<void> {
    await everyZone(this.zones, (zone) => zone.backend.cleanup());
  }
}

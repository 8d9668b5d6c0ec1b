import { median } from '../src/compare/noise.ts';

/**
 * The report of bench/cluster.ts: bench/results/cluster.md from its rows (medians per case and
 * per orchestrator), with the targets of issue 26 (item 5) beside the figures.
 */

/** Where the overhead goes, in s (bench/cluster.ts `STAGES`). */
export const STAGES = ['preflight', 'create', 'start', 'end', 'lingerEnd', 'collect', 'cleanup'] as const;

/** One row: the medians of one case's rounds run by one orchestrator. Units: s, ms for spreads. */
export interface ClusterRow {
  runtime: 'kubelet' | 'agent';
  runners: number;
  initS: number;
  /** Each VU slept this long before its first request (0: none). Absent in rows of older runs. */
  firstSleepS?: number;
  /** Whose orchestrator: `this` checkout, or the baseline's folder name. Absent in older rows. */
  code?: string;
  /** When a row kept from an earlier run was measured (ISO); absent for this run's rows. */
  measuredAt?: string;
  rounds: Array<{
    byResource: Record<string, number>;
    overheadS?: number;
    stagesS?: Partial<Record<(typeof STAGES)[number], number>>;
  }>;
  skewMs: number;
  /** The spread of k6's answers to the un-pause requests, by the nodes' clocks. */
  confirmedMs?: number;
  /** This machine's 1-minute load average at the runs' ends. */
  loadAverage?: number;
  firstRequestsMs?: number;
  firstIterationsMs?: number;
  podStartS: number;
  overheadS: number;
  wallS: number;
  testS: number;
  requestsPerRunner: number;
  ownRequestsPerRunner?: number;
  stagesS?: Partial<Record<(typeof STAGES)[number], number>>;
}

/** The targets of issue 26, item 5: the start skew at 64 runners, the overhead at 32 and 64, in ms and s. */
export const TARGETS = { skewMs: { 64: 10 }, overheadS: { 32: 2, 64: 3 } } as const;

const f = (value: number | undefined, digits: number, unit = '') =>
  value === undefined || Number.isNaN(value) ? '—' : `${value.toFixed(digits)}${unit}`;

const codeOf = (r: ClusterRow, baseline: string | undefined) =>
  r.measuredAt
    ? `earlier (${r.measuredAt.slice(0, 10)})`
    : r.code === 'this' || r.code === undefined
      ? 'new'
      : `before (${baseline ?? r.code})`;

const caseOf = (r: ClusterRow) =>
  `${r.runtime} | ${r.runners} | ${r.initS} s${r.firstSleepS ? ` (first request after ${r.firstSleepS} s)` : ''}`;

/**
 * bench/results/cluster.md.
 * @param meta `at` ISO date, `cores`, `rounds` per orchestrator and case, `command` that ran it,
 *   `baseline` the baseline's name (a commit) when the rounds alternated with it.
 */
export function clusterMarkdown(
  rows: readonly ClusterRow[],
  meta: { at: string; cores: number; rounds: number; command: string; baseline?: string; kcmQps: string },
): string {
  const { baseline } = meta;
  const plain = rows.filter((r) => !r.firstSleepS);
  const targetLines: string[] = [];
  for (const runners of [32, 64] as const) {
    const mine = plain.filter((r) => r.runtime === 'agent' && r.runners === runners && !r.measuredAt);
    const skewTarget = runners === 64 ? TARGETS.skewMs[64] : undefined;
    for (const r of mine) {
      const over = TARGETS.overheadS[runners];
      targetLines.push(
        `| ${runners} | ${codeOf(r, baseline)} | ${f(r.overheadS, 2, ' s')} | ≤ ${over} s | ${r.overheadS <= over ? 'met' : 'missed'} | ${f(r.skewMs, 1, ' ms')} | ${skewTarget === undefined ? '—' : `≤ ${skewTarget} ms`} | ${skewTarget === undefined ? '—' : r.skewMs <= skewTarget ? 'met' : 'missed'} | ${f(r.firstRequestsMs, 1, ' ms')} |`,
      );
    }
  }
  return [
    `# Kubernetes backend on the test cluster (${meta.at}, ${meta.cores} cores, medians of ${meta.rounds} rounds per orchestrator, 1 for the 30 s init)`,
    '',
    `Command: \`${meta.command}\`${baseline ? ` (rounds alternate between this checkout's orchestrator, "new", and ${baseline}'s, "before", on one cluster)` : ''}.`,
    '',
    '5 s constant-vus test, 2 VUs per runner, one runner per dedicated node, cleanup always. Nodes: `kubelet` =',
    'real kubelets with containerd (16 nodes), `agent` = the stand-in node agent (64 nodes, 2 cores shared',
    'with the control plane, 128 k6 processes and the target).',
    '',
    '## Targets (issue 26, item 5)',
    '',
    '| Runners | Code | Orchestration overhead | Target | | Start skew | Target | | First requests spread |',
    '|---:|---|---:|---:|---|---:|---:|---|---:|',
    ...targetLines,
    '',
    '## Every case',
    '',
    '| Nodes | Runners | VU init | Code | Start skew | k6 confirmations spread | First iterations spread | First requests spread | Pod start + VU init | Test | Orchestration overhead | Wall | API requests per runner | of which this process | Load average |',
    '|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${caseOf(r)} | ${codeOf(r, baseline)} | ${f(r.skewMs, 2, ' ms')} | ${f(r.confirmedMs, 0, ' ms')} | ${f(r.firstIterationsMs, 1, ' ms')} | ${f(r.firstRequestsMs, 1, ' ms')} | ${f(r.podStartS, 2, ' s')} | ${f(r.testS, 2, ' s')} | ${f(r.overheadS, 2, ' s')} | ${f(r.wallS, 2, ' s')} | ${f(r.requestsPerRunner, 0)} | ${f(r.ownRequestsPerRunner, 1)} | ${f(r.loadAverage, 2)} |`,
    ),
    '',
    '## Where the orchestration overhead goes (medians, s)',
    '',
    '- Preflight: the local k6 archive + inspect.',
    '- Create: from there to the runner Pods created (plan, permission check, ConfigMap, Pods, Pod watch).',
    '- Start: from every runner ready (status 4) to the start instant: setup() (before: asked of runner 0',
    '  even when the script has none; new: not asked when its sources never name it) and the scheduled',
    "  start's lead (the start times' way through the API server and the barriers' 100 ms mailbox poll).",
    "- End: from the test's end (the start instant + the test's duration) to the first runner's linger",
    "  ended: the barriers' end polls (every 50 ms from just before the end), their `k6d-end` lines through",
    '  the followed logs, and teardown() (before: the other runners waited for it).',
    '- Linger end: from there to every runner exited: the Pod deletes through the API server, the nodes',
    "  seeing them, k6's SIGTERM, its summary and exit, the nodes' status updates back through the Pod watch.",
    '- Collect: reading the summaries (Pod logs, followed since the start). Cleanup: deletes, then until',
    '  no Pod of the run is left. Rest: the remainder (aggregation, thresholds, the result), the median',
    "  of each round's remainder.",
    '',
    '| Nodes | Runners | VU init | Code | Preflight | Create | Start | End | Linger end | Collect | Cleanup | Rest |',
    '|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows
      .filter((r) => r.stagesS)
      .map((r) => {
        const st = r.stagesS!;
        const sum = (stages: Partial<Record<string, number>>) =>
          Object.values(stages).reduce((a: number, b) => a + (b ?? 0), 0);
        // Per round where the rounds have their stages (a median of sums, not a sum of medians).
        const rests = r.rounds.flatMap((x) =>
          x.overheadS === undefined || !x.stagesS ? [] : [x.overheadS - sum(x.stagesS)],
        );
        const rest = rests.length > 0 ? median(rests) : r.overheadS - sum(st);
        return `| ${caseOf(r)} | ${codeOf(r, baseline)} | ${STAGES.map((k) => f(st[k], 2)).join(' | ')} | ${f(rest, 2)} |`;
      }),
    '',
    'API requests by resource in the last round of each size (the run less the same time idle):',
    '',
    ...rows.map(
      (r) =>
        `- ${r.runtime}, ${r.runners} runners, ${r.initS} s init${r.firstSleepS ? `, first request after ${r.firstSleepS} s` : ''}, ${codeOf(r, baseline)}: ${Object.entries(
          r.rounds.at(-1)?.byResource ?? {},
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    '',
    "Start skew is what the run reports: the spread of the instants at which the runners' barrier containers",
    "sent their un-pause requests, by their nodes' clocks (each barrier un-pauses its runner itself at one",
    "scheduled instant). k6 confirmations spread is the spread of k6's answers to those requests (same",
    'clocks): how long each k6 took to begin its test once asked. First iterations spread is the spread of',
    "the instants each runner's first VU began its first iteration, as it logged them (every node shares",
    "this machine's clock). First requests spread is the spread of each runner's first request at the",
    "target, by the target's one clock. On this machine the 64 runners' 128 k6 processes, the control",
    'plane and the target share 2 cores: once the runners are un-paused together, each k6 process has to',
    'get the CPU to answer, start its VUs and send its first request. The k6 confirmations spread shows',
    "that wait before any request is sent (the barriers' un-pause requests go over loopback, each k6",
    'answers when it gets the CPU), and the first iterations and first requests spreads are of its size:',
    'the share of the first requests spread beyond the skew is that contention, not the orchestration',
    '(on real nodes, one runner each, the kubelet rows show 1-4 ms skews and 3-28 ms spreads on the same',
    'machine with 4-16 runners). The rows "first request after 1 s" were meant to leave the start burst',
    'out (each VU sleeps 1 s before its first request): their first requests come as one burst of 128',
    'new connections at the target, a Node process on the same cores, and spread more (once by 1.2 s,',
    "the time a retransmitted SYN waits, so probably a dropped connection attempt): there the target's",
    'own wait dominates.',
    '',
    'Overhead is the wall time of the whole run less the test itself and less the time from creating the',
    'runner Pods to every runner at status 4. API requests count every client (this process, the',
    'controllers, the scheduler, the node agent), less what the same time costs idle; "of which this process" counts',
    "the orchestrator's own requests (Node's diagnostics channels for undici and https, to the API server's address).",
    `The controller-manager runs with --kube-api-qps ${meta.kcmQps} (its default is 20), as when runners were Jobs (the job`,
    'controller then released finished runner Pods at that rate); no controller of it acts on the bare runner Pods.',
    '',
  ].join('\n');
}

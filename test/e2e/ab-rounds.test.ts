import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { parseReportInputs } from '../../src/actions/report/inputs.ts';
import { report } from '../../src/actions/report/report.ts';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { type AbResult, abResultSchema } from '../../src/result/ab-schema.ts';
import { ROOT, runCli, writeScript } from '../support/cli.ts';
import { API, nockNewComment, prContext, testGitHub } from '../support/github.ts';
import { tempDir } from '../support/temp.ts';

/*
 * Interleaved A/B rounds from the CLI, with real k6 processes on the local backend: two real HTTP
 * targets on 127.0.0.1 stand for the base and the head deployment, the head answering 10 times
 * slower (1 s against 100 ms: service times long enough that a busy machine's scheduling jitter
 * stays small beside them, since 4 rounds make 2 pairs and a t factor of 12.7). Four rounds of 2.5 s each, two runners per round. Each target records
 * when it was hit, so the running order is checked from the targets' side, not only from the result.
 */
const SCRIPT = `
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: {
    s: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '2500ms', preAllocatedVUs: 30, maxVUs: 40 },
  },
};
export default function () {
  const res = http.get(__ENV.BASE_URL + '/slow?ms=' + __ENV.SERVICE_MS);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
`;

/** How many requests a target saw between two ISO 8601 times. */
const hitsBetween = (target: RecordingTarget, from: string, to: string) =>
  target.arrivals.filter((x) => x.at >= Date.parse(from) - 50 && x.at <= Date.parse(to) + 50).length;

describe('k6-distributed ab', () => {
  it('runs 4 rounds in ABBA order and judges the slower head regressed on paired rounds', async () => {
    const script = writeScript(SCRIPT);
    const dir = path.dirname(script);
    const [a, b] = [await startNodeTarget(), await startNodeTarget()];
    const run = await runCli(
      [
        'ab',
        script,
        '--rounds',
        '4',
        '--runners',
        '2',
        '--a-env',
        `BASE_URL=${a.url}`,
        '--a-env',
        'SERVICE_MS=100',
        '--b-env',
        `BASE_URL=${b.url}`,
        '--b-env',
        'SERVICE_MS=1000',
        '--out',
        path.join(dir, 'ab.json'),
        '--report',
        path.join(dir, 'ab.md'),
        '--progress-interval',
        '1',
      ],
      { cwd: dir },
    ).finally(() => Promise.all([a.stop(), b.stop()]));
    // Regressed: exit 1.
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    expect(run.stderr).toMatch(
      /A\/B round 1 of 4: A \(base\)[\s\S]*round 2 of 4: B \(head\)[\s\S]*round 4 of 4: A/,
    );

    const ab: AbResult = abResultSchema.parse(JSON.parse(readFileSync(path.join(dir, 'ab.json'), 'utf8')));
    expect(ab).toMatchObject({ schema: 'k6-distributed/ab@1', order: 'ABBA', runners: 2, backend: 'local' });
    expect(ab.rounds.map((r) => [r.round, r.block, r.side])).toEqual([
      [1, 1, 'A'],
      [2, 1, 'B'],
      [3, 1, 'B'],
      [4, 1, 'A'],
    ]);
    for (const [i, r] of ab.rounds.entries()) {
      // From the targets' side: during each round only its side's target was hit.
      const [own, other] = r.side === 'A' ? [a, b] : [b, a];
      expect(hitsBetween(own, r.startedAt, r.endedAt), `round ${r.round}`).toBe(r.figures.requests);
      expect(hitsBetween(other, r.startedAt, r.endedAt), `round ${r.round}`).toBe(0);
      // The rounds ran one after the other.
      if (i > 0) expect(Date.parse(r.startedAt)).toBeGreaterThan(Date.parse(ab.rounds[i - 1]!.endedAt));
      expect(r.figures.requests).toBeGreaterThan(40);
      expect(r.figures.requests).toBeLessThanOrEqual(51);
      expect(r.figures.checks).toBe(1);
      expect(r.figures['error-rate']).toBe(0);
      for (const key of ['rps', 'p50', 'p90', 'p95', 'p99'] as const)
        expect(r.figures[key]).toBeGreaterThan(0);
      // The head's target answers after 1 s, the base's after 100 ms.
      if (r.side === 'B') expect(r.figures.p50).toBeGreaterThan(999);
      else expect(r.figures.p50).toBeLessThan(500);
    }
    // Each target saw exactly its own rounds' requests.
    const requestsOf = (side: 'A' | 'B') =>
      ab.rounds.filter((r) => r.side === side).reduce((s, r) => s + r.figures.requests!, 0);
    expect(a.arrivals.length).toBe(requestsOf('A'));
    expect(b.arrivals.length).toBe(requestsOf('B'));
    expect(ab.a).toMatchObject({ label: 'base', env: { BASE_URL: a.url, SERVICE_MS: '100' }, rounds: 2 });
    expect(ab.b).toMatchObject({ label: 'head', env: { BASE_URL: b.url, SERVICE_MS: '1000' }, rounds: 2 });
    expect(ab.b.aggregate.p95! / ab.a.aggregate.p95!).toBeGreaterThan(3);

    expect(ab.paired).toMatchObject({
      reference: 'paired rounds',
      level: 0.95,
      rounds: 4,
      pairs: 2,
      verdict: 'regressed',
    });
    const p95 = ab.paired.metrics.find((m) => m.id === 'p95')!;
    expect(p95).toMatchObject({ verdict: 'regressed', scale: 'log', gated: true });
    expect(p95.changes).toHaveLength(2);
    expect(p95.low).toBeGreaterThan(1.1);

    // The markdown: stdout and --report carry the paired section.
    const md = readFileSync(path.join(dir, 'ab.md'), 'utf8');
    expect(run.stdout).toContain('### 🔴 A/B rounds: regressed');
    expect(md).toContain('## 🔴 A/B rounds: regressed');
    expect(md).toContain(
      'Reference: **paired rounds**. 4 rounds (K = 4, 2 A-B pairs) in ABBA order on 2 local runners',
    );
    expect(md).toMatch(
      /\| Latency p95 \| [\d.]+ms \| [\d.]+s \| \+\d+\.\d% \| \+\d+\.\d% to \+\d+\.\d% \| \+\d+\.\d% \| 🔴 regressed \|/,
    );
    expect(md).toContain(
      '| Metric | A (median) | B (median) | Median B/A | 95% interval | Tolerance | Verdict |',
    );
    expect(md).toMatch(/\| 3 \| 1 \| B \| \d{4}-/);

    // The PR comment from this real A/B result: the report action in mode comment, GitHub's REST
    // API as nock (only the comment's calls: no baseline is looked up).
    nock.disableNetConnect();
    try {
      const posted = nockNewComment(nock(API), 60);
      const outcome = await report(
        parseReportInputs({ 'github-token': 'ghs_test', result: path.join(dir, 'ab.json'), mode: 'comment' }),
        {
          gh: testGitHub(),
          transfer: {
            uploadArtifact: () => Promise.reject(new Error('no upload')),
            downloadArtifact: () => Promise.reject(new Error('no download')),
          },
          token: 'ghs_test',
          ctx: prContext(),
          log: () => {},
          writeSummary: async () => {},
          tempDir: async (prefix) => tempDir(prefix),
        },
      );
      expect(outcome.outputs.verdict).toBe('regressed');
      // RPS regresses too: the slower head's in-flight requests lengthen its rounds.
      expect(outcome.failure).toMatch(
        /^performance regressed on paired A\/B rounds: .*Latency p95: B is worse by a mean /,
      );
      const comment = posted();
      expect(comment).toContain('### 🔴 A/B rounds: regressed');
      expect(comment).toContain('Reference: **paired rounds**. 4 rounds (K = 4, 2 A-B pairs)');
      expect(nock.isDone()).toBe(true);
      const output = path.join(ROOT, 'test', '.output', 'pr-report');
      mkdirSync(output, { recursive: true });
      writeFileSync(path.join(output, 'ab-comment.md'), comment);
    } finally {
      nock.cleanAll();
      nock.enableNetConnect();
    }
    // The tolerance shown is the one judged: 10%, or the 1 ms floor over A's p95 when that is more.
    expect(md).toContain(`| +${(Math.max(0.1, 1 / ab.a.aggregate.p95!) * 100).toFixed(1)}% | 🔴 regressed |`);
  });

  it('refuses an odd number of rounds before any load, naming the flag', async () => {
    const script = writeScript(SCRIPT);
    const target = await startNodeTarget();
    const run = await runCli([
      'ab',
      script,
      '--rounds',
      '3',
      '--a-env',
      `BASE_URL=${target.url}`,
      '--b-env',
      `BASE_URL=${target.url}/b`,
    ]).finally(() => target.stop());
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(/--rounds: 3 rounds; give an even number of at least 2/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(target.arrivals).toHaveLength(0);
  });

  it.each([
    [['--level', '95'], '--level: "95" is not a fraction between 0 and 1, e.g. 0.95'],
    [['--tolerances', 'p97: 5%'], '--tolerances: unknown metric "p97"'],
    [['--gate', 'p95,p97'], '--gate: unknown metric "p97"'],
    [['--a-env', 'BASE_URL'], '--a-env: "BASE_URL" is not KEY=VALUE'],
    [['--b-k6-args', '--tag "x'], '--b-k6-args: '],
  ])('refuses %o before any load, in one line naming the flag', async (flags, message) => {
    const script = writeScript(SCRIPT);
    const run = await runCli(['ab', script, '--a-env', 'X=1', '--b-env', 'X=2', ...flags]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(message);
  });

  it("refuses a side's flags that k6 refuses before any round's load, naming the side", async () => {
    const script = writeScript(SCRIPT);
    const [a, b] = [await startNodeTarget(), await startNodeTarget()];
    const run = await runCli([
      'ab',
      script,
      '--rounds',
      '2',
      '--a-env',
      `BASE_URL=${a.url}`,
      '--b-env',
      `BASE_URL=${b.url}`,
      '--b-k6-args',
      '--no-such-flag 3',
    ]).finally(() => Promise.all([a.stop(), b.stop()]));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/B \(head\): .*no-such-flag/);
    // A's preflight ran (it loads nothing); no round did.
    expect(run.stderr).not.toContain('A/B round 1');
    expect(a.arrivals).toHaveLength(0);
    expect(b.arrivals).toHaveLength(0);
  });

  it('refuses two identical sides', async () => {
    const script = writeScript(SCRIPT);
    const run = await runCli([
      'ab',
      script,
      '--a-env',
      'BASE_URL=http://127.0.0.1:1',
      '--b-env',
      'BASE_URL=http://127.0.0.1:1',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--a-env\/--b-env \(or --a-k6-args\/--b-k6-args\): A and B are the same/);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../../src/config.ts';
import { PINNED_K6_VERSION } from '../../../src/k6/binary.ts';
import { earliestEndS, executionSegmentSequence, executionSegments } from '../../../src/k6/executors.ts';
import { k6ExitCodeOfRunners } from '../../../src/k6/exit-codes.ts';
import { splitK6Args } from '../../../src/k6/flags.ts';
import { parseGoDuration } from '../../../src/k6/go-syntax.ts';
import { declaredContains } from '../../../src/k6/script-sources.ts';
import { intervalMetricsEnv, RUN_TAG, RUNNER_TAG, runnerArgs, runnerEnv } from '../../../src/plan.ts';
import { planRun } from '../../../src/run/plan.ts';
import { type Preflight, splittingWarnings } from '../../../src/run/preflight.ts';

describe('run plan', () => {
  it('gives runner i of N the segment i/N:(i+1)/N and all of them the full sequence', () => {
    expect(executionSegments(1)).toEqual(['0:1']);
    expect(executionSegments(4)).toEqual(['0:1/4', '1/4:2/4', '2/4:3/4', '3/4:1']);
    expect(executionSegmentSequence(3)).toBe('0,1/3,2/3,1');
    const plan = planRun({
      runners: 3,
      maxVUs: 10,
      userRunArgs: ['--out', 'json=raw-{runner}.json'],
      tags: { team: 'a' },
      runId: 'rabc123',
    });
    const args = runnerArgs(plan, plan.runners[1]!, {
      archive: 'a.tar',
      summary: 's.json',
      address: '127.0.0.1:1',
    });
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(flag('--execution-segment')).toBe('1/3:2/3');
    expect(flag('--execution-segment-sequence')).toBe('0,1/3,2/3,1');
    expect(flag('--address')).toBe('127.0.0.1:1');
    expect(args).toContain('--paused');
    expect(args).toEqual(
      expect.arrayContaining(['--tag', 'team=a', '--tag', `${RUNNER_TAG}=1`, 'json=raw-1.json']),
    );
    // The run id on every sample, under a name of its own (dashboards separate runs by it).
    expect(args).toEqual(expect.arrayContaining(['--tag', `${RUN_TAG}=rabc123`]));
    // The runner tag does not take the name a script may use itself.
    expect(args).not.toContain('runner=1');
    expect(flag('--summary-mode')).toBe('compact');
    // The quantile grid goes in the environment: the command line stays short.
    expect(args.join(' ').length).toBeLessThan(1000);
    expect(runnerEnv(plan).K6_SUMMARY_TREND_STATS).toMatch(
      /^count,avg,med,min,.*p\(95\),.*p\(99\.99\),.*max$/,
    );
    expect(args.at(-1)).toBe('a.tar');
  });

  it('refuses fewer than 1 runner and runs no runner without a VU', () => {
    expect(() => planRun({ runners: 0, maxVUs: 10 })).toThrowError(
      /runners: must be a whole number of at least 1/,
    );
    const plan = planRun({ runners: 4, maxVUs: 1 });
    expect(plan.runners).toHaveLength(1);
    expect(plan.sequence).toBe('0,1');
    expect(plan.warnings).toEqual([
      'runners: 4 asked, but the test has at most 1 VU at once; running 1 runner (a runner without a VU would do nothing)',
    ]);
    expect(planRun({ runners: 4, maxVUs: 4 }).warnings).toEqual([]);
  });

  it('refuses a file output every runner would overwrite, and takes one with {runner}', () => {
    expect(() => planRun({ runners: 2, maxVUs: 4, userRunArgs: ['--out', 'json=raw.json'] })).toThrowError(
      'k6 args: --out json=raw.json: every runner would write the same file; put {runner} in the path (one file per runner), e.g. --out json=raw-{runner}.json',
    );
    expect(() => planRun({ runners: 2, maxVUs: 4, userRunArgs: ['-o=csv=out/data.csv'] })).toThrowError(
      /e\.g\. --out csv=out\/data-\{runner\}\.csv/,
    );
    expect(planRun({ runners: 1, maxVUs: 4, userRunArgs: ['--out', 'json=raw.json'] }).runners).toHaveLength(
      1,
    );
    expect(
      planRun({ runners: 2, maxVUs: 4, userRunArgs: ['--out', 'json=raw-{runner}.json'] }).runners,
    ).toHaveLength(2);
    expect(
      planRun({ runners: 2, maxVUs: 4, userRunArgs: ['--out', 'experimental-prometheus-rw'] }).runners,
    ).toHaveLength(2);
  });
});

describe('preflight helpers', () => {
  it('routes run-only flags to k6 run, options to k6 archive, and -e to the environment only', () => {
    expect(
      splitK6Args(['--vus', '10', '--out', 'json=x.json', '-e', 'A=b c', '--no-usage-report', '--env=B=1=2']),
    ).toEqual({
      archiveArgs: ['--vus', '10'],
      runArgs: ['--out', 'json=x.json', '--no-usage-report'],
      productArgs: {},
      env: { A: 'b c', B: '1=2' },
    });
    // Secret sources go to the runners only (never into the archive); --no-thresholds too, and the
    // product judges no threshold then; --summary-mode is the product's (runners must export).
    expect(
      splitK6Args(['--secret-source', 'mock=a=b', '--no-thresholds', '--summary-mode=full', '--vus', '2']),
    ).toEqual({
      archiveArgs: ['--vus', '2'],
      runArgs: ['--secret-source', 'mock=a=b', '--no-thresholds'],
      productArgs: { '--summary-mode': 'full' },
      env: {},
    });
    // --summary-trend-stats goes into the archive like options.summaryTrendStats (issue 25); the
    // runners' K6_SUMMARY_TREND_STATS (the grid) wins over it on every runner.
    expect(splitK6Args(['--summary-trend-stats', 'avg,p(99.5)']).archiveArgs).toEqual([
      '--summary-trend-stats',
      'avg,p(99.5)',
    ]);
    expect(() => splitK6Args(['-e'])).toThrowError('k6 args: -e needs a value');
    expect(() => splitK6Args(['-e', 'TOKEN'])).toThrowError('k6 args: -e TOKEN: must be NAME=value');
  });

  it.each(['--execution-segment', '--paused', '--address=0.0.0.0:1', '--summary-export', '--linger'])(
    'refuses %s, which the product sets itself',
    (flag) => {
      expect(() => splitK6Args([flag, 'x'])).toThrowError(/k6 args: .* cannot be given/);
    },
  );

  it('reads which custom metrics hold time from the sources', () => {
    expect(
      declaredContains(
        `const a = new Trend('think_time', true);\nconst b = new Trend("plain");\nnew Gauge('lag',  true )`,
      ),
    ).toEqual({ think_time: 'time', lag: 'time' });
  });

  it('warns in one line where splitting cannot give the answer of one k6 run', () => {
    const pre = {
      reads: { vu: true, vuIterations: true, iterationInTest: true, instance: true },
      options: {
        scenarios: {
          a: { executor: 'constant-arrival-rate', preAllocatedVUs: 2 },
          b: { executor: 'constant-vus', vus: 1 },
          c: { executor: 'shared-iterations', vus: 4, iterations: 8 },
          d: { executor: 'per-vu-iterations', vus: 3, iterations: 5 },
        },
      },
    } as unknown as Preflight;
    expect(splittingWarnings(pre, 1)).toEqual([]);
    const lines = splittingWarnings(pre, 4);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/__VU: VU numbers repeat across the 4 runners/);
    expect(lines[1]).toMatch(/__ITER or exec.vu.iterationInScenario/);
    // Gaps only where the executor starts iterations at its VUs' pace (issue 25, defect 2).
    expect(lines[2]).toBe(
      'scenario b: the script reads exec.scenario.iterationInTest, which has gaps over 4 runners with constant-vus (values past the iteration count); shared-iterations and the arrival-rate executors keep it dense',
    );
    expect(lines[3]).toMatch(/^scenario d: .* with per-vu-iterations /);
    expect(lines[4]).toMatch(/exec\.instance\.\*: each of the 4 runners is its own k6 instance/);
    expect(lines[5]).toBe(
      'scenario a: preAllocatedVUs 2 is below the 4 runners; runners without one allocate VUs during the test or drop iterations',
    );
  });

  it('parses the durations k6 inspect prints', () => {
    expect(parseGoDuration('10m30s')).toBe(630);
    expect(parseGoDuration('1h2m3.5s')).toBe(3723.5);
    expect(parseGoDuration('250ms')).toBeCloseTo(0.25);
    expect(parseGoDuration('0s')).toBe(0);
    expect(() => parseGoDuration('ten')).toThrowError(/not a duration/);
  });

  it('tells the earliest a test can end by itself from its timed scenarios', () => {
    // `k6 inspect --execution-requirements` of k6 v2.2.0 for three scenarios (totalDuration 10m30s).
    const scenarios = JSON.parse(
      '{"a":{"executor":"ramping-vus","startTime":null,"gracefulStop":null,"stages":[{"duration":"10s","target":5},{"duration":"1m0s","target":0}],"gracefulRampDown":null},' +
        '"b":{"executor":"constant-arrival-rate","startTime":"45s","rate":5,"timeUnit":null,"duration":"30s","preAllocatedVUs":2,"maxVUs":null},' +
        '"c":{"executor":"shared-iterations","startTime":null,"vus":2,"iterations":10,"maxDuration":"10m0s"}}',
    );
    // b: 45 s + 30 s, later than a's 70 s of stages; c may end at any time.
    expect(earliestEndS(scenarios)).toBe(75);
    expect(earliestEndS({ c: scenarios.c })).toBe(0);
    expect(earliestEndS({ d: { executor: 'constant-vus', vus: 1, duration: '1m0s', startTime: null } })).toBe(
      60,
    );
    expect(earliestEndS(undefined)).toBe(0);
  });
});

describe('run configuration', () => {
  it('maps blank inputs to defaults and keeps quoted k6 flags whole', () => {
    const config = parseRunConfig({
      script: 'a.js',
      runners: '',
      k6Args: `--tag "team=load test" -e 'X=a b'`,
    });
    expect(config.runners).toBe(1);
    expect(config.k6Args).toEqual(['--tag', 'team=load test', '-e', 'X=a b']);
    expect(config.resultPath).toBe('k6-distributed-result.json');
  });

  it('names the input and what is wrong', () => {
    expect(() => parseRunConfig({ script: 'a.js', runners: '0' })).toThrowError(
      'runners: must be at least 1',
    );
    expect(() => parseRunConfig({ script: 'a.js', runners: '2.5' })).toThrowError(
      'runners: must be a whole number',
    );
    expect(() => parseRunConfig({ script: '' })).toThrowError('script: is required');
    expect(() => parseRunConfig({ script: 'a.js', graceS: '-1' })).toThrowError(
      /graceS: must be more than 0/,
    );
  });
});

describe('pinned k6', () => {
  it('is the version tools/k6/go.mod builds', () => {
    const goMod = readFileSync(path.resolve(import.meta.dirname, '../../../tools/k6/go.mod'), 'utf8');
    expect(goMod).toContain(`require go.k6.io/k6/v2 ${PINNED_K6_VERSION}`);
  });
});

describe('exit codes as k6', () => {
  it("passes a runner's test.abort(), script exception, test.fail() and setup/teardown timeout through", () => {
    expect(k6ExitCodeOfRunners([0, 108, 103])).toBe(108);
    expect(k6ExitCodeOfRunners([110, 99])).toBe(110);
    expect(k6ExitCodeOfRunners([107, 110])).toBe(107);
    expect(k6ExitCodeOfRunners([0, 100])).toBe(100);
    expect(k6ExitCodeOfRunners([0, 99, null, 103])).toBeUndefined();
  });

  it("adds the per-interval histograms' output beside the user's own, pointed at the receiver", () => {
    const plan = planRun({
      runners: 2,
      maxVUs: 2,
      userRunArgs: ['--out', 'json=raw-{runner}.json'],
      tags: {},
    });
    const paths = { archive: 'a.tar', address: '127.0.0.1:1' };
    expect(runnerArgs(plan, plan.runners[0]!, paths)).not.toContain('experimental-prometheus-rw');
    expect(intervalMetricsEnv(plan, 0)).toEqual({});
    const withRw = { ...plan, intervalMetrics: { url: 'http://127.0.0.1:9', pushIntervalMs: 25 } };
    const args = runnerArgs(withRw, withRw.runners[1]!, paths);
    expect(args).toEqual(
      expect.arrayContaining(['--out', 'experimental-prometheus-rw', '--out', 'json=raw-1.json']),
    );
    expect(intervalMetricsEnv(withRw, 1, 'some-feature')).toEqual({
      K6_PROMETHEUS_RW_SERVER_URL: 'http://127.0.0.1:9/1',
      K6_PROMETHEUS_RW_PUSH_INTERVAL: '25ms',
      K6_FEATURES: 'some-feature,native-histograms',
      K6_PROMETHEUS_RW_STALE_MARKERS: 'false',
    });
    expect(intervalMetricsEnv(withRw, 0).K6_FEATURES).toBe('native-histograms');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { runAction } from '../support/action.ts';
import { writeScript } from '../support/cli.ts';

// The committed bundle dist/run.js, run the way GitHub runs it, with the local backend.

let target: RecordingTarget;
beforeAll(async () => {
  target = await startNodeTarget();
});
afterAll(async () => {
  await target.stop();
});

describe('dist/run.js with backend: local', () => {
  it('sets every output and writes the job summary', async () => {
    const script = writeScript(`
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 200 } },
  thresholds: { http_req_duration: ['p(95)<2000'] },
};
export default function () { http.get(__ENV.TARGET + '/api/items'); }
`);
    const step = await runAction('dist/run.js', {
      script,
      runners: '2',
      backend: 'local',
      'k6-args': `-e "TARGET=${target.url}"`,
    });
    expect(step.code, step.stdout).toBe(0);
    // The bundled entry module's handleSummary ran inside k6: every runner's compact summary was read.
    expect(step.stdout).not.toContain('no compact summary');
    expect(step.outputs.verdict).toBe('passed');
    expect(step.outputs['thresholds-ok']).toBe('true');
    expect(step.outputs['result-path']).toBe('k6-distributed-result.json');
    expect(Number(step.outputs.rps)).toBeGreaterThan(0);
    expect(Number(step.outputs.p95)).toBeGreaterThan(0);
    expect(Number(step.outputs.p99)).toBeGreaterThanOrEqual(Number(step.outputs.p95));
    expect(step.outputs['error-rate']).toBe('0');
    expect(Number(step.outputs['start-skew'])).toBeGreaterThanOrEqual(0);
    expect(step.summary).toContain('✅ passed');
    expect(step.summary).toContain('| `http_req_duration` | `p(95)<2000` |');
  });

  it('fails the step with one line on a crossed threshold', async () => {
    const script = writeScript(`
import http from 'k6/http';
export const options = { vus: 2, iterations: 20, thresholds: { http_reqs: ['count<5'] } };
export default function () { http.get(__ENV.TARGET + '/'); }
`);
    const step = await runAction('dist/run.js', {
      script,
      runners: '2',
      backend: 'local',
      'k6-args': `-e TARGET=${target.url}`,
    });
    expect(step.code).toBe(1);
    expect(step.outputs.verdict).toBe('failed');
    expect(step.annotations).toContain(
      '::error::k6 distributed run failed: thresholds crossed on the aggregate: http_reqs count<5',
    );
  });

  it('names a bad input', async () => {
    const step = await runAction('dist/run.js', { script: 'missing.js', runners: 'two', backend: 'local' });
    expect(step.code).toBe(1);
    expect(step.annotations).toEqual(['::error::runners: must be a whole number']);
  });
});

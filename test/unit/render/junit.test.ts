import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'test-results-parser';
import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { compareResults, parseTolerances } from '../../../src/compare/compare.ts';
import { renderJUnit, xmlText } from '../../../src/render/junit.ts';
import type { RunResult } from '../../../src/result/schema.ts';
import { makeResult } from '../../support/results.ts';
import { tempDir } from '../../support/temp.ts';

/*
 * The JUnit report (src/render/junit.ts) read by two real consumers from the npm registry:
 * - xmllint-wasm: libxml2, the XML parser under GitLab's JUnit import (Nokogiri) and most CI
 *   servers, compiled to WebAssembly; it refuses a document that is not well-formed XML 1.0;
 * - test-results-parser: the JUnit reader of the testbeats reporting tool, which reads suites and
 *   cases as CI test reports do (totals from `tests`/`failures`, a case with `<failure>` failed, its
 *   `message` the reason).
 */

/** libxml2's verdict on a document: its errors ('' when well-formed). */
async function libxml2Errors(xml: string): Promise<string> {
  const out = await validateXML({ xml: [{ fileName: 'junit.xml', contents: xml }], normalization: 'c14n' });
  return out.errors.map((e) => e.rawMessage).join('\n');
}

/** The document as test-results-parser reads the file a CI job leaves. */
function readAsCi(xml: string) {
  const file = path.join(tempDir('k6d-junit-'), 'junit.xml');
  writeFileSync(file, xml);
  return parse({ type: 'junit', files: [file] });
}

function failedRun(): RunResult {
  const r = makeResult({ verdict: 'failed', p95: 512.3 });
  r.thresholds = [
    { metric: 'http_req_duration', expression: 'p(95)<500', ok: false, observed: 512.3, abortOnFail: false },
    { metric: 'checks', expression: 'rate>0.99', ok: true, observed: 0.999, abortOnFail: false },
  ];
  r.rootGroup.checks = [
    { name: 'status is 200', path: '::status is 200', passes: 40, fails: 0 },
    { name: 'body ok', path: '::body ok', passes: 20, fails: 20 },
  ];
  r.runners[1] = {
    ...r.runners[1]!,
    ok: false,
    exitCode: 108,
    exit: 'exit 108: test.abort()',
    logTail: 'aborted',
  };
  return r;
}

describe('renderJUnit', () => {
  it('one case per threshold, check and runner; failures say what was observed against the limit', async () => {
    const xml = renderJUnit([{ script: 'load.js', result: failedRun() }]);
    expect(await libxml2Errors(xml)).toBe('');
    const read = readAsCi(xml);
    expect([read.total, read.passed, read.failed]).toEqual([6, 3, 3]);
    const cases = read.suites.flatMap((s) => s.cases.map((c) => [s.name, c.name, c.status, c.failure]));
    expect(cases).toEqual([
      ['thresholds', 'http_req_duration: p(95)<500', 'FAIL', 'p(95)=512.3ms, limit p(95)<500'],
      ['thresholds', 'checks: rate>0.99', 'PASS', ''],
      ['checks', 'status is 200', 'PASS', ''],
      ['checks', 'body ok', 'FAIL', '20 of 40 failed'],
      ['runners', 'runner 0 (segment 0:1/2)', 'PASS', ''],
      ['runners', 'runner 1 (segment 1/2:1)', 'FAIL', 'exit 108: test.abort()'],
    ]);
  });

  it('escapes what a check name can hold: markup, quotes, controls, U+202E, unpaired surrogates', async () => {
    const name = `a<b>&c "d" 'e' ]]> tab\there\nline \x01\x1b[31m \u202Egnp.exe \ud800 \uffff`;
    const r = failedRun();
    r.rootGroup.checks = [{ name, path: `::${name}`, passes: 1, fails: 1 }];
    const xml = renderJUnit([{ script: 'load.js', result: r }]);
    expect(await libxml2Errors(xml)).toBe('');
    const check = readAsCi(xml).suites.find((s) => s.name === 'checks')!.cases[0]!;
    expect(check.name).toBe(
      `a<b>&c "d" 'e' ]]> tab here line \\x01\\x1b[31m [U+202E]gnp.exe \\ud800 \\uffff`,
    );
    expect(check.status).toBe('FAIL');
  });

  it('is checked by a consumer that refuses what it should: raw control characters are not XML', async () => {
    // The same check without xmlText: libxml2 refuses it, so the test above can fail.
    expect(
      await libxml2Errors(
        `<testsuites><testsuite name="a\x01" tests="0" failures="0" errors="0"/></testsuites>`,
      ),
    ).not.toBe('');
    expect(await libxml2Errors(`<testsuites name="${'a<b'}"/>`)).not.toBe('');
    expect(xmlText('a\x01<')).toBe('a\\x01&lt;');
  });

  it('adds the comparison: one case per gated metric, a regression a failure; skipped when not judged', async () => {
    const base = makeResult({ p95: 100 });
    const head = makeResult({ p95: 150 });
    const comparison = compareResults(base, head, {
      tolerances: parseTolerances(undefined),
      gate: ['p95', 'rps'],
    });
    const xml = renderJUnit([
      { script: 'load.js', result: head, compared: { verdict: 'regressed', comparison } },
    ]);
    expect(await libxml2Errors(xml)).toBe('');
    const suite = readAsCi(xml).suites.find((s) => s.name === 'comparison')!;
    const byName = Object.fromEntries(suite.cases.map((c) => [c.name, [c.status, c.failure]]));
    expect(Object.keys(byName)).toHaveLength(2);
    const regressed = Object.values(byName).filter(([status]) => status === 'FAIL');
    expect(regressed).toHaveLength(1);
    expect(regressed[0]![1]).toMatch(
      /^regressed: .*p\(95\): 100\.00ms → 150\.00ms \(\+50\.00ms \(\+50\.0%\)\)$/,
    );

    const none = readAsCi(
      renderJUnit([{ script: 'load.js', result: head, compared: { verdict: 'no-baseline' } }]),
    );
    const skipped = none.suites.find((s) => s.name === 'comparison')!.cases;
    expect(skipped.map((c) => [c.name, c.status])).toEqual([['baseline comparison', 'SKIP']]);
  });

  it('several scripts in one file: suites named after their script, a script without a result an error case', async () => {
    const xml = renderJUnit([
      { script: 'api.js', result: makeResult() },
      { script: 'checkout.js', error: 'checkout.js: the script threw at init' },
    ]);
    expect(await libxml2Errors(xml)).toBe('');
    const read = readAsCi(xml);
    expect(read.suites.map((s) => [s.name, s.total, s.failed])).toEqual([
      ['api.js: thresholds', 1, 0],
      ['api.js: checks', 1, 1], // makeResult's check failed 6 times in 6,000
      ['api.js: runners', 2, 0],
      ['checkout.js: run', 1, 1],
    ]);
    expect(read.suites[3]!.cases[0]!.failure).toBe('no result: checkout.js: the script threw at init');
  });
});

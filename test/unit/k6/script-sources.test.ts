import { describe, expect, it } from 'vitest';
import { runnerEntryModule } from '../../../src/k6/entry.ts';
import {
  exportedLifecycle,
  mentionsHandleSummary,
  namedLifecycle,
  scriptReads,
} from '../../../src/k6/script-sources.ts';

// declaredContains is tested with the preflight helpers (test/unit/run/plan.test.ts).

describe("what the script's sources say", () => {
  const none = { vu: false, vuIterations: false, iterationInTest: false, instance: false };
  it.each([
    ['const id = __VU;', { ...none, vu: true }],
    ['exec.vu.idInInstance', { ...none, vu: true }],
    ['exec.vu.idInTest', none],
    ['if (__ITER === 0) {}', { ...none, vuIterations: true }],
    ['exec.vu.iterationInScenario', { ...none, vuIterations: true }],
    ['exec.scenario.iterationInTest', { ...none, iterationInTest: true }],
    ['__VUS __ITERATIONS', none],
    ['__VU + __ITER', { ...none, vu: true, vuIterations: true }],
    ['exec.instance.iterationsCompleted', { ...none, instance: true }],
    ['execution.instance . vusActive', { ...none, instance: true }],
    ['exec.instance.currentTestRunDuration', { ...none, instance: true }],
    ['const instance = 1; instance.name', none],
  ])('%s reads %j', (source, expected) => {
    expect(scriptReads(source)).toEqual(expected);
  });

  it('finds handleSummary as a whole word only', () => {
    expect(mentionsHandleSummary('export function handleSummary(data) {}')).toBe(true);
    expect(mentionsHandleSummary('const myhandleSummary = 1; handleSummaryTimeout')).toBe(false);
  });

  it.each([
    ['export function setup() {}', true],
    ['export async function setup() {}', true],
    ['export const setup = () => 1;', true],
    ['function s() {}\nexport { s as setup, other };', true],
    ['export { x, setup } from "./lib.js";', true],
    ['exports.setup = function () {};', true],
    ['export default function () {}', false],
    ['// no setup() here\nfunction setup() {}\nexport { setup as prepare };', false],
    ['export function setupData() {}', false],
  ])('%j exports setup(): %s', (source, expected) => {
    expect(exportedLifecycle(source).setup).toBe(expected);
  });

  it('tells teardown() apart from setup()', () => {
    expect(exportedLifecycle('export function teardown() {}')).toEqual({ setup: false, teardown: true });
  });

  it('names setup() and teardown() wherever they are exported, even where the export patterns miss them', () => {
    // CommonJS by object: exportedLifecycle misses it, so a runner is asked all the same.
    const commonJs = 'function setup() {}\nfunction teardown() {}\nmodule.exports = { setup, teardown };';
    expect(exportedLifecycle(commonJs)).toEqual({ setup: false, teardown: false });
    expect(namedLifecycle(commonJs)).toEqual({ setup: true, teardown: true });
    expect(namedLifecycle('export { x as "teardown" };')).toEqual({ setup: false, teardown: true });
    expect(namedLifecycle('export default function () {}\nconst setupData = 1;')).toEqual({
      setup: false,
      teardown: false,
    });
  });

  it('finds no name of setup() or teardown() in the runner entry module the archive holds', () => {
    const entry = runnerEntryModule({
      script: '/tmp/load.js',
      thresholds: { a: ['rate>=0'] },
      runsDefault: true,
    });
    expect(namedLifecycle(entry)).toEqual({ setup: false, teardown: false });
  });
});

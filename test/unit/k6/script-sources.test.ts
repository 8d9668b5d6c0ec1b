import { describe, expect, it } from 'vitest';
import { exportedLifecycle, mentionsHandleSummary, scriptReads } from '../../../src/k6/script-sources.ts';

// declaredContains is tested with the preflight helpers (test/unit/run/plan.test.ts).

describe("what the script's sources say", () => {
  it.each([
    ['const id = __VU;', { vu: true, vuIterations: false }],
    ['exec.vu.idInInstance', { vu: true, vuIterations: false }],
    ['exec.vu.idInTest', { vu: false, vuIterations: false }],
    ['if (__ITER === 0) {}', { vu: false, vuIterations: true }],
    ['exec.vu.iterationInScenario', { vu: false, vuIterations: true }],
    ['exec.scenario.iterationInTest', { vu: false, vuIterations: false }],
    ['__VUS __ITERATIONS', { vu: false, vuIterations: false }],
    ['__VU + __ITER', { vu: true, vuIterations: true }],
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
});

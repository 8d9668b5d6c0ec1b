/**
 * The k6 script of a calibration run: a constant-arrival-rate scenario at `rate` req/s for
 * `durationS` seconds, one GET per iteration to the target's shape path with the cell's factor.
 * Every VU is allocated before the start (`preAllocatedVUs` = `maxVUs`): a VU initialised mid-test
 * drops iterations while it starts, which the product rightly calls a saturated generator, so a
 * well-sized cell must not do it; the saturated cell is made by a `maxVUs` too low instead.
 * Every request is tagged with its window (`w`: whole `windowS` seconds since the scenario's start)
 * and each window has a thresholds that always hold (`p(95)>=0`, …): that is only so that k6, and the
 * product's merge, keep each window's own count and percentiles in the result (`http_req_duration{w:N}`),
 * the interval data the bench's block bootstrap resamples.
 */
export interface ScriptOptions {
  shape: 'mixed' | 'cpu';
  rate: number;
  durationS: number;
  windowS: number;
  /** k6's `maxVUs` (the whole test's; the product splits it over the runners). */
  maxVUs: number;
}

/** Number of windows a run of `durationS` is cut into. */
export const windowCount = (durationS: number, windowS: number): number => Math.ceil(durationS / windowS);

/** The script's source text. */
export function calibrationScript(o: ScriptOptions): string {
  const thresholds = Object.fromEntries(
    Array.from({ length: windowCount(o.durationS, o.windowS) }, (_, w) => [
      `http_req_duration{w:${w}}`,
      // p(50), p(90), p(95), p(99), p(99.9) are in every trend's figures already; the others are asked for.
      ['p(75)>=0', 'p(95)>=0', 'p(97)>=0', 'p(98)>=0'],
    ]),
  );
  return `
import http from 'k6/http';
import exec from 'k6/execution';
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: ${o.rate}, timeUnit: '1s',
    duration: '${o.durationS}s', preAllocatedVUs: ${o.maxVUs}, maxVUs: ${o.maxVUs} } },
  thresholds: ${JSON.stringify(thresholds)},
};
const W = ${o.windowS * 1000};
const LAST = ${windowCount(o.durationS, o.windowS) - 1};
export default function () {
  const w = Math.min(LAST, Math.floor((Date.now() - exec.scenario.startTime) / W));
  http.get(__ENV.TARGET + '/${o.shape}?f=' + __ENV.FACTOR, { tags: { w: String(w) } });
}
`;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingTarget, startNodeTarget } from '../../src/demo/target.ts';
import { compareFields, type EquivalenceCase, type Fields, runK6, runProduct } from './harness.ts';

// Issue #9: a test split over N runners answers as one `k6 run` of the whole test would.
// Each case runs once as a plain `k6 run` (real k6 v2.2.0) and as the product (the CLI, real k6
// runners) with N = 1, 2 and 4, against a real HTTP server on 127.0.0.1; every deterministic
// field is compared. Cases the product does not get right yet are `it.fails` with the issue row
// named: they pass while the difference is there and fail once it is fixed (then drop the marker).
// bench/equivalence.ts prints the same table with every difference.

/** Declares the equivalence tests of `cases` (one describe per case, one test per runner count). */
export function equivalenceSuite(cases: readonly EquivalenceCase[]): void {
  let target: RecordingTarget;
  beforeAll(async () => {
    target = await startNodeTarget();
  });
  afterAll(async () => {
    await target.stop();
  });

  describe.each(cases)('$name ($covers)', (c) => {
    let k6: Promise<Fields> | undefined;
    const plain = () => {
      k6 ??= runK6(c, target.url);
      return k6;
    };
    for (const runners of [1, 2, 4]) {
      const known = c.knownFailing?.runners.includes(runners);
      const title = known
        ? `N=${runners}: known to differ (issue #9 row: ${c.knownFailing!.row})`
        : `N=${runners}: same answer as k6 run`;
      (known ? it.fails : it)(title, async () => {
        const product = await runProduct(c, target.url, runners);
        expect(compareFields(await plain(), product)).toEqual([]);
      });
    }
  });
}

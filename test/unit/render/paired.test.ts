import { describe, expect, it } from 'vitest';
import { buildAbResult } from '../../../src/compare/ab-result.ts';
import { renderPairedSection } from '../../../src/render/paired.ts';
import { makeResult } from '../../support/results.ts';

/*
 * The paired section (src/render/paired.ts) shows what the judgement decided: a saturated round's
 * warning and an interruption, the sides' values as given (inert), the verdict words.
 */

const sides = ['A', 'B', 'B', 'A'] as const;
function ab(saturatedRound?: number, interrupted = false) {
  return buildAbResult({
    script: 'load.js',
    a: { label: 'base', env: { BASE_URL: 'http://a`|<!--' }, k6Args: [] },
    b: { label: 'head *pr*', env: {}, k6Args: ['--tag', 'side=b'] },
    rounds: sides.map((side, i) => ({
      round: i + 1,
      block: 1,
      side,
      result: makeResult(
        { p95: side === 'B' ? 30 : 20 },
        i + 1 === saturatedRound
          ? {
              loadGenerator: {
                saturated: true,
                reasons: ['runner 1 dropped 112 of 1,000 iterations (11.2%)'],
              },
            }
          : {},
      ),
    })),
    interrupted,
  });
}

describe('renderPairedSection', () => {
  it('warns of a saturated round, and every verdict is inconclusive', () => {
    const md = renderPairedSection(ab(3));
    expect(md).toContain('### 🟡 A/B rounds: inconclusive');
    expect(md).toContain(
      '⚠️ The load generator saturated in round 3 (B): runner 1 dropped 112 of 1,000 iterations \\(11.2%\\). No comparison is judged on it.',
    );
    expect(md).toMatch(
      /\*\*inconclusive\*\* at the 95% level: the load generator saturated in round 3 \\\(B\\\)/,
    );
    expect(md).toContain('| 3 | 1 | B |');
    expect(md).toContain('passed ⚠️ saturated |');
    expect(md).not.toContain('🔴');
  });

  it('shows each side as given, inert, and an interruption', () => {
    const md = renderPairedSection(ab(undefined, true));
    expect(md).toContain("- **A**: base (`BASE_URL=http://a'¦<!--`)");
    expect(md).toContain('- **B**: head \\*pr\\* (`--tag side=b`)');
    expect(md).toContain('⚠️ Interrupted: only 4 rounds ran.');
    expect(md).toMatch(
      /\| Latency p95 \| 20\.00ms \| 30\.00ms \| \+50\.0% \| \+50\.0% to \+50\.0% \| \+10\.0% \| 🔴 regressed \|/,
    );
    expect(md).toContain('| Latency p50 (not gated) |');
  });
});

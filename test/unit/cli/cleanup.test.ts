import { describe, expect, it } from 'vitest';
import { cleanupSelector } from '../../../src/cli/cleanup.ts';
import { main } from '../../../src/cli/index.ts';

describe('k6-distributed cleanup', () => {
  it('selects one run by its id, or every run of the namespace', () => {
    expect(cleanupSelector({ runId: 'rmi3x1abc123' })).toBe('k6-distributed.io/run-id=rmi3x1abc123');
    expect(cleanupSelector({ all: true })).toBe(
      'app.kubernetes.io/managed-by=k6-distributed,k6-distributed.io/run-id',
    );
  });

  it('refuses, in one line naming the flag, no run, both, or a run id that is not one', () => {
    expect(() => cleanupSelector({})).toThrow(
      /^cleanup: give --run-id ID \(the id `run` printed\) or --all$/,
    );
    expect(() => cleanupSelector({ runId: 'r1', all: true })).toThrow(
      '--run-id, --all: give one of them, not both',
    );
    expect(() => cleanupSelector({ runId: 'R1;rm' })).toThrow(/^--run-id: "R1;rm" is not a run id/);
  });

  it('exits 2 on bad input before it loads any credentials', async () => {
    expect(await main(['cleanup', '--run-id', 'Bad!', '--kubeconfig', '/nonexistent'])).toBe(2);
    expect(await main(['cleanup', '--namespace', 'Not_A_Namespace', '--all'])).toBe(2);
    expect(await main(['cleanup', '--all', '--kubeconfig', '/nonexistent/kubeconfig'])).toBe(2);
  });
});

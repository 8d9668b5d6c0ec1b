import { describe, expect, it } from 'vitest';
import { envTrue, noColorGiven } from '../../../src/k6/flags.ts';

// splitK6Args is tested with the run plan (test/unit/run/plan.test.ts).

describe("k6's boolean environment variables (Go strconv.ParseBool)", () => {
  it.each([
    ['1', true],
    ['t', true],
    ['T', true],
    ['true', true],
    ['TRUE', true],
    ['True', true],
    [undefined, false],
    ['', false],
    ['0', false],
    ['yes', false],
    ['tRUE', false],
    [' true', false],
  ])('%j is %s', (value, expected) => {
    expect(envTrue(value)).toBe(expected);
  });
});

describe('noColorGiven (k6 cmd/state)', () => {
  it.each([
    [['--no-color'], {}, true],
    [[], { NO_COLOR: '' }, true],
    [[], { NO_COLOR: 'false' }, true],
    [[], { K6_NO_COLOR: 'true' }, true],
    [[], { K6_NO_COLOR: 'false' }, false],
    [['--vus', '1'], {}, false],
  ])('flags %j with environment %j: %s', (args, env, expected) => {
    expect(noColorGiven(args, env)).toBe(expected);
  });
});

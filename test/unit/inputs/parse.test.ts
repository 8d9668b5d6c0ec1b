import { describe, expect, it } from 'vitest';
import { parseReportInputs } from '../../../src/actions/report/inputs.ts';
import { readRunInputs } from '../../../src/actions/run/inputs.ts';
import { readMainInputs } from '../../../src/actions/run-and-report/inputs.ts';
import { parseRunConfig, RUN_CONFIG_FLAGS, RUN_CONFIG_INPUTS } from '../../../src/config.ts';
import { DEFAULTS } from '../../../src/inputs/defaults.ts';
import { blankToUndefined } from '../../../src/inputs/parse.ts';
import { parseKeyValueLines } from '../../../src/inputs/values.ts';

/** `core.getInput` over a map: '' for an input that is not set, as in a workflow. */
const getInput = (inputs: Record<string, string>) => (name: string) => inputs[name] ?? '';

describe('the input toolkit', () => {
  it('treats blank values as not given, so that defaults apply', () => {
    expect(blankToUndefined({ a: '', b: '  ', c: undefined, d: null, e: ' x ', f: 0 })).toEqual({
      e: 'x',
      f: 0,
    });
    const config = parseRunConfig({ script: 'a.js', graceS: '', runners: '  ' });
    expect(config.graceS).toBe(DEFAULTS.graceS);
    expect(config.runners).toBe(DEFAULTS.runners);
  });

  it.each([
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['false', false],
    ['False', false],
    ['FALSE', false],
  ])('reads the boolean %s as core.getBooleanInput does, in every action', (text, value) => {
    expect(readRunInputs(getInput({ script: 'a.js', 'job-summary': text })).jobSummary).toBe(value);
    expect(parseReportInputs({ 'github-token': 't', 'fail-on-regression': text }).failOnRegression).toBe(
      value,
    );
    const root = readMainInputs(getInput({ script: 'a.js', 'github-token': 't', report: text }));
    expect(root.report !== undefined).toBe(value);
  });

  it.each([
    ['job-summary', (text: string) => readRunInputs(getInput({ script: 'a.js', 'job-summary': text }))],
    [
      'fail-on-regression',
      (text: string) => parseReportInputs({ 'github-token': 't', 'fail-on-regression': text }),
    ],
    [
      'report',
      (text: string) => readMainInputs(getInput({ script: 'a.js', 'github-token': 't', report: text })),
    ],
  ])('refuses a boolean %s that is not true or false, naming the input', (input, read) => {
    expect(() => read('yes')).toThrowError(`${input}: "yes" is not one of true, false`);
  });

  it.each([
    ['the CLI', RUN_CONFIG_FLAGS, '--grace: must be more than 0 seconds; --runners: must be at least 1'],
    ['an action', RUN_CONFIG_INPUTS, 'grace: must be more than 0 seconds; runners: must be at least 1'],
  ])('names each invalid setting as %s user writes it', (_caller, names, message) => {
    expect(() => parseRunConfig({ script: 'a.js', graceS: '0', runners: '0' }, names)).toThrowError(
      // zod reports in schema order: runners before graceS.
      message.split('; ').reverse().join('; '),
    );
  });

  it('reads KEY=value lines, skipping blanks and comments', () => {
    expect(parseKeyValueLines('env', 'A=1\n\n# note\n B = two=2 ')).toEqual([
      ['A', '1'],
      ['B', 'two=2'],
    ]);
    expect(() => parseKeyValueLines('env', 'A')).toThrowError('env: "A" is not KEY=value');
  });

  it('reads an action duration in seconds and refuses one at or below 0', () => {
    expect(readRunInputs(getInput({ script: 'a.js', 'schedule-timeout': '30' })).scheduleTimeoutS).toBe(30);
    expect(() => readRunInputs(getInput({ script: 'a.js', 'schedule-timeout': '0' }))).toThrowError(
      'schedule-timeout: must be more than 0 seconds',
    );
  });
});

describe('k6-args with a quote left open (issue 25, defect 3)', () => {
  it('is refused in one line naming the input, where string-argv dropped the quote silently', () => {
    expect(() => parseRunConfig({ script: 'a.js', k6Args: "-e 'A=1" }, RUN_CONFIG_INPUTS)).toThrowError(
      /^k6-args: the ' at character 4 is never closed: -e 'A=1$/,
    );
    expect(() => parseRunConfig({ script: 'a.js', k6Args: '--tag "a=b' }, RUN_CONFIG_FLAGS)).toThrowError(
      /^--k6-args: the " at character 7 is never closed/,
    );
  });

  it('takes balanced quotes, one kind inside the other', () => {
    expect(parseRunConfig({ script: 'a.js', k6Args: `-e 'A=1 2' --tag "x=it's"` }).k6Args).toEqual([
      '-e',
      'A=1 2',
      '--tag',
      "x=it's",
    ]);
  });
});

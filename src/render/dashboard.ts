import { ConfigurationError } from '../errors.ts';
import type { RunResult } from '../result/schema.ts';
import { escapeMarkdown } from './format.ts';

/**
 * The link to the user's dashboard (the `dashboard-url` input), narrowed to one run: its time range
 * and its run id (the `k6d_run` tag, src/run/plan.ts `RUN_TAG`).
 *
 * The URL may carry placeholders: `{from}` and `{to}` become the run's start and end in epoch ms
 * (Grafana's `from`/`to` URL parameters take epoch ms), `{run}` the run id. A URL without any
 * placeholder gets `from=<start ms>&to=<end ms>` and, when the result has a run id,
 * `var-k6d_run=<run id>` (a Grafana dashboard variable of that name, if it has one, then filters
 * to the run: examples/grafana-dashboard.json has it, test/examples/grafana-dashboard.test.ts
 * opens it with this link) appended to its query.
 */

/**
 * Checks the `dashboard-url` input.
 * @param input the input's name as the user wrote it, for the error.
 * @throws ConfigurationError when the value is not an http(s) URL.
 */
export function parseDashboardUrl(value: string | undefined, input = 'dashboard-url'): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const url = value.trim();
  let parsed: URL;
  try {
    // Placeholders are not valid in every position of a URL: check the URL with them filled.
    parsed = new URL(url.replace(/\{(from|to|run)\}/g, '0'));
  } catch {
    throw new ConfigurationError(`${input}: "${url}" is not a URL (e.g. https://grafana.example.com/d/k6)`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new ConfigurationError(`${input}: "${url}" must start with https:// or http://`);
  return url;
}

/** The dashboard URL for one run (see the module's rules for placeholders). */
export function dashboardUrlFor(
  template: string,
  result: Pick<RunResult, 'startedAt' | 'endedAt' | 'runId'>,
): string {
  const from = String(Date.parse(result.startedAt));
  const to = String(Date.parse(result.endedAt));
  const run = result.runId ?? '';
  if (/\{(from|to|run)\}/.test(template))
    return template
      .replaceAll('{from}', from)
      .replaceAll('{to}', to)
      .replaceAll('{run}', encodeURIComponent(run));
  const url = new URL(template);
  url.searchParams.set('from', from);
  url.searchParams.set('to', to);
  if (result.runId) url.searchParams.set('var-k6d_run', result.runId);
  return url.toString();
}

/** One Markdown line with the link, e.g. `📈 [Dashboard of this run](…) (run r…, 08:00:00–08:00:15 UTC)`. */
export function dashboardMarkdown(
  template: string,
  result: Pick<RunResult, 'startedAt' | 'endedAt' | 'runId'>,
): string {
  const time = (iso: string) => iso.slice(11, 19);
  const run = result.runId ? `run \`${result.runId.replace(/`/g, '')}\`, ` : '';
  const href = dashboardUrlFor(template, result).replace(/\)/g, '%29').replace(/ /g, '%20');
  return `📈 [Dashboard of this run](${href}) (${run}${escapeMarkdown(time(result.startedAt))}–${escapeMarkdown(time(result.endedAt))} UTC)`;
}

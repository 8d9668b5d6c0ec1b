import { htmlEntities, showBidiControls } from '../format.ts';
import { CHART_JS_SOURCE, CHART_JS_VERSION } from './vendor/chartjs.ts';

/**
 * What the self-contained HTML pages share (the HTML report, src/render/html/report.ts, and the
 * history branch's trend page, trend-page.ts): escaping, `<script>`-safe JSON, and the document
 * around the parts with Chart.js inlined.
 */

/**
 * Text as HTML text or attribute value: `& < > " '` become entities, and bidirectional controls
 * are shown as their code points (`[U+202E]`, src/render/format.ts), so user text reads as stored.
 */
export function escapeHtml(text: string): string {
  return htmlEntities(showBidiControls(text));
}

/** JSON that is safe inside a `<script>` element: `<`, U+2028 and U+2029 are escaped. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** What {@link chartPage} assembles. */
export interface ChartPage {
  title: string;
  style: string;
  /** Attributes of `<body>`, already escaped. */
  bodyAttributes: string;
  /** The body's HTML, in order. */
  parts: string[];
  /** The charts' data, embedded as `<script type="application/json" id="…">`. */
  data: { id: string; value: unknown };
  /** The page's own script, run after Chart.js. */
  script: string;
}

/**
 * A self-contained HTML document with charts (the HTML report, the history branch's trend page):
 * the parts, a footer that credits Chart.js, the data as `<script>`-safe JSON, Chart.js inlined
 * and the page's script.
 */
export function chartPage(page: ChartPage): string {
  // No `</script` can occur in Chart.js' code today; escaping keeps it so after an update.
  const chartJs = CHART_JS_SOURCE.replace(/<\/(script)/gi, '<\\/$1');
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(page.title)}</title><style>${page.style}</style></head>`,
    `<body ${page.bodyAttributes}>`,
    ...page.parts,
    `<footer>k6-distributed · charts by Chart.js ${escapeHtml(CHART_JS_VERSION)} (MIT), inlined</footer>`,
    `<script type="application/json" id="${page.data.id}">${scriptJson(page.data.value)}</script>`,
    `<script>${chartJs}</script>`,
    `<script>${page.script}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

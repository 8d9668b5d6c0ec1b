import path from 'node:path';
import { writeOutputFile } from '../../output-file.ts';
import { type HtmlReportInput, renderHtmlReport } from './report.ts';

/**
 * Where the HTML report of a result goes: next to the result JSON, same name with `.html`
 * (`k6-distributed-result.json` -> `k6-distributed-result.html`; a name without `.json` gets
 * `.html` appended).
 */
export function htmlReportPath(resultPath: string): string {
  const ext = path.extname(resultPath);
  return ext.toLowerCase() === '.json' ? `${resultPath.slice(0, -ext.length)}.html` : `${resultPath}.html`;
}

/**
 * Renders the self-contained HTML report (src/render/html/report.ts) and writes it atomically
 * (src/output-file.ts: all of it or, on failure, the previous file left as it was).
 * @throws Error `could not write <file>: <reason>`.
 */
export async function writeHtmlReport(file: string, input: HtmlReportInput): Promise<void> {
  await writeOutputFile(file, renderHtmlReport(input));
}

import {
  BASELINE_METADATA_FILE,
  baselineArtifactName,
  HTML_REPORT_FILE,
  RESULT_FILE,
  uploadFiles,
} from '../../github/artifacts.ts';
import type { BaselineMetadata } from '../../github/baseline.ts';
import { defaultTitle } from '../../pr-comment/sections.ts';
import { inlineCode } from '../../render/format.ts';
import { renderHtmlReport } from '../../render/html/report.ts';
import { renderReport } from '../../render/markdown.ts';
import { readRunResult } from '../../result/read-result.ts';
import { storeInHistoryBranch } from './history.ts';
import type { ReportActionInputs } from './inputs.ts';
import { emptyOutputs, type ReportDeps, type ReportOutcome } from './outcome.ts';

// The `store` mode: this run's result becomes the baseline of its branch.

function branchOf(ref: string): string {
  return ref.replace(/^refs\/(heads|tags)\//, '');
}

export async function store(inputs: ReportActionInputs, deps: ReportDeps): Promise<ReportOutcome> {
  const { ctx } = deps;
  const head = await readRunResult(inputs.resultPath, 'result');
  const name = baselineArtifactName(inputs.key);
  const metadata: BaselineMetadata = {
    schema: 'k6-distributed/baseline@1',
    ...head.environment,
    key: inputs.key,
    sha: ctx.sha,
    ref: ctx.ref,
    repository: `${ctx.owner}/${ctx.repo}`,
    workflow: ctx.workflow,
    job: ctx.job,
    runId: ctx.workflowRunId,
    runAttempt: ctx.runAttempt,
    createdAt: new Date().toISOString(),
  };
  const title = inputs.title ?? defaultTitle(inputs.key);
  const stored = `_This result is stored as the baseline for ${inlineCode(branchOf(ctx.ref))} (artifact \`${name}\`): pull requests into it are compared with it._`;
  const options = {
    title,
    charts: true,
    ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
  };
  await deps.writeSummary(`${renderReport(head, options)}\n${stored}\n`);
  const dir = await deps.tempDir('k6d-baseline-');
  const uploaded = await uploadFiles(
    deps.transfer,
    name,
    {
      [RESULT_FILE]: `${JSON.stringify(head, null, 2)}\n`,
      [BASELINE_METADATA_FILE]: `${JSON.stringify(metadata, null, 2)}\n`,
      // The self-contained report, to open from the run's artifacts.
      [HTML_REPORT_FILE]: renderHtmlReport({
        result: head,
        title,
        ...(inputs.dashboardUrl ? { dashboardUrl: inputs.dashboardUrl } : {}),
      }),
    },
    dir,
    inputs.retentionDays,
  );
  deps.log(
    `stored ${name} (artifact ${uploaded.id ?? '?'}, ${uploaded.size ?? '?'} bytes) for ${ctx.ref} at ${ctx.sha}`,
  );
  // After the artifact: the history branch is a help, its failure a warning.
  const warnings = await storeInHistoryBranch(inputs, deps, head);
  return {
    outputs: {
      ...emptyOutputs('store'),
      verdict: 'stored',
      'run-verdict': head.verdict,
      'artifact-id': uploaded.id === undefined ? '' : String(uploaded.id),
    },
    annotations: [],
    warnings,
  };
}

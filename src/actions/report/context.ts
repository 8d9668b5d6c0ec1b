import { context as githubContext } from '@actions/github';

/**
 * What the report action needs from the workflow run (GITHUB_* variables and the event payload),
 * as a plain object so the logic can be tested without environment variables.
 */
export interface ActionContext {
  /** `pull_request`, `push`, `workflow_run`, … (GITHUB_EVENT_NAME). */
  eventName: string;
  /** The event payload (GITHUB_EVENT_PATH). */
  payload: Record<string, unknown>;
  owner: string;
  repo: string;
  /** The GitHub Actions workflow run id (GITHUB_RUN_ID), not a load test id. */
  workflowRunId: number;
  runAttempt: number;
  /** e.g. https://github.com */
  serverUrl: string;
  /** e.g. https://api.github.com */
  apiUrl: string;
  /** The workflow's name (GITHUB_WORKFLOW). */
  workflow: string;
  /** The job id (GITHUB_JOB). */
  job: string;
  /** e.g. refs/heads/main (GITHUB_REF). */
  ref: string;
  /** The commit of the run (GITHUB_SHA). */
  sha: string;
  /** `owner/repo/.github/workflows/file.yml@ref` (GITHUB_WORKFLOW_REF), when set. */
  workflowRef?: string;
}

/** The context of the running workflow, from the environment. */
export function actionContext(env: NodeJS.ProcessEnv = process.env, c = githubContext): ActionContext {
  const [owner = '', repo = ''] = (env.GITHUB_REPOSITORY ?? '').split('/');
  return {
    eventName: c.eventName,
    payload: c.payload as Record<string, unknown>,
    owner,
    repo,
    workflowRunId: c.runId,
    runAttempt: c.runAttempt,
    serverUrl: c.serverUrl,
    apiUrl: c.apiUrl,
    workflow: c.workflow,
    job: c.job,
    ref: c.ref,
    sha: c.sha,
    ...(env.GITHUB_WORKFLOW_REF ? { workflowRef: env.GITHUB_WORKFLOW_REF } : {}),
  };
}

/** The URL of a workflow run page. */
export function runUrl(ctx: Pick<ActionContext, 'serverUrl' | 'owner' | 'repo'>, runId: number): string {
  return `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/actions/runs/${runId}`;
}

/** The workflow file name from GITHUB_WORKFLOW_REF (`perf.yml`), usable as a REST workflow_id. */
export function workflowFileFromRef(workflowRef: string | undefined): string | undefined {
  return workflowRef ? /\.github\/workflows\/([^@/]+)@/.exec(workflowRef)?.[1] : undefined;
}

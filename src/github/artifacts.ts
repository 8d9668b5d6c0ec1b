import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactClient } from '@actions/artifact';
import type { GitHub } from './client.ts';

/**
 * Artifacts of this action: the baseline (a run's result and its metadata, stored by runs on a
 * branch) and the report bundle (a fork PR's rendered report, posted by a `workflow_run`
 * workflow).
 *
 * Listing goes through the REST API, which also reports `expired` artifacts
 * (docs.github.com/en/rest/actions/artifacts, "List workflow run artifacts",
 * `GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts?name=`); @actions/artifact's own
 * list leaves them out. Upload and download go through @actions/artifact: upload needs the
 * runner's artifact service (ACTIONS_RUNTIME_TOKEN), download of another run's artifact uses
 * `findBy` and the REST "Download an artifact" redirect to blob storage.
 */

/** The part of @actions/artifact's client this action uses; tests give a fake upload. */
export type ArtifactTransfer = Pick<ArtifactClient, 'uploadArtifact' | 'downloadArtifact'>;

/** File names inside the artifacts. */
export const RESULT_FILE = 'k6-distributed-result.json';
export const BASELINE_METADATA_FILE = 'k6-distributed-baseline.json';
/** The HTML report (src/render/html/report.ts) stored with the result in the baseline artifact. */
export const HTML_REPORT_FILE = 'k6-distributed-report.html';
export const BUNDLE_JSON_FILE = 'report.json';
export const BUNDLE_MARKDOWN_FILE = 'report.md';

/** The baseline artifact of a key: `k6-distributed-baseline-<key>`. */
export function baselineArtifactName(key: string): string {
  return `k6-distributed-baseline-${key}`;
}

/** The report bundle artifact of a key: `k6-distributed-report-<key>`. */
export function bundleArtifactName(key: string): string {
  return `k6-distributed-report-${key}`;
}

/** One artifact of a workflow run, as the REST API lists it. */
export interface RunArtifact {
  id: number;
  name: string;
  sizeInBytes: number;
  expired: boolean;
  createdAt?: string;
  expiresAt?: string;
}

/** A workflow run in the repository, and how to reach it with the token. */
export interface RunRef {
  owner: string;
  repo: string;
  workflowRunId: number;
}

/**
 * The newest artifact called `name` in a run (there can be several after re-runs), expired or not.
 * @returns undefined when the run has none.
 */
export async function findRunArtifact(
  gh: GitHub,
  run: RunRef,
  name: string,
): Promise<RunArtifact | undefined> {
  const { data } = await gh.rest.actions.listWorkflowRunArtifacts({
    owner: run.owner,
    repo: run.repo,
    run_id: run.workflowRunId,
    name,
    per_page: 100,
  });
  const matches = data.artifacts.filter((a) => a.name === name).sort((a, b) => b.id - a.id);
  const a = matches[0];
  if (!a) return undefined;
  return {
    id: a.id,
    name: a.name,
    sizeInBytes: a.size_in_bytes,
    expired: a.expired,
    ...(a.created_at ? { createdAt: a.created_at } : {}),
    ...(a.expires_at ? { expiresAt: a.expires_at } : {}),
  };
}

/**
 * Downloads and unpacks another run's artifact into `dir`.
 * @throws when the download fails (@actions/artifact retries the blob download itself).
 */
export async function downloadRunArtifact(
  transfer: ArtifactTransfer,
  run: RunRef,
  artifactId: number,
  token: string,
  dir: string,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await transfer.downloadArtifact(artifactId, {
    path: dir,
    findBy: { token, workflowRunId: run.workflowRunId, repositoryOwner: run.owner, repositoryName: run.repo },
  });
}

/**
 * Writes `files` (name -> content) into `dir` and uploads them as one artifact of this run.
 * @returns the artifact id (absent when the service does not say).
 */
export async function uploadFiles(
  transfer: ArtifactTransfer,
  name: string,
  files: Record<string, string>,
  dir: string,
  retentionDays?: number,
): Promise<{ id?: number; size?: number }> {
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (const [file, content] of Object.entries(files)) {
    const p = path.join(dir, file);
    await writeFile(p, content);
    paths.push(p);
  }
  return transfer.uploadArtifact(name, paths, dir, retentionDays === undefined ? {} : { retentionDays });
}

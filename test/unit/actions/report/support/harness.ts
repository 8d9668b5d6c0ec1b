import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DefaultArtifactClient } from '@actions/artifact';
import type { ActionContext } from '../../../../../src/actions/report/context.ts';
import type { ReportDeps } from '../../../../../src/actions/report/outcome.ts';
import type { ArtifactTransfer } from '../../../../../src/github/artifacts.ts';
import { prContext, testGitHub } from '../../../../support/github.ts';
import { tempDir } from '../../../../support/temp.ts';

/** One artifact the action uploaded: its name, each file's text by base name, its retention. */
export interface Upload {
  name: string;
  files: Record<string, string>;
  retentionDays?: number;
}

/**
 * The artifact upload service (Twirp with ACTIONS_RUNTIME_TOKEN, then a signed blob upload) cannot
 * run here, so uploads go to this fake, which keeps what was uploaded. Downloads of another run's
 * artifacts use the real @actions/artifact client, through nock (REST redirect + blob).
 */
export function fakeTransfer(): { transfer: ArtifactTransfer; uploads: Upload[] } {
  const real = new DefaultArtifactClient();
  const uploads: Upload[] = [];
  const transfer: ArtifactTransfer = {
    uploadArtifact: async (name, files, _root, options) => {
      const contents: Record<string, string> = {};
      for (const f of files) contents[path.basename(f)] = await readFile(f, 'utf8');
      uploads.push({
        name,
        files: contents,
        ...(options?.retentionDays ? { retentionDays: options.retentionDays } : {}),
      });
      return { id: 8000 + uploads.length, size: 1234 };
    },
    downloadArtifact: (id, options) => real.downloadArtifact(id, options),
  };
  return { transfer, uploads };
}

/**
 * The report action's dependencies for a test: the GitHub client on nock, the fake transfer above,
 * and the job summaries and log lines kept for the test to read.
 */
export function reportHarness(ctx: ActionContext = prContext()) {
  const { transfer, uploads } = fakeTransfer();
  const summaries: string[] = [];
  const logs: string[] = [];
  const deps: ReportDeps = {
    gh: testGitHub(),
    transfer,
    token: 'ghs_test',
    ctx,
    log: (l) => logs.push(l),
    writeSummary: async (m) => {
      summaries.push(m);
    },
    tempDir: async (prefix) => tempDir(prefix),
  };
  return { deps, uploads, summaries, logs };
}

import { errorMessage } from '../errors.ts';
import { type GitHub, httpStatus } from './client.ts';

/**
 * Finding the pull request a `workflow_run` belongs to. The event lists its pull requests only
 * for branches of the same repository (`workflow_run.pull_requests` is empty for forks), so the
 * report bundle carries the number; as the bundle comes from a fork's run it is checked against
 * the run's head (same head SHA, or same head repository and branch) before it is used. Last, the
 * PRs associated with the head commit are asked for.
 *
 * REST (docs.github.com/en/rest): "Get a pull request" `GET /repos/{owner}/{repo}/pulls/{pull_number}`;
 * "List pull requests associated with a commit" `GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls`.
 */

/** The triggering run's head, from the `workflow_run` payload. */
export interface RunHead {
  owner: string;
  repo: string;
  headSha: string;
  /** `workflow_run.head_branch`. */
  headBranch?: string;
  /** `workflow_run.head_repository.full_name`. */
  headRepository?: string;
  /** `workflow_run.pull_requests[]` (same-repository PRs only): number and base branch. */
  eventPulls: Array<{ number: number; base: { ref: string; sha?: string } }>;
}

/** How the PR was found, and its base branch (where its baseline is looked for). */
export interface FoundPull {
  number: number;
  how: 'event' | 'bundle' | 'head-sha';
  baseRef: string;
  baseSha?: string;
}

interface PullLike {
  number: number;
  state?: string;
  head: { sha: string; ref: string; repo: { full_name: string } | null };
  base: { ref: string; sha?: string };
}

/** The base branch of `pr`, as {@link FoundPull} carries it. */
function baseOf(pr: { base: { ref: string; sha?: string } }): Pick<FoundPull, 'baseRef' | 'baseSha'> {
  return { baseRef: pr.base.ref, ...(pr.base.sha ? { baseSha: pr.base.sha } : {}) };
}

function matches(pr: PullLike, head: RunHead): boolean {
  if (pr.head.sha === head.headSha) return true;
  return (
    head.headBranch !== undefined &&
    head.headRepository !== undefined &&
    pr.head.ref === head.headBranch &&
    pr.head.repo?.full_name.toLowerCase() === head.headRepository.toLowerCase()
  );
}

/**
 * Finds the PR: the event's own PR, else the bundle's number once checked, else by head SHA.
 * @returns undefined when none matches.
 */
export async function findPullRequest(
  gh: GitHub,
  head: RunHead,
  bundleNumber: number | undefined,
  log: (line: string) => void = () => {},
): Promise<FoundPull | undefined> {
  const fromEvent = head.eventPulls[0];
  if (fromEvent !== undefined) return { number: fromEvent.number, how: 'event', ...baseOf(fromEvent) };
  if (bundleNumber !== undefined) {
    try {
      const { data } = await gh.rest.pulls.get({
        owner: head.owner,
        repo: head.repo,
        pull_number: bundleNumber,
      });
      if (matches(data, head)) return { number: bundleNumber, how: 'bundle', ...baseOf(data) };
      log(
        `pull request #${bundleNumber} of the bundle has head ${data.head.sha}, not the run's ${head.headSha}`,
      );
    } catch (error) {
      if (httpStatus(error) !== 404) throw error;
      log(`pull request #${bundleNumber} of the bundle does not exist (${errorMessage(error)})`);
    }
  }
  const { data } = await gh.rest.repos.listPullRequestsAssociatedWithCommit({
    owner: head.owner,
    repo: head.repo,
    commit_sha: head.headSha,
    per_page: 100,
  });
  const pr = data.find((p) => p.state === 'open' && matches(p, head)) ?? data.find((p) => matches(p, head));
  return pr ? { number: pr.number, how: 'head-sha', ...baseOf(pr) } : undefined;
}

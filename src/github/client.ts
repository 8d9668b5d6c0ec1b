import { getOctokit } from '@actions/github';
import { retry } from '@octokit/plugin-retry';

/**
 * The GitHub REST client of the actions: octokit from @actions/github (token auth, GITHUB_API_URL,
 * proxy settings) with @octokit/plugin-retry, which retries 5xx and 429 answers (not 400, 401,
 * 403, 404, 410, 422, 451) up to `retries` times after (n+1)² × `retryAfterBaseValue` ms.
 */
export type GitHub = ReturnType<typeof getOctokit>;

/** Options of {@link createGitHub}. */
export interface GitHubOptions {
  /** REST base URL; default GITHUB_API_URL or https://api.github.com. */
  baseUrl?: string;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Base of the back-off in ms (default 1000; tests use 1). */
  retryAfterBaseValue?: number;
}

/** A REST client with retries. */
export function createGitHub(token: string, options: GitHubOptions = {}): GitHub {
  return getOctokit(
    token,
    {
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      retry: {
        ...(options.retries === undefined ? {} : { retries: options.retries }),
        ...(options.retryAfterBaseValue === undefined
          ? {}
          : { retryAfterBaseValue: options.retryAfterBaseValue }),
      },
    },
    retry,
  );
}

/** The HTTP status of an octokit RequestError, or undefined for anything else. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

import type { GitHub } from './client.ts';

/**
 * The sticky pull request comment: found by a hidden marker AND its author, so that a comment of
 * another account that happens to carry the same marker (a copy, another bot) is never touched.
 * Every page of the PR's comments is read (100 per page) until the comment is found.
 *
 * REST (docs.github.com/en/rest/issues/comments): `GET /repos/{owner}/{repo}/issues/{issue_number}/comments`
 * (paginated by the Link header), `POST` the same path to create, `PATCH
 * /repos/{owner}/{repo}/issues/comments/{comment_id}` to update. Body at most 65,536 characters.
 */

/** Which comment: the repository, the PR (issue) number, the marker and the author. */
export interface StickyCommentTarget {
  owner: string;
  repo: string;
  issueNumber: number;
  /** The hidden marker the body must start with (its first line). */
  marker: string;
  /** Login of the account the token comments as, e.g. `github-actions[bot]`. */
  author: string;
}

/** A comment this action owns. */
export interface OwnComment {
  id: number;
  url: string;
}

/** What {@link upsertComment} did. */
export interface UpsertResult extends OwnComment {
  action: 'created' | 'updated';
}

/**
 * Whether a comment body is marked with `marker`: its first line is the marker, as this action
 * writes it. A marker anywhere else (quoted, in a threshold name, in a log line) does not count.
 */
export function hasMarker(body: string | null | undefined, marker: string): boolean {
  if (!body) return false;
  const end = body.indexOf('\n');
  return (end < 0 ? body : body.slice(0, end)).trim() === marker;
}

/**
 * Finds this action's comment: the first (oldest) comment by `author` whose first line is `marker`
 * ({@link hasMarker}). Reads page after page and stops at the first match.
 */
export async function findOwnComment(
  gh: GitHub,
  target: StickyCommentTarget,
): Promise<OwnComment | undefined> {
  const pages = gh.paginate.iterator(gh.rest.issues.listComments, {
    owner: target.owner,
    repo: target.repo,
    issue_number: target.issueNumber,
    per_page: 100,
  });
  const author = target.author.toLowerCase();
  for await (const page of pages) {
    for (const comment of page.data) {
      if (comment.user?.login.toLowerCase() === author && hasMarker(comment.body, target.marker)) {
        return { id: comment.id, url: comment.html_url };
      }
    }
  }
  return undefined;
}

/**
 * Creates the comment, or updates this action's existing one in place.
 * @param body the whole body, marker included (at most 65,536 characters).
 * @throws the octokit RequestError of a failed call (a 403 on a fork's read-only token among them).
 */
export async function upsertComment(
  gh: GitHub,
  target: StickyCommentTarget,
  body: string,
): Promise<UpsertResult> {
  if (!hasMarker(body, target.marker)) throw new Error('the comment body must start with its marker');
  const existing = await findOwnComment(gh, target);
  const repo = { owner: target.owner, repo: target.repo, body };
  const { data } = existing
    ? await gh.rest.issues.updateComment({ ...repo, comment_id: existing.id })
    : await gh.rest.issues.createComment({ ...repo, issue_number: target.issueNumber });
  return { id: data.id, url: data.html_url, action: existing ? 'updated' : 'created' };
}

import type { Octokit } from '@octokit/rest';

/** Where an issue lives. */
export interface IssueRef {
  readonly owner: string;
  readonly repo: string;
  readonly issue: number;
}

/** The fields of a GitHub issue comment that marker reconciliation reads. */
export interface IssueComment {
  readonly id: number;
  readonly body?: string | null;
  readonly user?: { readonly login: string } | null;
}

/**
 * Every comment of an issue, page by page (100 per page), oldest first: `octokit.paginate.iterator`
 * over `issues.listComments`, following GitHub's `Link: rel="next"` header to the last page.
 * Deliberately not the search API: its index lags behind writes, so a comment posted just before
 * a crash may not be found there yet.
 *
 * Octokit is imported as a type only: the caller brings its own client.
 */
export async function* issueCommentPages(octokit: Octokit, ref: IssueRef): AsyncGenerator<IssueComment[]> {
  const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, {
    owner: ref.owner,
    repo: ref.repo,
    issue_number: ref.issue,
    per_page: 100,
  });
  for await (const page of pages) yield page.data;
}

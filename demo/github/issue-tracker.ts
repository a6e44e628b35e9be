/** A user as GitHub shows it inside issues and comments (the subset the local server fills in). */
export interface GitHubUser {
  readonly login: string;
  readonly id: number;
  readonly type: 'User' | 'Bot';
}

/** A label as GitHub returns it. */
export interface GitHubLabel {
  readonly id: number;
  readonly name: string;
  readonly color: string;
  readonly default: boolean;
  readonly description: string | null;
}

/** An issue as GitHub returns it (subset). */
export interface GitHubIssue {
  readonly id: number;
  readonly number: number;
  readonly title: string;
  readonly body: string | null;
  readonly state: 'open' | 'closed';
  readonly user: GitHubUser;
  readonly labels: GitHubLabel[];
  readonly comments: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/** An issue comment as GitHub returns it (subset). */
export interface GitHubComment {
  readonly id: number;
  readonly body: string;
  readonly user: GitHubUser;
  readonly created_at: string;
  readonly updated_at: string;
}

interface IssueRecord {
  issue: Omit<GitHubIssue, 'labels' | 'comments'>;
  labels: string[];
  comments: GitHubComment[];
  /** Every comment ever created on the issue (the test's count of applied comment effects). */
  commentsCreated: number;
  /** Label names that were new when added (adding an existing label does not count). */
  labelsAdded: number;
  /** Add-labels requests, whether or not they changed anything. */
  labelRequests: number;
  /** Comments deleted (a delete of a comment already gone does not count). */
  commentsDeleted: number;
  /** Labels removed (a removal of a label not on the issue does not count). */
  labelsRemoved: number;
}

/**
 * The in-memory state behind the local GitHub server: repositories (created on first use),
 * issues, comments and labels, plus counters the tests read to count effects on the remote side.
 * Routes and tests use the same methods, so a test can seed state without HTTP.
 */
export class IssueTracker {
  private readonly repos = new Map<string, Map<number, IssueRecord>>();
  private readonly users = new Map<string, GitHubUser>();
  private readonly labelIds = new Map<string, number>();
  private nextId = 1000;

  /** Creates an issue; numbers start at 1 per repository. */
  createIssue(owner: string, repo: string, init: { title: string; body?: string | null; login: string }): GitHubIssue {
    const issues = this.repo(owner, repo);
    const now = new Date().toISOString();
    const number = issues.size + 1;
    issues.set(number, {
      issue: {
        id: this.id(),
        number,
        title: init.title,
        body: init.body ?? null,
        state: 'open',
        user: this.user(init.login),
        created_at: now,
        updated_at: now,
      },
      labels: [],
      comments: [],
      commentsCreated: 0,
      labelsAdded: 0,
      labelRequests: 0,
      commentsDeleted: 0,
      labelsRemoved: 0,
    });
    return this.getIssue(owner, repo, number) as GitHubIssue;
  }

  /** The issue, or `undefined` when the repository has no issue with that number. */
  getIssue(owner: string, repo: string, number: number): GitHubIssue | undefined {
    const record = this.record(owner, repo, number);
    if (record === undefined) return undefined;
    return {
      ...record.issue,
      labels: record.labels.map((name) => this.label(owner, repo, name)),
      comments: record.comments.length,
    };
  }

  /** Every issue of the repository, newest first (GitHub's default order). */
  listIssues(owner: string, repo: string): GitHubIssue[] {
    return [...this.repo(owner, repo).keys()]
      .sort((a, b) => b - a)
      .map((n) => this.getIssue(owner, repo, n) as GitHubIssue);
  }

  /** Adds a comment as `login`; `undefined` when the issue does not exist. */
  addComment(owner: string, repo: string, number: number, body: string, login: string): GitHubComment | undefined {
    const record = this.record(owner, repo, number);
    if (record === undefined) return undefined;
    const now = new Date().toISOString();
    const comment: GitHubComment = { id: this.id(), body, user: this.user(login), created_at: now, updated_at: now };
    record.comments.push(comment);
    record.commentsCreated += 1;
    return comment;
  }

  /** Comments of the issue, oldest first; `undefined` when the issue does not exist. */
  listComments(owner: string, repo: string, number: number): GitHubComment[] | undefined {
    return this.record(owner, repo, number)?.comments.slice();
  }

  /**
   * Adds labels with set semantics: a label already on the issue changes nothing. Returns every
   * label now on the issue (as GitHub does), or `undefined` when the issue does not exist.
   */
  addLabels(owner: string, repo: string, number: number, names: readonly string[]): GitHubLabel[] | undefined {
    const record = this.record(owner, repo, number);
    if (record === undefined) return undefined;
    record.labelRequests += 1;
    for (const name of names) {
      if (record.labels.some((l) => l.toLowerCase() === name.toLowerCase())) continue;
      record.labels.push(name);
      record.labelsAdded += 1;
    }
    return record.labels.map((name) => this.label(owner, repo, name));
  }

  /** Deletes the repository's comment `id` (comment ids are unique); `false` when there is none. */
  deleteComment(owner: string, repo: string, id: number): boolean {
    for (const record of this.repo(owner, repo).values()) {
      const at = record.comments.findIndex((c) => c.id === id);
      if (at === -1) continue;
      record.comments.splice(at, 1);
      record.commentsDeleted += 1;
      return true;
    }
    return false;
  }

  /**
   * Removes one label from the issue. Returns the labels left (as GitHub does), or `undefined` when
   * the issue does not exist or the label is not on it (GitHub answers 404 to both).
   */
  removeLabel(owner: string, repo: string, number: number, name: string): GitHubLabel[] | undefined {
    const record = this.record(owner, repo, number);
    const at = record?.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase()) ?? -1;
    if (record === undefined || at === -1) return undefined;
    record.labels.splice(at, 1);
    record.labelsRemoved += 1;
    return record.labels.map((label) => this.label(owner, repo, label));
  }

  /** Labels on the issue; `undefined` when the issue does not exist. */
  listLabels(owner: string, repo: string, number: number): GitHubLabel[] | undefined {
    return this.record(owner, repo, number)?.labels.map((name) => this.label(owner, repo, name));
  }

  /** Counters of one issue (all 0 for an unknown issue). */
  counters(
    owner: string,
    repo: string,
    number: number,
  ): {
    commentsCreated: number;
    labelsAdded: number;
    labelRequests: number;
    commentsDeleted: number;
    labelsRemoved: number;
  } {
    const r = this.record(owner, repo, number);
    return {
      commentsCreated: r?.commentsCreated ?? 0,
      labelsAdded: r?.labelsAdded ?? 0,
      labelRequests: r?.labelRequests ?? 0,
      commentsDeleted: r?.commentsDeleted ?? 0,
      labelsRemoved: r?.labelsRemoved ?? 0,
    };
  }

  private repo(owner: string, repo: string): Map<number, IssueRecord> {
    const name = `${owner.toLowerCase()}/${repo.toLowerCase()}`;
    let issues = this.repos.get(name);
    if (issues === undefined) this.repos.set(name, (issues = new Map<number, IssueRecord>()));
    return issues;
  }

  private record(owner: string, repo: string, number: number): IssueRecord | undefined {
    return this.repo(owner, repo).get(number);
  }

  private user(login: string): GitHubUser {
    let user = this.users.get(login);
    if (user === undefined) {
      user = { login, id: this.id(), type: login.endsWith('[bot]') ? 'Bot' : 'User' };
      this.users.set(login, user);
    }
    return user;
  }

  private label(owner: string, repo: string, name: string): GitHubLabel {
    const labelKey = `${owner}/${repo}/${name.toLowerCase()}`;
    let id = this.labelIds.get(labelKey);
    if (id === undefined) this.labelIds.set(labelKey, (id = this.id()));
    return { id, name, color: 'ededed', default: false, description: null };
  }

  private id(): number {
    return this.nextId++;
  }
}

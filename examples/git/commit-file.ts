import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitTreeWithEffect, runGit } from '@chamvi/temporal/strategies';

/** Who commits: name and email for author and committer. */
export interface GitIdentity {
  readonly name: string;
  readonly email: string;
}

/**
 * Creates a commit on top of `parent` (or a root commit) that writes `content` to `path`, with
 * the effect key as trailer. Plumbing only (`hash-object`, a private index file, `write-tree`,
 * `commit-tree`): no work tree and no branch is touched, so calls may run side by side in one
 * repository. Returns the commit's SHA.
 */
export async function commitFile(options: {
  readonly cwd: string;
  readonly parent: string | undefined;
  readonly path: string;
  readonly content: string;
  readonly message: string;
  readonly key: string;
  readonly identity: GitIdentity;
}): Promise<string> {
  const { cwd, parent, identity } = options;
  const scratch = await mkdtemp(join(tmpdir(), 'chamvi-commit-'));
  try {
    const blobFile = join(scratch, 'blob');
    await writeFile(blobFile, options.content);
    const env = {
      GIT_INDEX_FILE: join(scratch, 'index'),
      GIT_AUTHOR_NAME: identity.name,
      GIT_AUTHOR_EMAIL: identity.email,
      GIT_COMMITTER_NAME: identity.name,
      GIT_COMMITTER_EMAIL: identity.email,
    };
    const blob = (await runGit(['hash-object', '-w', '--', blobFile], { cwd })).trim();
    await runGit(parent === undefined ? ['read-tree', '--empty'] : ['read-tree', parent], { cwd, env });
    await runGit(['update-index', '--add', '--cacheinfo', `100644,${blob},${options.path}`], { cwd, env });
    const tree = (await runGit(['write-tree'], { cwd, env })).trim();
    return await commitTreeWithEffect({
      cwd,
      env,
      tree,
      parents: parent === undefined ? [] : [parent],
      message: options.message,
      key: options.key,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

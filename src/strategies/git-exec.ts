import { execFile } from 'node:child_process';
import { GitCommandError } from '../errors/errors.js';

/** Where and how a git command runs. @public */
export interface GitOptions {
  /** The repository (work tree or bare) the command runs in. */
  readonly cwd: string;
  /** Extra environment (for example `GIT_AUTHOR_NAME`, `GIT_INDEX_FILE`); merged over `process.env`. */
  readonly env?: Readonly<Record<string, string>>;
}

/** What a git command printed and how it exited. */
export interface GitOutput {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/**
 * Runs `git <args>` with `execFile` (no shell, so arguments are never interpreted), with prompts
 * disabled and messages in English (`LC_ALL=C`). Resolves with stdout; a non-zero exit throws a
 * {@link GitCommandError} carrying git's error output.
 * @public
 */
export async function runGit(args: readonly string[], options: GitOptions): Promise<string> {
  const out = await runGitRaw(args, options);
  if (out.exitCode !== 0) throw new GitCommandError({ args, exitCode: out.exitCode, stderr: out.stderr });
  return out.stdout;
}

/** Like {@link runGit}, but a non-zero exit resolves too, so the caller can read the output. */
export function runGitRaw(args: readonly string[], options: GitOptions): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...args],
      {
        cwd: options.cwd,
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...options.env },
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ stdout, stderr, exitCode: 0 });
        const code = (error as NodeJS.ErrnoException).code;
        if (typeof code === 'number') return resolve({ stdout, stderr, exitCode: code });
        reject(new GitCommandError({ args, exitCode: code, stderr: stderr || error.message }));
      },
    );
  });
}

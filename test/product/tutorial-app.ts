// The README's tutorial app made as a user makes it: its first commands (`npm init -y`, `npm pkg
// set`) and Install's first three `npm install` lines run as written (the packed package in place
// of `@chamvi/temporal`), then the tutorial's files, which readme-tutorial.test.ts keeps equal to
// examples/consumer.
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, type CommandResult } from './packed-package.js';
import { ROOT } from './run-cli.js';

/** A README `## ` section's first sh block, as lines with their comments cut. */
function shLines(title: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${title}\n`);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const block = /```sh\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (start < 0 || block === undefined) throw new Error(`README.md has no sh block in "${title}"`);
  return block.split('\n').map((line) => line.replace(/\s+#.*$/, ''));
}

/** The commands the README gives for a fresh app, in order. */
export function tutorialCommands(): { readonly create: string[]; readonly install: string[] } {
  const create = shLines('Tutorial');
  const install = shLines('Install').slice(0, 3);
  if (!create[0]?.startsWith('mkdir responder && cd responder && npm init -y')) {
    throw new Error(`the tutorial no longer starts with mkdir responder ... npm init -y: ${create[0]}`);
  }
  return { create, install };
}

/**
 * Runs the README's commands in `scratch` (the app is `scratch/responder`), with `tarball` for
 * `@chamvi/temporal`, and copies the tutorial's files in. `install` has every command's output.
 */
export async function tutorialAppAsWritten(
  scratch: string,
  tarball: string,
): Promise<{ readonly app: string; readonly install: CommandResult }> {
  const { create, install } = tutorialCommands();
  const app = join(scratch, 'responder');
  const results: CommandResult[] = [];
  const shell = async (command: string, cwd: string): Promise<void> => {
    results.push(await run('bash', ['-c', command], { cwd, timeoutMs: 600_000 }));
  };
  await shell(create[0] ?? '', scratch);
  for (const command of create.slice(1)) await shell(command, app);
  for (const command of install) {
    await shell(`${command.replace(/ @chamvi\/temporal /, ` ${tarball} `)} --no-audit --no-fund`, app);
  }
  cpSync(join(ROOT, 'examples', 'consumer'), app, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|dist|\.chamvi|package\.json)([/\\]|$)/.test(src),
  });
  const combined: CommandResult = {
    code: results.find((r) => r.code !== 0)?.code ?? 0,
    output: results.map((r) => r.output).join('\n'),
    ms: results.reduce((sum, r) => sum + r.ms, 0),
  };
  return { app, install: combined };
}

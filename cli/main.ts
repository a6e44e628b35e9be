#!/usr/bin/env node
// The `chamvi` command: worker, run, effects, show, approvals, approve. One line and exit 2 for usage errors.
// Commands load on demand, so `--help` and usage errors answer without loading Temporal.
import { readFileSync } from 'node:fs';
import { EFFECTS_HELP, MAIN_HELP, RUN_HELP, SHOW_HELP, WORKER_HELP } from './help.js';
import { APPROVALS_HELP, APPROVE_HELP } from './approvals-help.js';
import { undecodablePayload } from './data-converter-flag.js';
import { exitWithError, UsageError } from './usage-error.js';

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, { help: string; load: () => Promise<Command> }> = {
  worker: { help: WORKER_HELP, load: async () => (await import('./worker-command.js')).workerCommand },
  run: { help: RUN_HELP, load: async () => (await import('./run-command.js')).runCommand },
  effects: { help: EFFECTS_HELP, load: async () => (await import('./effects-command.js')).effectsCommand },
  show: { help: SHOW_HELP, load: async () => (await import('./show-command.js')).showCommand },
  approvals: { help: APPROVALS_HELP, load: async () => (await import('./approvals-command.js')).approvalsCommand },
  approve: { help: APPROVE_HELP, load: async () => (await import('./approvals-command.js')).approveCommand },
};

function version(): string {
  // cli/main.ts runs from source (tsx) or as dist/cli/main.js
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === '@chamvi/temporal') return pkg.version ?? 'unknown';
    } catch {
      // not there: try the next candidate
    }
  }
  return 'unknown';
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${MAIN_HELP}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (entry === undefined) {
    throw new UsageError(
      `unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')} (see chamvi --help)`,
    );
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${entry.help}\n`);
    return 0;
  }
  const run = await entry.load().catch((error: unknown) => {
    throw missingPackage(command, error) ?? error;
  });
  return run(rest);
}

/** An optional package a command needs (`@temporalio/envconfig`, say) is not installed: say which, and how. */
function missingPackage(command: string, error: unknown): UsageError | undefined {
  if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  const name = /Cannot find package '([^']+)'/.exec(String((error as Error).message))?.[1];
  if (name === undefined) return undefined;
  return new UsageError(
    `the ${command} command needs the package ${name}, which is not installed: npm install ${name}`,
  );
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => exitWithError(undecodablePayload(error) ?? error),
);

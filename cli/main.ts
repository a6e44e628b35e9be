#!/usr/bin/env node
// The `chamvi` command: dev (the demo), worker, run, effects. One line and exit 2 for usage errors.
import { readFileSync } from 'node:fs';
import { devCommand } from './dev-command.js';
import { effectsCommand } from './effects-command.js';
import { runCommand } from './run-command.js';
import { exitWithError, UsageError } from './usage-error.js';
import { workerCommand } from './worker-command.js';

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  dev: devCommand,
  worker: workerCommand,
  run: runCommand,
  effects: effectsCommand,
};

export const MAIN_HELP = `Usage: chamvi <command> [options]

Run AI SDK agents as Temporal workflows with effect tools (side effects applied at most once).

Commands:
  dev        the demo: a local Temporal server, a worker with the SQLite effect store, a local
             issue tracker, the responder agent over three issues, and a real worker crash
  worker     run a worker for the agents a module exports
  run        start an agent run (a workflow); --wait prints its result and effects
  effects    print the effect store's records of a run

Run chamvi <command> --help for a command's options.
Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, CHAMVI_STORE, CHAMVI_TASK_QUEUE, CHAMVI_AGENTS.`;

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
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (run === undefined) {
    throw new UsageError(
      `unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')} (see chamvi --help)`,
    );
  }
  return run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => exitWithError(error),
);

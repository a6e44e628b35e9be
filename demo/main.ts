#!/usr/bin/env node
// The demo, `npm start` (scripts/dev.sh builds the repo and runs dist/demo/main.js): a Temporal dev
// server, worker processes, a local issue tracker and the responder agent, with a real worker crash.
// Repository code: the package does not ship it. One line and exit 2 for usage errors, as the CLI.
import { exitWithError } from '../cli/usage-error.js';
import { runDemo } from './dev-command.js';

runDemo(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => exitWithError(error),
);

import { join, relative, resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { LocalGitHubServer } from './github/index.js';
import { startAgentRun } from '@chamvi/temporal/client';
import { DEMO_AGENT } from './agents.js';
import { stopAllChildren, stopChildrenOnExit, type Child } from './child-processes.js';
import { realModelConfigured } from './model.js';
import { demoReport, type DemoRun } from './report.js';
import { crashReport, startDemoWorker } from './workers.js';
import { printDemoReport } from './dev-report.js';
import { externalServer, startDevServer, type DevServer } from './dev-server.js';
import { parseFlags } from '../cli/flags.js';
import { progress, progressDone, step } from '../cli/progress.js';
import { DEFAULT_NAMESPACE, ENV, setting } from '../cli/settings.js';
import { connectClient } from '../cli/temporal-connection.js';
import { UsageError } from '../cli/usage-error.js';

/** Where the demo keeps its Temporal database, SQLite effect store and logs (git-ignored). */
export const STATE_DIR = '.chamvi';

export const DEV_HELP = `Usage: npm start -- [options]      (node dist/demo/main.js, or node --import tsx demo/main.ts)

The demo. Starts a Temporal dev server persisted in ${STATE_DIR}/ (unless TEMPORAL_ADDRESS points at
one), a worker process with the SQLite effect store ${STATE_DIR}/effects.db, and a local issue tracker
speaking a GitHub REST subset; opens three issues and runs the responder agent over them as Temporal
workflows. The worker is SIGKILLed right after the first comment is posted (before its result is
recorded); a new worker process finishes the runs, reconciling that comment through its marker.
Prints each run's effects and the comment count per issue; exits 0 only if every issue has exactly one.

Options:
  --issues <n>     how many issues to open (default 3)
  --no-crash       do not kill the first worker
  -h, --help       show this help

Model: a scripted demo model, unless OPENAI_API_KEY or OPENAI_BASE_URL is set (then CHAMVI_MODEL,
default gpt-4o-mini, through @ai-sdk/openai; OPENAI_BASE_URL=http://localhost:11434/v1 for Ollama).`;

const OWNER = 'acme';
const REPO = 'widgets';
const ISSUES = [
  { title: 'Crash when saving a widget with an empty name', body: 'Steps: create a widget, clear the name, save.' },
  { title: 'How do I export widgets as CSV?', body: 'I could not find it in the docs.' },
  { title: 'Dark mode for the widget editor', body: 'The editor is very bright at night.' },
  { title: 'Widget list is slow with 10k widgets', body: 'Scrolling stutters.' },
  { title: 'Typo on the settings page', body: '"Sav" should be "Save".' },
];

export async function runDemo(args: string[]): Promise<number> {
  const { values } = parseFlags('demo', args, { issues: { type: 'string' }, 'no-crash': { type: 'boolean' } }, 0);
  if (values.help) {
    process.stdout.write(`${DEV_HELP}\n`);
    return 0;
  }
  const count = values.issues === undefined ? 3 : Number(values.issues);
  if (!Number.isInteger(count) || count < 1 || count > ISSUES.length) {
    throw new UsageError(`demo: --issues must be a whole number from 1 to ${ISSUES.length} (see npm start -- --help)`);
  }
  const t0 = Date.now();
  stopChildrenOnExit();
  const stateDir = resolve(STATE_DIR);
  let server: DevServer | undefined;
  let github: LocalGitHubServer | undefined;
  let client: Client | undefined;
  try {
    const external = setting(undefined, ENV.address);
    if (external !== undefined) {
      server = await externalServer(external);
      step(t0, `Temporal: using ${external} (TEMPORAL_ADDRESS)`);
    } else {
      step(t0, `Temporal: starting a dev server (data in ${relative('.', join(stateDir, 'temporal.db'))})`);
      server = await startDevServer(stateDir, progress('waiting for the Temporal server'));
      progressDone();
      step(t0, `Temporal: dev server at ${server.address}; web UI: ${server.uiUrl ?? '-'}`);
    }
    const namespace = setting(undefined, ENV.namespace, DEFAULT_NAMESPACE);
    github = await new LocalGitHubServer().start();
    const opened = ISSUES.slice(0, count).map((issue, i) => ({
      ...issue,
      number: github!.tracker.createIssue(OWNER, REPO, { ...issue, login: ['alice', 'bob', 'carol'][i % 3] ?? 'alice' })
        .number,
    }));
    step(
      t0,
      `Issue tracker: ${github.url} (GitHub REST subset); opened ${opened.map((i) => `#${i.number}`).join(', ')} in ${OWNER}/${REPO}`,
    );

    const stamp = new Date()
      .toISOString()
      .replace(/[-:.TZ]/g, '')
      .slice(0, 14);
    const config = {
      address: server.address,
      namespace,
      taskQueue: `chamvi-demo-${stamp}`,
      store: `sqlite:${join(stateDir, 'effects.db')}`,
      githubUrl: github.url,
      logDir: stateDir,
    };
    const crash = !values['no-crash'];
    step(
      t0,
      `Worker 1: starting (SQLite effect store ${relative('.', join(stateDir, 'effects.db'))}${crash ? '; will be SIGKILLed after the first comment' : ''})`,
    );
    const first = await startDemoWorker(config, 1, crash, progress('worker 1 bundling the workflows'));
    progressDone();
    const crashed = crashReport(first);
    step(t0, `Worker 1: polling task queue ${config.taskQueue} (pid ${first.process.pid ?? '?'})`);

    client = await connectClient(server.address, namespace);
    const real = realModelConfigured();
    const runs: DemoRun[] = [];
    for (const issue of opened) {
      const workflowId = `demo-${stamp}-issue-${issue.number}`;
      const handle = await startAgentRun(client, {
        agent: DEMO_AGENT,
        prompt: `New issue #${issue.number}: ${issue.title}\n\n${issue.body}`,
        taskQueue: config.taskQueue,
        workflowId,
        // A crashed worker's model step is retried after this timeout (model steps do not heartbeat).
        activityOptions: {
          modelStep: { startToCloseTimeout: real ? '60 seconds' : '5 seconds' },
          store: { startToCloseTimeout: '5 seconds' },
        },
      });
      const run: DemoRun = { issue: issue.number, title: issue.title, workflowId };
      runs.push(run);
      void handle.result().then(
        (result) => (run.result = result),
        (error: unknown) => (run.error = failureMessage(error)),
      );
    }
    step(
      t0,
      `Runs: started ${runs.length} workflows of agent "${DEMO_AGENT}" (${real ? 'real model' : 'scripted demo model'})`,
    );

    let worker: Child = first;
    if (crash) {
      const how = await Promise.race([
        first.exited.then((h) => `exited (${String(h)})`),
        waitAll(runs, 120_000).then(() => 'finished'),
      ]);
      if (how === 'exited (SIGKILL)') {
        step(t0, `Worker 1: CRASHED: ${await crashed}`);
        step(t0, 'Worker 2: starting a new worker process to finish the runs');
        worker = await startDemoWorker(config, 2, false, progress('worker 2 bundling the workflows'));
        progressDone();
        step(
          t0,
          `Worker 2: polling (pid ${worker.process.pid ?? '?'}); Temporal retries the crashed activity after its heartbeat timeout`,
        );
      } else {
        step(t0, `Worker 1: ${how} without crashing (no comment was posted?)`);
      }
    }
    const tick = progress(`waiting for the runs to finish (watch them at ${server.uiUrl ?? 'the Temporal UI'})`, 3);
    const waiting = setInterval(() => tick(Math.round((Date.now() - t0) / 1000)), 1_000);
    await waitAll(runs, real ? 300_000 : 90_000);
    clearInterval(waiting);
    progressDone();
    step(t0, `Runs: ${runs.filter((r) => r.result).length}/${runs.length} finished`);

    const report = demoReport(runs, github, OWNER, REPO);
    printDemoReport(report);
    const { ok } = report;
    const storeHint = `--store ${relative('.', join(stateDir, 'effects.db'))}`;
    process.stdout.write(
      `\nInspect a run's records later: npx chamvi effects ${runs[0]?.result?.runId ?? '<run id>'} ${storeHint}\n`,
    );
    step(t0, ok ? 'OK: every issue got exactly one comment' : 'FAILED: an issue did not get exactly one comment');
    return ok ? 0 : 1;
  } finally {
    await client?.connection.close().catch(() => undefined);
    await stopAllChildren();
    await github?.stop();
    await server?.stop();
  }
}

/** Resolves when every run has a result or an error, or after `timeoutMs`. */
async function waitAll(runs: readonly DemoRun[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && runs.some((r) => r.result === undefined && r.error === undefined)) {
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const run of runs)
    if (run.result === undefined && run.error === undefined) run.error = `no result within ${timeoutMs / 1000} s`;
}

function failureMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  return cause instanceof Error ? cause.message : error.message;
}

import type { JsonMessage } from '../../common/index.js';
import { chainEntries, conversationRoot } from '../../src/conversation/conversation-entry.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { openBackend, type RawEntry } from './conversation-backend.js';
import { SimWorker } from './conversation-execution.js';
import { ConversationJudge } from './conversation-judge.js';
import {
  describeConversationScenario,
  drawConversationScenario,
  type ConversationScenario,
  type TamperKind,
} from './conversation-scenario.js';
import { WorkflowDriver } from './conversation-workflow.js';
import type { ConvWorld } from './conversation-world.js';
import type { Violation } from './invariants.js';
import { sqliteWalkBounded } from './sqlite-walk-probe.js';
import { Trace } from './trace.js';
import { VirtualClock } from './virtual-clock.js';

/** The outcome of one conversation seed. */
export interface ConversationSeedResult {
  readonly seed: number;
  readonly violations: readonly Violation[];
  /** The scenario and every event, readable (rendered on demand: most seeds are never printed). */
  readonly trace: () => string;
  /** Executions the history ran, and model-step loads it judged. */
  readonly executions: number;
}

/**
 * Runs the conversation history of `seed` on a virtual clock: the workflows' executions (model
 * steps and tool calls through the real `stepConversation`, `callOptionsFor`, `ConversationLog`
 * and `ConversationCache`) on 1-3 workers sharing one real store (memory, or SQLite in memory),
 * with prunes, worker restarts and tampered rows at their planned times, and the client's
 * `loadConversation` after each close. The invariants are judged as it runs (ConversationJudge).
 */
export async function simulateConversation(seed: number): Promise<ConversationSeedResult> {
  const scenario = drawConversationScenario(seed);
  const cycles = scenario.tampers.some((t) => t.kind === 'cycle' || t.kind === 'self-parent');
  const bounded = scenario.backend === 'sqlite' && cycles ? await sqliteWalkBounded() : true;
  const clock = new VirtualClock();
  try {
    return await run(scenario, clock, bounded);
  } finally {
    clock.uninstall();
  }
}

async function run(
  scenario: ConversationScenario,
  clock: VirtualClock,
  walkBounded: boolean,
): Promise<ConversationSeedResult> {
  const trace = new Trace(() => clock.now());
  const judge = new ConversationJudge(trace);
  const backend = await openBackend(scenario.backend, scenario.retentionMs, () => clock.storeNow());
  const work = new Set<Promise<unknown>>();
  const world: ConvWorld = {
    scenario,
    clock,
    trace,
    judge,
    backend,
    workers: scenario.workers.map((plan) => new SimWorker(plan, backend.store)),
    executions: [],
    sqliteWalkBounded: walkBounded,
    track(promise) {
      work.add(promise);
      const done = (): boolean => work.delete(promise);
      // A failure is the judge's to see, never an unhandled rejection.
      promise.then(done, done);
    },
  };
  for (const worker of world.workers) {
    for (const at of worker.plan.restarts) {
      clock.at(at, () => {
        worker.restart();
        trace.log(worker.name, 'restarts (its cache is gone)');
      });
    }
  }
  for (const prune of scenario.prunes) clock.at(prune.at, () => world.track(pruneNow(world, prune.limit)));
  for (const t of scenario.tampers) clock.at(t.at, () => tamper(world, t.kind, t.pick));
  const drivers = scenario.workflows.map((plan, i) => new WorkflowDriver(world, plan, i));
  for (const driver of drivers) driver.start();
  const horizon = 40 * scenario.retentionMs;
  const started = (): boolean => drivers.every((d) => d.current !== undefined);
  await clock.run(horizon, () => started() && work.size === 0);
  if (work.size > 0) {
    judge.violations.push({
      invariant: 'live-work-settles',
      message: `${work.size} model steps, tool calls or reads still pending at ${clock.now()} ms`,
    });
  }
  await backend.close();
  return {
    seed: scenario.seed,
    violations: judge.violations,
    trace: () => [...describeConversationScenario(scenario).map((l) => `    ${l}`), trace.render()].join('\n'),
    executions: world.executions.length,
  };
}

async function pruneNow(world: ConvWorld, limit: number): Promise<void> {
  const { backend, judge, trace, executions } = world;
  const deleted = await backend.prune(limit);
  if (deleted === 0) return;
  const after = backend.rows();
  trace.log('world', `prune(${limit}) deleted ${deleted} rows (${after.size} entries left)`);
  const closedBy = (runId: string): string =>
    executions
      .filter((e) => e.runId === runId && e.status !== 'running')
      .map((e) => `${e.id} ${e.status}`)
      .join(', ') || 'no other execution of the run ended';
  const open = executions.filter((e) => e.open);
  judge.prune(
    after,
    open.map((e) => ({ id: e.id, runId: e.runId, open: true, keys: e.chainKeys(e.stored.length) })),
    closedBy,
  );
}

/** What someone with the database's credentials does to the rows, behind the store's back. */
function tamper(world: ConvWorld, kind: TamperKind, pick: number): void {
  const { backend, judge, trace } = world;
  const rows = backend.rows();
  const keys = [...rows.keys()].sort();
  const target = keys[Math.floor(pick * keys.length)];
  const row = target === undefined ? undefined : rows.get(target);
  const touch = (key: string, what: string): void => {
    judge.touched.add(key);
    trace.log('world', `tamper: ${what} (${key.slice(0, 8)})`);
  };
  if (kind === 'plant') {
    plant(world, pick, touch);
    return;
  }
  if (row === undefined) return;
  switch (kind) {
    case 'edit': {
      const message = parsed(row.json);
      backend.update(row.key, { json: canonicalJson({ ...message, content: `forged: ${message.role}` }) });
      return touch(row.key, `edits the ${message.role} message of an entry`);
    }
    case 'garbage':
      backend.update(row.key, { json: row.json.slice(0, Math.floor(row.json.length / 2)) });
      return touch(row.key, "truncates an entry's json");
    case 'delete':
      backend.remove(row.key);
      return touch(row.key, 'deletes an entry');
    case 'self-parent':
      backend.update(row.key, { parent: row.key });
      return touch(row.key, 'makes an entry its own parent');
    case 'cycle': {
      const below = keys.find((k) => k !== row.key && descends(rows, k, row.key));
      backend.update(row.key, { parent: below ?? row.key });
      return touch(row.key, `points an entry's parent at ${below === undefined ? 'itself' : 'a descendant'}`);
    }
    case 'reparent': {
      const other = keys.find((k) => k !== row.key && k !== row.parent && !descends(rows, k, row.key));
      if (other === undefined) return;
      backend.update(row.key, { parent: other });
      return touch(row.key, "points an entry's parent at another chain's entry");
    }
  }
}

/** Plants a forged row under the key a running execution's next step will write. */
function plant(world: ConvWorld, pick: number, touch: (key: string, what: string) => void): void {
  const running = world.executions.filter((e) => e.status === 'running');
  const exec = running[Math.floor(pick * running.length)];
  if (exec === undefined) return;
  const stored = exec.stored;
  const head = chainEntries(conversationRoot(exec.runId), stored).at(-1)?.key ?? conversationRoot(exec.runId);
  const next = chainEntries(head, exec.full.slice(stored.length))[0];
  if (next === undefined || world.backend.rows().has(next.key)) return;
  const message = JSON.parse(next.json) as JsonMessage;
  const json = canonicalJson({ ...message, content: `planted: ${message.role}` });
  try {
    world.backend.plant(exec.runId, { key: next.key, parent: next.parent, json });
  } catch (error) {
    world.trace.log('world', `tamper: plant refused by the schema (${String(error)})`);
    return;
  }
  touch(next.key, `plants a forged ${message.role} message where ${exec.id} writes next`);
}

/** A row's message, or a stand-in when the row's json was already spoiled. */
function parsed(json: string): JsonMessage {
  try {
    return JSON.parse(json) as JsonMessage;
  } catch {
    return { role: 'user', content: '' };
  }
}

/** Whether the chain from `key` passes through `ancestor`. */
function descends(rows: ReadonlyMap<string, RawEntry>, key: string, ancestor: string): boolean {
  const seen = new Set<string>();
  for (let row = rows.get(key); row !== undefined && !seen.has(row.key); row = rows.get(row.parent)) {
    if (row.parent === ancestor) return true;
    seen.add(row.key);
  }
  return false;
}

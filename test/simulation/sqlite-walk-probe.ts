// Whether the SQLite store's conversation walk ends on a parent cycle. node:sqlite runs a query
// synchronously and nothing can interrupt it from JavaScript, so a walk that never ends would
// freeze the simulator as it freezes a worker; it is tried once per process in a child process
// that is killed when it does not answer in time.
//
//   node --import tsx test/simulation/sqlite-walk-probe.ts    (prints `ended` when the walk ends)
import { spawn } from 'node:child_process';
import type { DatabaseSync } from 'node:sqlite';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chainEntries, conversationRoot } from '../../src/conversation/conversation-entry.js';
import { ConversationLog } from '../../src/conversation/conversation-log.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';

/** How long the walk may take, from when the child says it is about to start, before it counts as endless. */
const WALK_TIMEOUT_MS = 3000;
/**
 * How long the child may take to start (Node, tsx, the imports): on a loaded machine that alone can
 * pass the walk's budget, and a slow start says nothing about the walk.
 */
const START_TIMEOUT_MS = 120_000;

let verdict: Promise<boolean> | undefined;

/**
 * Whether the SQLite walk of a parent cycle ends (with a result or an error); probed once, then
 * remembered. Asked before a history's virtual clock is installed (the child answers in real time).
 */
export function sqliteWalkBounded(): Promise<boolean> {
  return (verdict ??= probe());
}

function probe(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    const kill = () => child.kill('SIGKILL');
    let timer = setTimeout(kill, START_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      const started = !out.includes('walking');
      out += chunk.toString();
      if (started && out.includes('walking')) {
        clearTimeout(timer);
        timer = setTimeout(kill, WALK_TIMEOUT_MS);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(out.includes('ended'));
    });
  });
}

/** The probe itself: a two-entry chain whose first entry's parent is made the second, loaded from a fresh log. */
async function walkCycle(): Promise<void> {
  console.log('walking');
  const store = new SqliteEffectStore({ path: ':memory:' });
  const runId = 'probe';
  const entries = chainEntries(conversationRoot(runId), [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'b' },
  ]);
  const [first, second] = entries;
  if (first === undefined || second === undefined) throw new Error('no entries');
  await store.appendConversation(runId, entries);
  const db = (store as unknown as { conn: { db: DatabaseSync } }).conn.db;
  db.prepare('UPDATE chamvi_effects_conv SET parent = ? WHERE key = ?').run(second.key, first.key);
  await new ConversationLog(store).load(runId, second.key).catch(() => undefined);
  console.log('ended');
  await store.close();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void walkCycle();
}

import type { JsonMessage } from '../../common/index.js';
import type { ConversationCache } from '../../src/conversation/conversation-cache.js';
import { conversationRoot } from '../../src/conversation/conversation-entry.js';
import type { ConversationBackend, RawEntry } from './conversation-backend.js';
import type { Execution, SimWorker } from './conversation-execution.js';
import { type ConversationJudge, type LoadOutcome } from './conversation-judge.js';
import type { ConversationScenario } from './conversation-scenario.js';
import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/** Everything of one conversation history that its parts share. */
export interface ConvWorld {
  readonly scenario: ConversationScenario;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly judge: ConversationJudge;
  readonly backend: ConversationBackend;
  readonly workers: readonly SimWorker[];
  /** Every execution so far, in order of creation. */
  readonly executions: Execution[];
  /** Whether the SQLite store's chain walk ends on a parent cycle (probed once, in a child process, before the history). */
  readonly sqliteWalkBounded: boolean;
  /** When a zombie attempt (one Temporal did not take) last stored a final answer, by execution. */
  readonly zombieCloses: Map<string, number>;
  /** Work still running (drivers, zombie attempts, late reads): the history ends when all settle. */
  track(work: Promise<unknown>): void;
}

/**
 * Runs one load of a conversation whose genuine messages are `expected` (stored as the chain
 * `keys`, the rest pending) and has the judge check what it answered. `cache` is the cache the load may be served
 * from (none for the client's fresh log). A load the SQLite store could only answer by walking a
 * parent cycle forever is not run when the probe found the walk unbounded (it would freeze this
 * process as it freezes a worker): it counts as a hang.
 */
export async function judgedLoad<T>(
  world: ConvWorld,
  who: string,
  target: { readonly runId: string; readonly head: string | undefined },
  expected: readonly JsonMessage[],
  keys: readonly string[],
  cache: ConversationCache | undefined,
  load: () => Promise<T>,
  messagesOf: (value: T) => readonly unknown[],
): Promise<{ value: T } | { error: unknown }> {
  if (
    world.backend.kind === 'sqlite' &&
    !world.sqliteWalkBounded &&
    target.head !== undefined &&
    reachesCycle(world.backend.rows(), target.head) &&
    !cachedChain(cache, conversationRoot(target.runId), target.head)
  ) {
    world.judge.hang(who, 'the SQLite chain walk of a parent cycle never ends (probed in a child process: killed)');
    return { error: new Error('simulated hang') };
  }
  let outcome: LoadOutcome;
  let result: { value: T } | { error: unknown };
  try {
    const value = await load();
    result = { value };
    outcome = { messages: messagesOf(value) };
  } catch (error) {
    result = { error };
    outcome = { error };
  }
  world.judge.load(who, expected, keys, () => world.backend.rows(), outcome);
  return result;
}

/** Whether following parents from `head` through the stored rows comes back to a key already passed. */
export function reachesCycle(rows: ReadonlyMap<string, RawEntry>, head: string): boolean {
  const seen = new Set<string>();
  for (let row = rows.get(head); row !== undefined; row = rows.get(row.parent)) {
    if (seen.has(row.key)) return true;
    seen.add(row.key);
  }
  return false;
}

/** Whether `cache` holds the whole chain from `root` to `head` (read without touching its order). */
function cachedChain(cache: ConversationCache | undefined, root: string, head: string): boolean {
  if (cache === undefined) return false;
  const entries = (cache as unknown as { entries: Map<string, { parent: string }> }).entries;
  const seen = new Set<string>();
  for (let key = head; key !== root;) {
    const entry = entries.get(key);
    if (entry === undefined || seen.has(key)) return false;
    seen.add(key);
    key = entry.parent;
  }
  return true;
}

// The budget suite: a tree of runs (a top run, sub-agents, theirs) takes model steps under one
// budget, kept by the real `BudgetLedger`. Each sub-agent asks the top run before each step with
// its own count and sends its last count when it ends; the messages reach the top run in any
// order across senders (in order from one sender, as Temporal delivers one workflow's signals),
// the top run continues as new between its steps, budget approvals raise the limits, and someone
// with signal access sends forged counts: from workflow ids outside the tree, malformed, lower
// than a run's real one, or (rarely) higher.
import { BudgetLedger } from '../../workflows/budget-ledger.js';
import type { BudgetLimits, RunUsage } from '../../common/run-usage.js';
import type { Violation } from './invariants.js';
import { Prng } from './prng.js';

interface SimRun {
  readonly id: string;
  readonly parent: SimRun | undefined;
  /** Tokens of each step the run would take, without a budget. */
  readonly script: number[];
  /** The sub-agents it calls in its step 0. */
  readonly children: SimRun[];
  taken: number[];
  state: 'ready' | 'asking' | 'stepping' | 'waiting' | 'done';
  granted?: boolean;
}

interface Message {
  /** The queue it travels in: its sender's (a forger sends from elsewhere). */
  readonly via: string;
  readonly from: string;
  readonly usage: unknown;
  readonly final: boolean;
  readonly forged?: 'higher';
}

export interface BudgetSimulation {
  readonly violations: Violation[];
  readonly trace: () => string;
  readonly steps: number;
}

const TOP = 'top';
const usageOf = (tokens: number[]): RunUsage => ({
  steps: tokens.length,
  inputTokens: tokens.reduce((a, b) => a + b, 0),
  outputTokens: 0,
});
const tokensOf = (u: RunUsage) => u.inputTokens + u.outputTokens;

function tree(rng: Prng, id: string, depth: number, parent?: SimRun): SimRun {
  const run: SimRun = {
    id,
    parent,
    script: Array.from({ length: rng.int(1, 4) }, () => rng.int(1, 50)),
    children: [],
    taken: [],
    state: 'ready',
  };
  const n = depth < 2 ? rng.int(0, depth === 0 ? 3 : 2) : 0;
  for (let i = 0; i < n; i++) run.children.push(tree(rng, `${id}:c${i}`, depth + 1, run));
  return run;
}

const all = (run: SimRun): SimRun[] => [run, ...run.children.flatMap(all)];

export function simulateBudget(seed: number): BudgetSimulation {
  const rng = new Prng(seed, 7);
  const lines: string[] = [];
  const violations: Violation[] = [];
  const top = tree(rng, TOP, 0);
  const runs = all(top);
  const unbounded = runs.reduce((sum, r) => sum + r.script.reduce((a, b) => a + b, 0), 0);
  const set: BudgetLimits = { tokens: Math.max(1, Math.round(unbounded * (0.2 + rng.float()))) };
  const ask = rng.chance(0.3);
  const raise: BudgetLimits = { tokens: rng.int(1, 100) };
  let ledger = new BudgetLedger(set, TOP, undefined);
  let limit = set.tokens ?? 0;
  let lastUsed = 0;
  let inflated = false;
  let refused = false;
  const queues = new Map<string, Message[]>();
  const send = (m: Message) => queues.set(m.via, [...(queues.get(m.via) ?? []), m]);
  const delivered = (r: SimRun) => r.state === 'done' && (queues.get(r.id) ?? []).length === 0;
  lines.push(
    `tree ${runs.map((r) => `${r.id}[${r.script.join(',')}]`).join(' ')}; tokens ${limit}${ask ? `, ask +${raise.tokens}` : ''}`,
  );

  /** The top run's answer to a step of the tree: admitted while the count is under the limits. */
  const admit = (who: string): boolean => {
    const used = tokensOf(ledger.used());
    if (used < lastUsed)
      violations.push({ invariant: 'count-never-decreases', message: `${lastUsed} → ${used} at ${who}` });
    lastUsed = used;
    if (ledger.reached() === undefined) return true;
    if (ask && !refused && rng.chance(0.5)) {
      ledger.raise(raise);
      limit += raise.tokens ?? 0;
      lines.push(`  budget approval for ${who}: raised to ${limit}`);
      return admit(who);
    }
    refused = true;
    return false;
  };

  for (let tick = 0; tick < 10_000; tick++) {
    const deliverable = [...queues.entries()].filter(([, q]) => q.length > 0);
    if (deliverable.length === 0 && runs.every((r) => r.state === 'done')) break;
    const roll = rng.float();
    if (roll < 0.05) {
      // A forged count: outside the tree, malformed, lower than the real one, or higher.
      const others = runs.filter((r) => r !== top);
      const victim = others.length > 0 ? rng.pick(others) : undefined;
      const kind = victim === undefined ? 0 : rng.int(0, 3);
      const via = `forger-${rng.int(0, 2)}`;
      if (victim === undefined || kind === 0)
        send({ via, from: `other-${rng.int(0, 9)}`, usage: usageOf([10_000]), final: true });
      else if (kind === 1)
        send({ via, from: victim.id, usage: { steps: 'many', inputTokens: -5, outputTokens: 0 }, final: true });
      else if (kind === 2) send({ via, from: victim.id, usage: usageOf([]), final: true });
      else if (rng.chance(0.2))
        send({ via, from: victim.id, usage: usageOf([...victim.taken, 5]), final: true, forged: 'higher' });
      continue;
    }
    if (roll < 0.5 && deliverable.length > 0) {
      const [, queue] = rng.pick(deliverable);
      const m = queue.shift() as Message;
      const from = m.from;
      const counted = ledger.report(from, m.usage);
      if (m.forged === 'higher' && counted) inflated = true;
      const run = runs.find((r) => r.id === from);
      lines.push(
        `  top ← ${from}${m.final ? ' (last)' : ''}${m.forged !== undefined ? ' forged' : ''}: ${counted ? 'counted' : 'refused'}`,
      );
      if (!m.final && m.via === from && run !== undefined && run.state === 'asking') run.granted = admit(from);
      continue;
    }
    // A sub-agent starts with its parent's step 0; one whose parent stopped before it never starts.
    for (const r of runs)
      if (r.state !== 'done' && r.parent?.state === 'done' && r.parent.taken.length === 0) r.state = 'done';
    const startable = runs.filter((r) => r.state !== 'done' && (r.parent === undefined || r.parent.taken.length > 0));
    if (startable.length === 0) continue;
    const run = rng.pick(startable);
    const next = run.taken.length;
    if (run.state === 'ready' && run.granted === undefined) {
      if (next >= run.script.length) run.state = 'done';
      else if (run === top) {
        if (rng.chance(0.2) && next > 0) {
          ledger = new BudgetLedger(set, TOP, ledger.state());
          ledger.counted(usageOf(top.taken));
          lines.push('  top continues as new');
        }
        run.granted = admit(TOP);
      } else {
        run.state = 'asking';
        send({ via: run.id, from: run.id, usage: usageOf(run.taken), final: false });
      }
    } else if (run.granted !== undefined && (run.state === 'ready' || run.state === 'asking')) {
      run.state = run.granted ? 'stepping' : 'done';
      if (!run.granted) lines.push(`  ${run.id} stopped before step ${next}`);
      run.granted = undefined;
    } else if (run.state === 'stepping') {
      run.taken.push(run.script[next] ?? 0);
      if (run === top) ledger.counted(usageOf(top.taken));
      run.state = next === 0 && run.children.length > 0 ? 'waiting' : 'ready';
      lines.push(`  ${run.id} took step ${next} (${run.script[next]} tokens)`);
    } else if (run.state === 'waiting' && run.children.every(delivered)) {
      // A child's last count reaches the top run before the child's result reaches its parent.
      run.state = 'ready';
    }
    if (run.state === 'done' && run !== top) {
      send({ via: run.id, from: run.id, usage: usageOf(run.taken), final: true });
    }
  }

  const stuck = runs.filter((r) => r.state !== 'done');
  if (stuck.length > 0 || [...queues.values()].some((q) => q.length > 0))
    violations.push({ invariant: 'tree-ends', message: `runs not ended: ${stuck.map((r) => r.id).join(', ')}` });
  const total = runs.reduce((sum, r) => sum + r.taken.reduce((a, b) => a + b, 0), 0);
  const lastSteps = runs.reduce((sum, r) => sum + (r.taken.at(-1) ?? 0), 0);
  const used = tokensOf(ledger.used());
  // Each step was admitted with every run's earlier steps counted: only each run's last step can pass the limit.
  if (total - lastSteps >= limit)
    violations.push({
      invariant: 'overshoot-bounded',
      message: `${total} tokens, last steps ${lastSteps}, limit ${limit}`,
    });
  if (!inflated && used !== total)
    violations.push({ invariant: 'count-exact', message: `the top run counted ${used} tokens of ${total}` });
  if (used < total) violations.push({ invariant: 'never-undercounts', message: `${used} < ${total}` });
  lines.push(`end: ${total} tokens taken, ${used} counted, limit ${limit}`);
  return { violations, trace: () => lines.join('\n'), steps: runs.reduce((sum, r) => sum + r.taken.length, 0) };
}

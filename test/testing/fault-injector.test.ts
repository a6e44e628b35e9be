// The testing kit's fault injection, outside Temporal: it strikes by wrapping the tools and the
// store the protocol calls, at the points the crash matrix names, and leaves everything else alone.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  defineAgent,
  defineEffectTool,
  type EffectRecord,
  type EffectRecordInput,
  type IEffectStore,
} from '../../src/index.js';
import { applyEffect, type EffectResolution } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { EffectStoreError } from '../../src/errors/errors.js';
import { hasClaims } from '../../src/stores/effect-store.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { FAULT_POINTS, FaultInjector, InjectedFault, type FaultHit, type FaultPoint } from '../../testing/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';

const quiet = { warn: () => undefined };
const ctx = createToolContext({ runId: 'run-faults', agent: 'test', state: { case: 'faults' } });
const options = { toolCallId: 't', messages: [], context: ctx };

/** A remote the effect lands on, and a tool that reconciles against it. */
function counted(reconcile = false) {
  const applied: string[] = [];
  const tool = defineEffectTool({
    description: 'Applies an effect.',
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }: { id: string }) => {
      applied.push(id);
      return { id };
    },
    ...(reconcile
      ? { alreadyApplied: async (_key: string, { id }: { id: string }) => (applied.includes(id) ? { id } : undefined) }
      : {}),
  });
  return { applied, tool };
}

/** A store without claims (get and put only), counting its calls. */
class PlainStore implements IEffectStore {
  readonly records = new Map<string, EffectRecord>();
  reads = 0;
  async get(key: string): Promise<EffectRecord | undefined> {
    this.reads++;
    return this.records.get(key);
  }
  async put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    const kept = this.records.get(key) ?? { ...record, key, recordedAt: new Date().toISOString() };
    this.records.set(key, kept);
    return kept;
  }
}

async function callWith(
  faults: FaultInjector,
  store: IEffectStore,
  id = 'a',
): Promise<{ applied: string[]; resolved?: EffectResolution<{ id: string }>; error?: unknown }> {
  const { applied, tool } = counted();
  const resolution = await applyEffect(
    { tool: faults.wrapTool('effect', tool, { attempt: 1 }), toolName: 'effect', input: { id }, ctx, options },
    { store: faults.wrapStore(store), logger: quiet },
  ).then(
    (resolved) => ({ resolved }),
    (error: unknown) => ({ error }),
  );
  return { applied, ...resolution };
}

describe('FaultInjector, by wrapping the tools and the store', () => {
  it.each([
    ['before-store-read', 0],
    ['in-already-applied', 0],
    ['before-effect', 0],
    ['after-effect', 1],
  ] as const)(
    'a throw at %s fails the call by the InjectedFault, after %i effect(s), and records nothing',
    async (point, effects) => {
      const store = new MemoryEffectStore();
      const faults = new FaultInjector({ point });
      const { applied, error } = await callWith(faults, store);
      // A failing store read is what the protocol makes of it: a retryable EffectStoreError.
      if (point === 'before-store-read') expect(EffectStoreError.isInstance(error)).toBe(true);
      const fault = point === 'before-store-read' ? (error as EffectStoreError).cause : error;
      expect(fault).toBeInstanceOf(InjectedFault);
      expect((fault as InjectedFault).point).toBe(point);
      expect(applied).toHaveLength(effects);
      expect(faults.count(point)).toBe(1);
      const key = faults.fired[0]?.key ?? '';
      expect(key).toMatch(/^run-faults:effect:/);
      expect(await store.get(key)).toBeUndefined();
    },
  );

  it('a throw at before-record is a record write that never reached the store: the call succeeds, the record is pending', async () => {
    const store = new MemoryEffectStore();
    const { applied, resolved } = await callWith(new FaultInjector({ point: 'before-record' }), store);
    expect(applied).toEqual(['a']);
    expect(resolved?.report).toMatchObject({ outcome: 'executed', recordPending: true });
    expect(await store.get(resolved?.report.key ?? '')).toBeUndefined();
    expect(resolved?.unrecorded?.record).toMatchObject({ origin: 'executed', result: { id: 'a' } });
  });

  it('a throw at during-record is a record write whose answer was lost: the call succeeds, pending, yet the store has it', async () => {
    const store = new MemoryEffectStore();
    const { applied, resolved } = await callWith(new FaultInjector({ point: 'during-record' }), store);
    expect(applied).toEqual(['a']);
    expect(resolved?.report).toMatchObject({ outcome: 'executed', recordPending: true });
    expect(await store.get(resolved?.report.key ?? '')).toMatchObject({ origin: 'executed', result: { id: 'a' } });
  });

  it('the points strike in protocol order, each once, with the key, tool, attempt, ctx and input of the call', async () => {
    const seen: FaultHit[] = [];
    const faults = new FaultInjector(
      FAULT_POINTS.map((point) => ({ point, mode: (hit: FaultHit) => void seen.push(hit) })),
    );
    const { resolved } = await callWith(faults, new MemoryEffectStore(), 'b');
    expect(seen.map((hit) => hit.point)).toEqual(FAULT_POINTS);
    for (const hit of seen) {
      expect(hit).toMatchObject({ key: resolved?.report.key, toolName: 'effect', attempt: 1, toolInput: { id: 'b' } });
      expect(hit.ctx?.state).toEqual({ case: 'faults' });
    }
  });

  it('on a store without claims, before-store-read strikes before its get; the store stays without claims', async () => {
    const plain = new PlainStore();
    const faults = new FaultInjector({ point: 'before-store-read' });
    expect(hasClaims(faults.wrapStore(plain))).toBe(false);
    const { applied, error } = await callWith(faults, plain);
    expect((error as EffectStoreError).cause).toBeInstanceOf(InjectedFault);
    expect(plain.reads).toBe(0);
    expect(applied).toEqual([]);
    const retried = await callWith(new FaultInjector(), plain);
    expect(retried.resolved?.report.outcome).toBe('executed');
  });

  it('a kill at a point is a SIGKILL of the process at that point', async () => {
    const kills: Array<[number, string | number | undefined]> = [];
    const realKill = process.kill.bind(process);
    process.kill = (pid: number, signal?: string | number) => {
      kills.push([pid, signal]);
      return true;
    };
    try {
      const faults = new FaultInjector({ point: 'after-effect', mode: 'kill' });
      const called = callWith(faults, new MemoryEffectStore());
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(kills).toEqual([[process.pid, 'SIGKILL']]);
      void called;
    } finally {
      process.kill = realKill;
    }
  });

  it('store points strike only for keys the wrapped tools used; other calls and methods are the store itself', async () => {
    const inner = new MemoryEffectStore();
    const faults = new FaultInjector(
      FAULT_POINTS.map((point): { point: FaultPoint; times: number } => ({ point, times: Infinity })),
    );
    const store = faults.wrapStore(inner);
    await store.put('someone-else', { toolName: 'x', result: 1, origin: 'executed' });
    expect(await store.get('someone-else')).toMatchObject({ result: 1 });
    const claimed = await store.claim('another', { owner: 'o', leaseMs: 1000, toolName: 'x' });
    expect(claimed.status).toBe('acquired');
    expect(faults.fired).toEqual([]);
    expect(typeof store.prune).toBe('function');
    await expect(store.prune()).resolves.toBe(0);
  });

  it('a wrapped effect tool is still an effect tool; other tools come back as they are', () => {
    const faults = new FaultInjector();
    const { tool } = counted();
    const plain = { description: 'Reads.', inputSchema: z.object({}), execute: async () => 'read' };
    const wrapped = faults.wrapTools({ effect: tool, read: plain });
    expect(isEffectTool(wrapped.effect)).toBe(true);
    expect(wrapped.effect.description).toBe('Applies an effect.');
    expect(wrapped.read).toBe(plain);
  });

  it('a streaming execute streams through: after-effect strikes once its last value is out', async () => {
    const order: string[] = [];
    const stream = defineEffectTool({
      description: 'Streams.',
      inputSchema: z.object({}),
      execute: async function* () {
        order.push('effect');
        yield 'first';
        yield 'last';
      },
    });
    const faults = new FaultInjector({ point: 'after-effect', mode: () => void order.push('after-effect') });
    const chunks: unknown[] = [];
    const resolved = await applyEffect(
      { tool: faults.wrapTool('stream', stream), toolName: 'stream', input: {}, ctx, options },
      { store: new MemoryEffectStore(), logger: quiet },
      (chunk) => chunks.push(chunk),
    );
    expect(chunks).toEqual(['first', 'last']);
    expect(resolved.result).toBe('last');
    expect(order).toEqual(['effect', 'after-effect']);
  });

  it('wrapAgents wraps the tools of agents and of registrations, keeping the registration settings', () => {
    const faults = new FaultInjector();
    const { tool } = counted();
    const agent = defineAgent({
      name: 'a',
      model: scriptedModel([{ text: 'ok' }]),
      tools: { effect: tool },
      maxSteps: 3,
    });
    const [bare, registered] = faults.wrapAgents([agent, { agent, toolDefaults: { heartbeatTimeout: '1 second' } }]);
    const bareAgent = bare as typeof agent;
    expect(bareAgent.tools.effect).not.toBe(tool);
    expect(bareAgent.maxSteps).toBe(3);
    expect(registered).toMatchObject({ toolDefaults: { heartbeatTimeout: '1 second' } });
    expect((registered as { agent: typeof agent }).agent.tools.effect).not.toBe(tool);
  });
});

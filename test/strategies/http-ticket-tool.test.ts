import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EffectFenceRefusedError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { idempotentFetch } from '../../src/strategies/index.js';
import { createTicketTool, ticketEffectKey } from '../../examples/http/ticket-tool.js';
import { IdempotentTicketServer } from '../fixtures/idempotent-server.js';
import { attempt, crashAfterEffect } from './crash-after-effect.js';
import { runAttempt, startPausedAttempt, type AttemptSetup, type PausedAttempt } from './paused-attempt.js';

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('idempotentFetch against a server with Idempotency-Key semantics', () => {
  const api = new IdempotentTicketServer({ processingMs: 150 });
  beforeAll(() => api.start());
  afterAll(() => api.stop());

  it('sends the key; a repeat is replayed (2xx, success) and applies nothing', async () => {
    const before = api.tickets.length;
    const first = await idempotentFetch(`${api.url}/tickets`, post({ title: 'a' }), 'k-replay');
    const second = await idempotentFetch(`${api.url}/tickets`, post({ title: 'a' }), 'k-replay');
    expect(first.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(await first.json());
    expect(api.tickets.length).toBe(before + 1);
  });

  it('409 while the first request is in progress is retryable; 422 for a reused key is not', async () => {
    const slow = idempotentFetch(`${api.url}/tickets`, post({ title: 'slow' }), 'k-busy');
    await new Promise((r) => setTimeout(r, 30));
    await expect(idempotentFetch(`${api.url}/tickets`, post({ title: 'slow' }), 'k-busy')).rejects.toMatchObject({
      name: 'IdempotencyKeyInProgressError',
      retryable: true,
    });
    await slow;
    await expect(idempotentFetch(`${api.url}/tickets`, post({ title: 'other' }), 'k-busy')).rejects.toMatchObject({
      name: 'IdempotencyKeyReusedError',
      retryable: false,
    });
  });

  it('maps other errors by status and rejects a key that is no header value', async () => {
    await expect(idempotentFetch(`${api.url}/nowhere`, post({}), 'k-404')).rejects.toMatchObject({
      name: 'IdempotentRequestError',
      status: 404,
      retryable: false,
    });
    await expect(idempotentFetch(`${api.url}/tickets`, post({}), 'bad key\n')).rejects.toThrow(TypeError);
  });
});

describe('ticket tool (Idempotency-Key)', () => {
  const api = new IdempotentTicketServer();
  beforeAll(() => api.start());
  afterAll(() => api.stop());

  it('ticket created, answer lost: the retry with the same runId and store gets the replay (one ticket)', async () => {
    const store = new MemoryEffectStore();
    const tool = createTicketTool({ baseUrl: api.url });
    const input = { title: 'Disk full on db-1', priority: 'high' as const };
    api.dropNextResponse();
    await expect(attempt(tool, input, 'run-http-1', store)).rejects.toThrow();
    expect(api.tickets).toHaveLength(1);
    const retry = await attempt(tool, input, 'run-http-1', store);
    expect(retry.outcome).toBe('executed');
    expect(retry.result).toEqual({ id: 1, title: 'Disk full on db-1', priority: 'high' });
    expect(api.tickets).toHaveLength(1);
    expect(api.replays).toBe(1);
  });

  it('worker crash after the answer: same, one ticket', async () => {
    const store = new MemoryEffectStore();
    const tool = crashAfterEffect(createTicketTool({ baseUrl: api.url }));
    const input = { title: 'Cert expires', priority: 'normal' as const };
    await expect(attempt(tool, input, 'run-http-2', store)).rejects.toThrow('simulated worker crash');
    await attempt(tool, input, 'run-http-2', store);
    expect(api.tickets.filter((t) => t.title === 'Cert expires')).toHaveLength(1);
    expect(ticketEffectKey('run-http-2', input)).toMatch(/^run-http-2:ticket:[0-9a-f]{64}$/);
  });
});

describe('idempotentFetch with a fence header', () => {
  const api = new IdempotentTicketServer({ fenceHeader: 'Chamvi-Fence' });
  beforeAll(() => api.start());
  afterAll(() => api.stop());
  const fenced = (fence: number | undefined) => ({ fenceHeader: 'Chamvi-Fence', fence });

  it('sends the fence; a lower fence than one the API accepted for the key is EffectFenceRefusedError (retryable), applying nothing', async () => {
    const before = api.tickets.length;
    await idempotentFetch(`${api.url}/tickets`, post({ title: 'f' }), 'k-fence', fenced(2));
    const refused = await idempotentFetch(`${api.url}/tickets`, post({ title: 'f' }), 'k-fence', fenced(1)).catch(
      (e: unknown) => e,
    );
    expect(EffectFenceRefusedError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ retryable: true, fence: 1, key: 'k-fence' });
    expect((refused as Error).message).toContain('a newer attempt');
    // the same or a higher fence passes the check and gets the replay
    const again = await idempotentFetch(`${api.url}/tickets`, post({ title: 'f' }), 'k-fence', fenced(3));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(api.tickets.length).toBe(before + 1);
    expect(api.fenceRefusals).toBe(1);
  });

  it('an undefined fence (a store without claims) sends no fence header; a fence without fenceHeader or a bad one is a TypeError', async () => {
    await idempotentFetch(`${api.url}/tickets`, post({ title: 'g' }), 'k-nofence', fenced(5));
    const unfenced = await idempotentFetch(`${api.url}/tickets`, post({ title: 'g' }), 'k-nofence', fenced(undefined));
    expect(unfenced.headers.get('idempotent-replayed')).toBe('true'); // not refused: no fence was sent
    await expect(idempotentFetch(api.url, post({}), 'k', { fence: 1 })).rejects.toThrow(/needs fenceHeader/);
    await expect(idempotentFetch(api.url, post({}), 'k', { fenceHeader: 'bad header', fence: 1 })).rejects.toThrow(
      TypeError,
    );
    await expect(idempotentFetch(api.url, post({}), 'k', fenced(0))).rejects.toThrow(/not a fence number/);
  });
});

describe('a ticket attempt paused past its lease right before its request (two processes, one SQLite store)', () => {
  const LEASE = 400;
  let dir: string;
  let paused: PausedAttempt | undefined;
  let n = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chamvi-http-paused-'));
  });
  afterEach(() => paused?.kill());
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const setupFor = (api: IdempotentTicketServer, fenceHeader?: string): AttemptSetup => ({
    spec: { kind: 'http', baseUrl: api.url, ...(fenceHeader ? { fenceHeader } : {}) },
    storePath: join(dir, `store-${++n}.db`),
    leaseMs: LEASE,
    runId: `run-http-paused-${n}`,
    toolName: 'ticket',
    input: { title: 'Disk full on db-2', priority: 'high' },
  });

  /** A stops before its request, B takes the key over and opens the ticket, then `between` runs, then A goes on. */
  async function pausedThenLate(setup: AttemptSetup, between: () => void = () => undefined) {
    paused = await startPausedAttempt(setup);
    const b = await runAttempt(setup);
    expect(b.error).toBeUndefined();
    expect(b).toMatchObject({ ok: true, outcome: 'executed' });
    between();
    const a = await paused.resume();
    expect(a.fence).toBeLessThan(b.fence!);
    return { a, b };
  }

  it("its late request carries the same Idempotency-Key: the API replays the other attempt's ticket (one ticket)", async () => {
    const api = await new IdempotentTicketServer().start();
    try {
      const { a, b } = await pausedThenLate(setupFor(api));
      expect(api.posts).toBe(2); // A's request really reached the API, after B's
      expect(a.writes).toEqual([{ status: 201, replayed: true }]);
      expect(api.replays).toBe(1);
      expect(api.tickets).toHaveLength(1);
      expect(a).toMatchObject({ ok: true, result: b.result });
    } finally {
      await api.stop();
    }
  }, 60_000);

  it('with fenceHeader, its late request is refused by the fence even after the API forgot the key (412, one ticket)', async () => {
    const api = await new IdempotentTicketServer({ fenceHeader: 'Chamvi-Fence' }).start();
    try {
      const { a } = await pausedThenLate(setupFor(api, 'Chamvi-Fence'), () => api.expireIdempotencyKeys());
      expect(api.posts).toBe(2);
      expect(api.fenceRefusals).toBe(1);
      expect(api.tickets).toHaveLength(1);
      expect(a.writes).toEqual([{ status: 412, replayed: false }]);
      expect(a).toMatchObject({ ok: false, error: { name: 'EffectFenceRefusedError' } });
    } finally {
      await api.stop();
    }
  }, 60_000);

  it("without a fence, its late request after the API forgot the key opens a second ticket: the key's retention bounds the guarantee", async () => {
    const api = await new IdempotentTicketServer().start();
    try {
      const { a } = await pausedThenLate(setupFor(api), () => api.expireIdempotencyKeys());
      expect(a.writes).toEqual([{ status: 201, replayed: false }]);
      expect(api.tickets).toHaveLength(2);
    } finally {
      await api.stop();
    }
  }, 60_000);
});

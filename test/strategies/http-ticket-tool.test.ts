import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { idempotentFetch, MemoryEffectStore } from '../../src/index.js';
import { createTicketTool, ticketEffectKey } from '../../examples/http/ticket-tool.js';
import { IdempotentTicketServer } from '../../testing/http/idempotent-server.js';
import { attempt, crashAfterEffect } from './crash-after-effect.js';

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

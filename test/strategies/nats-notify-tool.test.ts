import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { publishOnce } from '../../src/strategies/index.js';
import { createNatsNotifyTool } from '../../examples/nats/notify-tool.js';
import { attempt, crashAfterEffect } from './crash-after-effect.js';
import { runAttempt, startPausedAttempt, type PausedAttempt } from './paused-attempt.js';

const NATS_URL = process.env.NATS_URL ?? '127.0.0.1:4222';

describe('NATS JetStream notification (Nats-Msg-Id = effect key)', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const id = randomUUID().slice(0, 8);
  const stream = `CHAMVI_TEST_${id}`;
  const subject = `chamvi.test.${id}.notify`;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`chamvi.test.${id}.>`], duplicate_window: 60_000_000_000 });
  });
  afterAll(async () => {
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  const messages = async () => (await jsm.streams.info(stream)).state.messages;

  it('publishOnce: a repeat of the message id is acknowledged as duplicate and not stored', async () => {
    const js = nc.jetstream();
    const data = new TextEncoder().encode('x');
    const first = await publishOnce(js, subject, data, 'once-key');
    const second = await publishOnce(js, subject, data, 'once-key');
    expect(first.status).toBe('published');
    expect(second).toEqual({ status: 'duplicate', stream, seq: first.seq });
    expect(await messages()).toBe(1);
  });

  it('worker crash after the publish: the retry with the same runId and store is a duplicate (one message)', async () => {
    const before = await messages();
    const store = new MemoryEffectStore();
    const tool = crashAfterEffect(createNatsNotifyTool({ jetstream: async () => nc.jetstream(), subject }));
    const input = { text: 'db-1 is down', severity: 'critical' as const };
    await expect(attempt(tool, input, 'run-nats-1', store)).rejects.toThrow('simulated worker crash');
    const retry = await attempt(tool, input, 'run-nats-1', store);
    expect(retry.outcome).toBe('executed');
    expect(retry.result).toMatchObject({ status: 'duplicate', stream });
    expect(await messages()).toBe(before + 1);
    const again = await attempt(tool, input, 'run-nats-1', store);
    expect(again.outcome).toBe('recorded');
    expect(await messages()).toBe(before + 1);
  });
});

describe('JetStream duplicate_window: what bounds the guarantee', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let dir: string;
  let paused: PausedAttempt | undefined;
  const streams: string[] = [];
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    jsm = await nc.jetstreamManager();
    dir = await mkdtemp(join(tmpdir(), 'chamvi-nats-paused-'));
  });
  afterEach(() => paused?.kill());
  afterAll(async () => {
    for (const name of streams) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A fresh stream capturing `chamvi.test.<id>.>` with this duplicate window. */
  async function streamWith(windowMs: number) {
    const id = randomUUID().slice(0, 8);
    const name = `CHAMVI_DUP_${id}`;
    streams.push(name);
    await jsm.streams.add({ name, subjects: [`chamvi.test.${id}.>`], duplicate_window: windowMs * 1_000_000 });
    return {
      name,
      subject: `chamvi.test.${id}.notify`,
      messages: async () => (await jsm.streams.info(name)).state.messages,
    };
  }

  const setupFor = (subject: string, n: string) => ({
    spec: { kind: 'nats' as const, servers: NATS_URL, subject },
    storePath: join(dir, `store-${n}.db`),
    leaseMs: 400,
    runId: `run-nats-paused-${n}`,
    toolName: 'notify',
    input: { text: 'db-2 is down', severity: 'critical' },
  });

  it('an attempt paused past its lease before its publish publishes late within the window: a duplicate, one message', async () => {
    const stream = await streamWith(60_000);
    const setup = setupFor(stream.subject, 'within');
    paused = await startPausedAttempt(setup);
    const b = await runAttempt(setup);
    expect(b.error).toBeUndefined();
    expect(b).toMatchObject({ ok: true, outcome: 'executed', result: { status: 'published' } });
    const a = await paused.resume();
    expect(a.fence).toBeLessThan(b.fence!);
    const seq = (b.result as { seq: number }).seq;
    expect(a.writes).toEqual([{ duplicate: true, seq }]); // A did publish, late, and the stream dropped it
    expect(a).toMatchObject({ ok: true, result: b.result }); // and A answers with B's recorded result
    expect(await stream.messages()).toBe(1);
  }, 60_000);

  it('a late publish after the window (counted from the first message) is stored a second time: the window bounds the guarantee', async () => {
    const stream = await streamWith(1_000);
    const setup = setupFor(stream.subject, 'after');
    paused = await startPausedAttempt(setup);
    const b = await runAttempt(setup);
    expect(b.error).toBeUndefined();
    expect(b).toMatchObject({ ok: true, result: { status: 'published' } });
    await sleep(1_300);
    const a = await paused.resume();
    expect(a.writes).toEqual([{ duplicate: false, seq: 2 }]);
    expect(await stream.messages()).toBe(2);
  }, 60_000);

  it('the window runs from the first message (a duplicate does not extend it), ids count per stream across subjects, a purge does not reset them', async () => {
    const stream = await streamWith(1_000);
    const js = nc.jetstream();
    const data = new TextEncoder().encode('x');
    const other = stream.subject.replace(/notify$/, 'other');
    expect((await publishOnce(js, stream.subject, data, 'k-window')).status).toBe('published');
    await sleep(600);
    expect((await publishOnce(js, other, data, 'k-window')).status).toBe('duplicate'); // another subject, same stream
    await jsm.streams.purge(stream.name);
    expect((await publishOnce(js, stream.subject, data, 'k-window')).status).toBe('duplicate'); // purged, still known
    await sleep(600); // 1.2 s after the first message, 0.6 s after the last duplicate
    expect((await publishOnce(js, stream.subject, data, 'k-window')).status).toBe('published');
  }, 30_000);
});

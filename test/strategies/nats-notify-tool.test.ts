import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { MemoryEffectStore, publishOnce } from '../../src/index.js';
import { createNatsNotifyTool } from '../../examples/nats/notify-tool.js';
import { attempt, crashAfterEffect } from './crash-after-effect.js';

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

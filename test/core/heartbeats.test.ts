// How an activity of this library heartbeats (activities/activity-context.ts, keepHeartbeating):
// every third of the heartbeat timeout while it runs, and not at its start, so a short attempt
// costs no heartbeat round trip to the server.
import { describe, expect, it } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { keepHeartbeating } from '../../activities/activity-context.js';

/** Runs `ms` of work inside an activity that heartbeats; resolves with when each heartbeat came, in ms from the start. */
async function heartbeatsOf(ms: number, heartbeatTimeoutMs: number): Promise<number[]> {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs });
  const started = performance.now();
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(performance.now() - started));
  await env.run(async () => {
    const stop = keepHeartbeating();
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      stop();
    }
  });
  return beats;
}

describe('activity heartbeats', () => {
  it('an attempt shorter than a third of the heartbeat timeout sends no heartbeat', async () => {
    expect(await heartbeatsOf(30, 600)).toEqual([]);
  });

  it('a long attempt heartbeats every third of the heartbeat timeout, the first a third in', async () => {
    const beats = await heartbeatsOf(1_000, 600);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    // A timer fires late on a loaded machine, never early.
    expect(beats[0]).toBeGreaterThanOrEqual(190);
    const gaps = beats.map((at, i) => at - (beats[i - 1] ?? 0));
    for (const gap of gaps) expect(gap).toBeLessThan(600);
  });

  it('no heartbeat follows the stop', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 300 });
    let beats = 0;
    env.on('heartbeat', () => beats++);
    await env.run(async () => {
      keepHeartbeating()();
      await new Promise((resolve) => setTimeout(resolve, 350));
    });
    expect(beats).toBe(0);
  });
});

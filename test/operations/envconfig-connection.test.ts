import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { createAgentClient, resolveTemporalConnection } from '../../worker/connection-settings.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { noter } from '../product/fixtures/note-agents.js';
import { runCli } from '../product/run-cli.js';

// A namespace other than `default`, so a connection that ignored the profile would miss it.
const NAMESPACE = 'ops-profile';

let env: TestWorkflowEnvironment;
let dir: string;
let configFile: string;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `envconfig-${randomUUID()}`;

beforeAll(async () => {
  env = await createDevServerEnvironment({ namespace: NAMESPACE });
  dir = mkdtempSync(join(tmpdir(), 'chamvi-envconfig-'));
  configFile = join(dir, 'temporal.toml');
  writeFileSync(
    configFile,
    [
      '[profile.default]',
      'address = "127.0.0.1:1"',
      'namespace = "nowhere"',
      '',
      '[profile.local]',
      `address = "${env.address}"`,
      `namespace = "${NAMESPACE}"`,
      '',
    ].join('\n'),
  );
  worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: NAMESPACE,
    taskQueue,
    agents: [noter],
    store: new MemoryEffectStore(),
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  if (worker !== undefined) {
    worker.shutdown();
    await running;
  }
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe('connections from @temporalio/envconfig profiles', () => {
  it('resolveTemporalConnection reads the named profile of a TOML file; TEMPORAL_ADDRESS and explicit settings win over it', () => {
    const fromProfile = resolveTemporalConnection({ profile: 'local', configFile, env: {} });
    expect(fromProfile).toMatchObject({ address: env.address, namespace: NAMESPACE });
    const fromEnv = resolveTemporalConnection({
      configFile,
      env: { TEMPORAL_PROFILE: 'local', TEMPORAL_ADDRESS: '127.0.0.1:2' },
    });
    expect(fromEnv).toMatchObject({ address: '127.0.0.1:2', namespace: NAMESPACE });
    const explicit = resolveTemporalConnection({ profile: 'local', configFile, env: {}, namespace: 'other' });
    expect(explicit).toMatchObject({ address: env.address, namespace: 'other' });
    const none = resolveTemporalConnection({ env: { HOME: dir, XDG_CONFIG_HOME: dir } });
    expect(none).toMatchObject({ address: 'localhost:7233', namespace: 'default' });
  });

  it('a profile with an API key turns TLS on (as Temporal Cloud needs) and sends the key', () => {
    const cloudFile = join(dir, 'cloud.toml');
    writeFileSync(
      cloudFile,
      [
        '[profile.cloud]',
        'address = "my-ns.a1b2c.tmprl.cloud:7233"',
        'namespace = "my-ns.a1b2c"',
        'api_key = "k-123"',
        '',
      ].join('\n'),
    );
    const cloud = resolveTemporalConnection({ profile: 'cloud', configFile: cloudFile, env: {} });
    expect(cloud.connectionOptions).toMatchObject({
      address: 'my-ns.a1b2c.tmprl.cloud:7233',
      apiKey: 'k-123',
      tls: true,
    });
    expect(cloud.namespace).toBe('my-ns.a1b2c');
  });

  it('createAgentClient connects with the profile and runs an agent in its namespace', async () => {
    const client = await createAgentClient({ profile: 'local', configFile, env: {} });
    try {
      expect(client.options.namespace).toBe(NAMESPACE);
      const handle = await startAgentRun(client, { agent: 'noter', prompt: 'note it', taskQueue });
      expect((await handle.result()).text).toBe('Noted.');
    } finally {
      await client.connection.close();
    }
  }, 30_000);

  it('chamvi run --profile connects through the TOML file named by TEMPORAL_CONFIG_FILE', async () => {
    const run = await runCli(
      ['run', 'noter', '--prompt', 'note it', '--wait', '--profile', 'local', '--task-queue', taskQueue],
      {
        TEMPORAL_CONFIG_FILE: configFile,
      },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Noted.');
    // The file's default profile points nowhere: without --profile the CLI would use it and say so.
    const wrong = await runCli(['run', 'noter', '--prompt', 'x', '--task-queue', taskQueue], {
      TEMPORAL_CONFIG_FILE: configFile,
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('127.0.0.1:1');
  }, 60_000);

  it('createAgentWorker connects with a profile when it is given no connection', async () => {
    const queue = `envconfig-worker-${randomUUID()}`;
    const profiled = await createAgentWorker({
      profile: 'local',
      configFile,
      taskQueue: queue,
      agents: [noter],
      store: new MemoryEffectStore(),
    });
    await profiled.runUntil(async () => {
      const handle = await env.client.workflow.start('agentWorkflow', {
        taskQueue: queue,
        workflowId: `envconfig-${randomUUID()}`,
        args: [{ agent: 'noter', prompt: 'note it' }],
      });
      expect(((await handle.result()) as { text: string }).text).toBe('Noted.');
    });
  }, 60_000);
});

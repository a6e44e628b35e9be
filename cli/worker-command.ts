import { parseStoreSpec } from '../src/stores/store-spec.js';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { createAgentWorker } from '../worker/index.js';
import { loadAgents } from './agent-module.js';
import { loadDataConverter } from './data-converter-flag.js';
import { WORKER_HELP } from './help.js';
import { parseFlags, TEMPORAL_OPTIONS } from './flags.js';
import { ENV, setting, temporalSettings } from './settings.js';
import { openStore } from './store-flag.js';
import { checkStreamSpec } from './stream-flag.js';
import { CONNECT_TIMEOUT_MS, unreachable } from './temporal-connection.js';
import { UsageError } from './usage-error.js';

function describeStore(spec: string): string {
  const parsed = parseStoreSpec(spec);
  if (parsed.kind === 'postgres') {
    const url = new URL(parsed.url);
    return `postgres ${url.hostname}:${url.port || '5432'}${url.pathname}`;
  }
  return parsed.kind === 'sqlite' ? `sqlite ${parsed.path}` : parsed.kind;
}

export async function workerCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(
    'worker',
    args,
    { ...TEMPORAL_OPTIONS, agents: { type: 'string' }, store: { type: 'string' }, stream: { type: 'string' } },
    0,
  );
  if (values.help) {
    process.stdout.write(`${WORKER_HELP}\n`);
    return 0;
  }
  const agentsModule = setting(values.agents, ENV.agents);
  if (agentsModule === undefined)
    throw new UsageError(`worker: --agents is required (or set ${ENV.agents}) (see chamvi worker --help)`);
  const { address, namespace, taskQueue, connectionOptions } = temporalSettings(values);
  const dataConverter = await loadDataConverter('worker', values['data-converter']);
  const store = await openStore('worker', values.store);
  // `store` (the word) streams to where the effects go: one place to configure.
  const streamSpec = setting(values.stream, ENV.stream);
  const stream = streamSpec === 'store' ? setting(values.store, ENV.store) : streamSpec;
  if (stream !== undefined) checkStreamSpec('worker', stream);
  try {
    const agents = await loadAgents('worker', agentsModule);
    const connection = await connectWorker(address, connectionOptions);
    try {
      const worker = await createAgentWorker({
        connection,
        namespace,
        taskQueue,
        agents,
        store,
        ...(stream !== undefined ? { stream } : {}),
        ...(dataConverter !== undefined ? { workerOptions: { dataConverter } } : {}),
      });
      const names = agents.map((a) =>
        'agent' in a && typeof a.agent === 'object' ? a.agent.name : (a as { name: string }).name,
      );
      process.stdout.write(
        `chamvi worker: task queue "${taskQueue}" at ${address} (namespace ${namespace}); agents: ${names.join(', ')}; ` +
          `effect store: ${describeStore(setting(values.store, ENV.store) ?? '')}` +
          `${stream !== undefined ? `; run stream: ${describeStore(stream)}` : ''}\nready\n`,
      );
      await worker.run();
      process.stdout.write('chamvi worker: stopped\n');
    } finally {
      await connection.close();
    }
  } finally {
    await store.close();
  }
  return 0;
}

/** A worker connection to `address` (TLS, API key from the profile); an unreachable server is a {@link UsageError}. */
export async function connectWorker(
  address: string,
  connectionOptions: NativeConnectionOptions = {},
): Promise<NativeConnection> {
  const connecting = NativeConnection.connect({ ...connectionOptions, address });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([connecting, timeout]);
  } catch (error) {
    connecting
      .then(
        (c) => c.close(),
        () => undefined,
      )
      .catch(() => undefined);
    throw unreachable(address, error);
  } finally {
    clearTimeout(timer);
  }
}
